#include "cost/budgets/budget.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

namespace tf::cost {
namespace {

using Json = nlohmann::json;

constexpr double kMaxAmount = 1e12;
constexpr size_t kMaxThresholds = 20;
constexpr size_t kMaxWebhookLength = 2048;

const std::set<std::string> kFields = {"amount",     "period", "start",
                                       "thresholds", "action", "webhook"};

Status FieldError(const std::string& field, const std::string& what) {
  return InvalidArgument("budget field '" + field + "' " + what);
}

// "budget field 'period': period must be monthly, ..."
Status FieldProblem(const std::string& field, const Status& problem) {
  return InvalidArgument("budget field '" + field + "': " + problem.message());
}

}  // namespace

const char* BudgetActionName(BudgetAction action) {
  switch (action) {
    case BudgetAction::kNotify:
      return "notify";
    case BudgetAction::kRefuseSubmissions:
      return "refuse-submissions";
    case BudgetAction::kStopSpot:
      return "stop-spot";
  }
  return "notify";
}

Result<BudgetAction> ParseBudgetAction(std::string_view text) {
  for (BudgetAction a :
       {BudgetAction::kNotify, BudgetAction::kRefuseSubmissions, BudgetAction::kStopSpot}) {
    if (text == BudgetActionName(a)) return a;
  }
  return InvalidArgument("action must be notify, refuse-submissions or stop-spot, got '" +
                         std::string(text) + "'");
}

Json BudgetToJson(const Budget& b) {
  Json j = {{"amount", b.amount},
            {"period", PeriodName(b.period)},
            {"thresholds", Json::array()},
            {"action", BudgetActionName(b.action)}};
  if (b.period.kind == PeriodKind::kDays) j["start"] = FormatUtcDate(b.period.start);
  for (double t : b.thresholds) {
    if (t != kExhaustedPercent) j["thresholds"].push_back(t);
  }
  if (!b.webhook.empty()) j["webhook"] = b.webhook;
  return j;
}

Result<Budget> BudgetFromJson(const Json& json, TimeMs created_at) {
  if (!json.is_object()) return InvalidArgument("a budget must be a JSON object");
  for (const auto& [key, value] : json.items()) {
    if (!kFields.count(key)) {
      return InvalidArgument("unknown budget field '" + key +
                             "' (expected amount, period, start, thresholds, action, webhook)");
    }
  }
  Budget b;

  auto amount = json.find("amount");
  if (amount == json.end()) return FieldError("amount", "is required (dollars per period)");
  if (!amount->is_number()) return FieldError("amount", "must be a number of dollars");
  b.amount = amount->get<double>();
  if (!std::isfinite(b.amount) || b.amount <= 0 || b.amount > kMaxAmount) {
    return FieldError("amount",
                      "must be more than 0 and at most 1e12 dollars, got " + amount->dump());
  }

  if (auto period = json.find("period"); period != json.end()) {
    if (!period->is_string()) return FieldError("period", "must be a string such as \"monthly\"");
    auto parsed = ParsePeriod(period->get<std::string>());
    if (!parsed.ok()) return FieldProblem("period", parsed.status());
    b.period = *parsed;
  }
  if (auto start = json.find("start"); start != json.end()) {
    if (b.period.kind != PeriodKind::kDays) {
      return FieldError("start", "applies only to a period of N days such as \"30d\"");
    }
    if (!start->is_string()) return FieldError("start", "must be a date YYYY-MM-DD");
    auto date = ParseUtcDate(start->get<std::string>());
    if (!date.ok()) return FieldProblem("start", date.status());
    b.period.start = *date;
  } else if (b.period.kind == PeriodKind::kDays) {
    b.period.start = StartOfUtcDay(created_at);
  }

  if (auto thresholds = json.find("thresholds"); thresholds != json.end()) {
    if (!thresholds->is_array()) {
      return FieldError("thresholds", "must be an array of percentages such as [50, 80, 90]");
    }
    if (thresholds->size() > kMaxThresholds) {
      return FieldError("thresholds",
                        "may hold at most " + std::to_string(kMaxThresholds) + " percentages");
    }
    b.thresholds.clear();
    for (size_t i = 0; i < thresholds->size(); ++i) {
      const Json& t = (*thresholds)[i];
      std::string where = "thresholds[" + std::to_string(i) + "]";
      if (!t.is_number()) return FieldError(where, "must be a number (percent of the amount)");
      double v = t.get<double>();
      if (!std::isfinite(v) || v <= 0 || v > kExhaustedPercent) {
        return FieldError(where, "must be more than 0 and at most 100 (percent), got " + t.dump());
      }
      b.thresholds.push_back(v);
    }
    b.thresholds.push_back(kExhaustedPercent);
    std::sort(b.thresholds.begin(), b.thresholds.end());
    b.thresholds.erase(std::unique(b.thresholds.begin(), b.thresholds.end()), b.thresholds.end());
  }

  if (auto action = json.find("action"); action != json.end()) {
    if (!action->is_string()) return FieldError("action", "must be a string");
    auto parsed = ParseBudgetAction(action->get<std::string>());
    if (!parsed.ok()) return FieldProblem("action", parsed.status());
    b.action = *parsed;
  }

  if (auto webhook = json.find("webhook"); webhook != json.end() && !webhook->is_null()) {
    if (!webhook->is_string()) return FieldError("webhook", "must be a URL string");
    b.webhook = webhook->get<std::string>();
    if (!b.webhook.empty()) {
      Status st = CheckWebhookUrl(b.webhook);
      if (!st.ok()) return FieldProblem("webhook", st);
    }
  }
  return b;
}

Status CheckWebhookAllowed(std::string_view url, const std::vector<std::string>& allowed) {
  if (allowed.empty() || url.empty()) return OkStatus();
  std::string base, target;
  SplitWebhookUrl(url, &base, &target);
  std::string authority = base.substr(std::string_view("http://").size());
  for (char& c : authority) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  // The host without its port ("[::1]:81" -> "[::1]").
  std::string host = authority;
  size_t colon = host.rfind(':'), bracket = host.rfind(']');
  if (colon != std::string::npos && (bracket == std::string::npos || colon > bracket)) {
    host.resize(colon);
  }
  std::string list;
  for (const std::string& entry : allowed) {
    std::string e = entry;
    for (char& c : e) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (e == authority || e == host) return OkStatus();
    list += (list.empty() ? "" : ", ") + entry;
  }
  return InvalidArgument("webhooks may go only to " + list + " (the server's --webhook-hosts); '" +
                         host + "' is not one of them");
}

Status CheckWebhookUrl(std::string_view url) {
  constexpr std::string_view kScheme = "http://";
  if (url.size() > kMaxWebhookLength) {
    return InvalidArgument("a webhook URL may be at most " + std::to_string(kMaxWebhookLength) +
                           " characters");
  }
  if (url.substr(0, 8) == "https://") {
    return InvalidArgument(
        "https webhooks are not supported; use http:// (for example a relay "
        "on the same network): '" +
        std::string(url) + "'");
  }
  if (url.substr(0, kScheme.size()) != kScheme) {
    return InvalidArgument("a webhook URL must start with http://, got '" + std::string(url) + "'");
  }
  for (char c : url) {
    if (static_cast<unsigned char>(c) <= ' ' || c == 0x7f) {
      return InvalidArgument("a webhook URL may not hold spaces or control characters");
    }
  }
  std::string_view rest = url.substr(kScheme.size());
  std::string_view authority = rest.substr(0, rest.find_first_of("/?"));
  if (authority.empty() || authority.front() == ':') {
    return InvalidArgument("a webhook URL must name a host: '" + std::string(url) + "'");
  }
  if (authority.find('@') != std::string_view::npos) {
    return InvalidArgument("a webhook URL may not hold credentials (user@host)");
  }
  size_t colon = authority.rfind(':');
  size_t bracket = authority.rfind(']');
  if (colon != std::string_view::npos && (bracket == std::string_view::npos || colon > bracket)) {
    std::string_view port = authority.substr(colon + 1);
    int value = 0;
    bool digits =
        !port.empty() && port.size() <= 5 &&
        std::all_of(port.begin(), port.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits) value = std::stoi(std::string(port));
    if (!digits || value < 1 || value > 65535) {
      return InvalidArgument("a webhook URL's port must be 1-65535: '" + std::string(url) + "'");
    }
  }
  return OkStatus();
}

void SplitWebhookUrl(std::string_view url, std::string* base, std::string* target) {
  constexpr size_t kSchemeLength = 7;  // "http://"
  size_t path = url.find_first_of("/?", kSchemeLength);
  if (path == std::string_view::npos) {
    *base = std::string(url);
    *target = "/";
    return;
  }
  *base = std::string(url.substr(0, path));
  *target = std::string(url.substr(path));
  if ((*target)[0] == '?') *target = "/" + *target;
}

Status CheckBudgetName(std::string_view name) {
  auto allowed = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
           c == '_' || c == '.';
  };
  bool ok = !name.empty() && name.size() <= 64 && allowed(name[0]) && name[0] != '-' &&
            name[0] != '_' && name[0] != '.' && std::all_of(name.begin(), name.end(), allowed);
  if (!ok) {
    return InvalidArgument(
        "a budget name must be 1-64 letters, digits, '-', '_' or '.', "
        "starting with a letter or digit, got '" +
        std::string(name) + "'");
  }
  if (name == "alerts") {
    return InvalidArgument("'alerts' is not a budget name: /v1/budgets/alerts lists the alerts");
  }
  return OkStatus();
}

}  // namespace tf::cost
