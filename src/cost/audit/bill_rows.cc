#include "cost/audit/bill_rows.h"

#include <charconv>
#include <cstdio>

#include "cost/numbers.h"

namespace tf::cost {
namespace {

// Legacy CUR header names, and their CUR 2.0 counterparts, in the order the writer emits them.
constexpr std::pair<std::string_view, std::string_view> kColumns[] = {
    {"identity/LineItemId", "identity_line_item_id"},
    {"identity/TimeInterval", "identity_time_interval"},
    {"bill/BillType", "bill_bill_type"},
    {"bill/PayerAccountId", "bill_payer_account_id"},
    {"bill/BillingPeriodStartDate", "bill_billing_period_start_date"},
    {"bill/BillingPeriodEndDate", "bill_billing_period_end_date"},
    {"lineItem/UsageAccountId", "line_item_usage_account_id"},
    {"lineItem/LineItemType", "line_item_line_item_type"},
    {"lineItem/UsageStartDate", "line_item_usage_start_date"},
    {"lineItem/UsageEndDate", "line_item_usage_end_date"},
    {"lineItem/ProductCode", "line_item_product_code"},
    {"lineItem/UsageType", "line_item_usage_type"},
    {"lineItem/Operation", "line_item_operation"},
    {"lineItem/AvailabilityZone", "line_item_availability_zone"},
    {"lineItem/ResourceId", "line_item_resource_id"},
    {"lineItem/UsageAmount", "line_item_usage_amount"},
    {"lineItem/CurrencyCode", "line_item_currency_code"},
    {"lineItem/UnblendedRate", "line_item_unblended_rate"},
    {"lineItem/UnblendedCost", "line_item_unblended_cost"},
    {"lineItem/BlendedRate", "line_item_blended_rate"},
    {"lineItem/BlendedCost", "line_item_blended_cost"},
    {"lineItem/LineItemDescription", "line_item_line_item_description"},
    {"product/productFamily", "product_product_family"},
    {"product/region", "product_region_code"},
    {"product/instanceType", "product_instance_type"},
    {"product/servicecode", "product_servicecode"},
    {"pricing/unit", "pricing_unit"},
    {"pricing/publicOnDemandCost", "pricing_public_on_demand_cost"},
    {"pricing/publicOnDemandRate", "pricing_public_on_demand_rate"},
    {"pricing/term", "pricing_term"},
    {"resourceTags/user:cluster", "resource_tags"},
};

void Number(double v, int decimals, std::string* out) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::fixed, decimals);
  if (ec != std::errc()) end = buf + std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  // Trailing zeros say nothing; CUR writes numbers as short as they can be.
  char* last = end;
  while (last > buf && last[-1] == '0') --last;
  if (last > buf && last[-1] == '.') --last;
  out->append(buf, last);
}

void Hex(uint64_t v, int digits, std::string* out) {
  static constexpr char kDigits[] = "0123456789abcdef";
  for (int i = digits - 1; i >= 0; --i) out->push_back(kDigits[(v >> (4 * i)) & 15]);
}

}  // namespace

uint64_t SplitMix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

BillRowWriter::BillRowWriter(bool cur2, int64_t period_start, int64_t period_end) : cur2_(cur2) {
  for (const auto& [legacy, snake] : kColumns) {
    if (!header_.empty()) header_ += ',';
    header_ += cur2 ? snake : legacy;
  }
  if (cur2) header_ += ",bill_payer_account_name,line_item_usage_account_name";
  header_ += '\n';
  period_ = FormatUtcTime(period_start) + "," + FormatUtcTime(period_end);
}

void BillRowWriter::Append(const BillRow& row, std::string* out) {
  if (row.start != cached_start_) {
    cached_start_ = row.start;
    start_text_ = FormatUtcTime(row.start);
  }
  if (row.end != cached_end_) {
    cached_end_ = row.end;
    end_text_ = FormatUtcTime(row.end);
  }
  ++serial_;
  // identity/LineItemId: opaque, unique per row.
  Hex(SplitMix64(serial_), 16, out);
  Hex(SplitMix64(serial_ ^ 0x5bd1e995), 16, out);
  Hex(SplitMix64(serial_ + 7), 16, out);
  *out += ',';
  *out += start_text_;
  *out += '/';
  *out += end_text_;
  *out += ",Anniversary,123456789012,";
  *out += period_;
  *out += ",210987654321,";
  *out += row.line_item_type;
  *out += ',';
  *out += row.corrupt == 2 ? std::string_view("2026-13-01T00:00:00Z") : start_text_;
  *out += ',';
  *out += end_text_;
  *out += ",AmazonEC2,";
  *out += row.usage_type;
  *out += ',';
  *out += row.operation;
  *out += ',';
  *out += row.zone;
  *out += ',';
  *out += row.resource_id;
  *out += ',';
  if (row.corrupt == 1) {
    *out += "1.0.0";
  } else {
    Number(row.usage, 8, out);
  }
  *out += ",USD,";
  Number(row.rate, 8, out);
  *out += ',';
  Number(row.cost, 10, out);
  *out += ',';
  Number(row.rate, 8, out);
  *out += ',';
  Number(row.cost, 10, out);
  *out += ',';
  *out += row.description;
  *out += ',';
  *out += row.family;
  *out += ",us-east-1,";
  *out += row.instance_type;
  *out += ",AmazonEC2,";
  *out += row.unit;
  *out += ',';
  Number(row.public_rate * row.usage, 10, out);
  *out += ',';
  Number(row.public_rate, 8, out);
  *out += ',';
  *out += row.term;
  if (row.corrupt != 3) {
    *out += ',';
    if (row.cluster.empty()) {
      // nothing: no tags
    } else if (cur2_) {
      *out += "\"{\"\"user_cluster\"\":\"\"";
      *out += row.cluster;
      *out += "\"\"}\"";
    } else {
      *out += row.cluster;
    }
  }
  if (cur2_) *out += ",example-payer,ml-research";
  *out += '\n';
}

}  // namespace tf::cost
