#include "cost/audit/cur_columns.h"

#include <cctype>

namespace tf::cost {
namespace {

constexpr std::array<std::string_view, static_cast<int>(CurColumn::kCount)> kNames = {
    "line_item_line_item_type",
    "line_item_usage_type",
    "line_item_operation",
    "line_item_product_code",
    "line_item_resource_id",
    "line_item_availability_zone",
    "line_item_usage_amount",
    "line_item_unblended_rate",
    "line_item_unblended_cost",
    "line_item_usage_start_date",
    "line_item_usage_end_date",
    "product_instance_type",
    "product_region_code",
    "product_region",
    "pricing_term",
    "resource_tags",
    "savings_plan_savings_plan_effective_cost",
};

// The legacy spelling of a snake-case name, for error messages: line_item_usage_type ->
// lineItem/UsageType.
std::string LegacyName(std::string_view snake) {
  struct Prefix {
    std::string_view snake, legacy;
  };
  static constexpr Prefix kPrefixes[] = {{"line_item_", "lineItem/"},
                                         {"product_", "product/"},
                                         {"pricing_", "pricing/"},
                                         {"resource_tags", "resourceTags"}};
  for (const auto& p : kPrefixes) {
    if (snake.substr(0, p.snake.size()) != p.snake) continue;
    std::string out(p.legacy);
    bool upper = p.legacy.back() == '/';
    bool first = true;
    for (char c : snake.substr(p.snake.size())) {
      if (c == '_') {
        upper = true;
        continue;
      }
      // Fields under lineItem/ start with a capital; product/ and pricing/ ones do not.
      bool cap = upper && !(first && p.snake != "line_item_");
      out += cap ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
      first = false;
    }
    return out;
  }
  return std::string(snake);
}

}  // namespace

std::string_view CurColumnName(CurColumn c) { return kNames[static_cast<int>(c)]; }

std::string NormalizeCurHeader(std::string_view header) {
  std::string out;
  out.reserve(header.size() + 8);
  bool start = true;  // at the start of a word: no underscore before a capital
  for (char c : header) {
    if (c == '/' || c == ':' || c == '_' || c == ' ' || c == '-' || c == '.') {
      if (!out.empty() && out.back() != '_') out += '_';
      start = true;
      continue;
    }
    if (std::isupper(static_cast<unsigned char>(c))) {
      if (!start && !out.empty() && out.back() != '_') out += '_';
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else {
      out += c;
    }
    start = false;
  }
  return out;
}

const std::vector<CurColumn>& RequiredCurColumns() {
  static const std::vector<CurColumn> kRequired = {CurColumn::kLineItemType, CurColumn::kUsageType,
                                                   CurColumn::kUsageAmount,
                                                   CurColumn::kUnblendedCost};
  return kRequired;
}

Result<CurLayout> MapCurHeader(const std::vector<std::string_view>& header,
                               std::string_view cluster_tag) {
  CurLayout layout;
  layout.index.fill(-1);
  layout.fields = header.size();
  bool legacy = false;
  std::string tag_column = "resource_tags_user_" + NormalizeCurHeader(cluster_tag);
  for (size_t i = 0; i < header.size(); ++i) {
    std::string_view h = header[i];
    if (i == 0 && h.substr(0, 3) == "\xEF\xBB\xBF") h.remove_prefix(3);  // UTF-8 BOM
    if (h.find('/') != std::string_view::npos) legacy = true;
    std::string name = NormalizeCurHeader(h);
    if (name == tag_column && layout.cluster_tag < 0) {
      layout.cluster_tag = static_cast<int>(i);
      continue;
    }
    for (size_t c = 0; c < kNames.size(); ++c) {
      if (name == kNames[c] && layout.index[c] < 0) layout.index[c] = static_cast<int>(i);
    }
  }
  layout.format = legacy ? "legacy CUR" : "CUR 2.0";
  std::string missing;
  for (CurColumn c : RequiredCurColumns()) {
    if (layout.has(c)) continue;
    if (!missing.empty()) missing += ", ";
    missing += std::string(CurColumnName(c)) + " (" + LegacyName(CurColumnName(c)) + ")";
  }
  if (!missing.empty()) return InvalidArgument("missing required column(s): " + missing);
  return layout;
}

}  // namespace tf::cost
