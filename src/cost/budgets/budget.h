// A budget: a spending limit of one project per period, the thresholds that raise alerts, and
// what happens when it is exhausted. This is the document kept in store::BudgetRecord.doc_json
// and sent to PUT /v1/budgets/{name} (docs/cost.md, "Budgets"):
//
//   {"amount": 500,                  dollars per period, > 0
//    "period": "monthly",            monthly | weekly | daily | <N>d (cost/budget_period.h)
//    "start": "2026-11-01",          <N>d only: the first period's day (UTC); default: the day
//                                    the budget is created
//    "thresholds": [50, 80, 90],     percent of the amount, 0 < t < 100; 100 (exhaustion)
//                                    is always added
//    "action": "notify",             notify | refuse-submissions | stop-spot, when exhausted
//    "webhook": "http://host:port/path"}   optional: alerts are POSTed there
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "cost/budgets/budget_period.h"

namespace tf::cost {

enum class BudgetAction {
  kNotify,             // alerts only
  kRefuseSubmissions,  // new jobs of the project are refused until the period rolls over
  kStopSpot,           // the project's jobs on spot capacity are cancelled
};

// "notify", "refuse-submissions", "stop-spot".
const char* BudgetActionName(BudgetAction action);
Result<BudgetAction> ParseBudgetAction(std::string_view text);

inline constexpr double kExhaustedPercent = 100;

struct Budget {
  double amount = 0;
  PeriodSpec period;
  std::vector<double> thresholds = {50, 80, 90, kExhaustedPercent};  // ascending, ends in 100
  BudgetAction action = BudgetAction::kNotify;
  std::string webhook;  // "" = none

  bool operator==(const Budget&) const = default;
};

nlohmann::json BudgetToJson(const Budget& budget);

// Reads and checks a budget document. Unknown fields, wrong types and values out of range are
// refused with kInvalidArgument naming the field. A <N>d period without "start" starts on the
// UTC day of `created_at`.
Result<Budget> BudgetFromJson(const nlohmann::json& json, TimeMs created_at);

// Checks a webhook URL: http://host[:port][/path]. kInvalidArgument saying what is wrong
// (https is not supported by the server's HTTP client).
Status CheckWebhookUrl(std::string_view url);

// Whether a checked webhook URL may be called when the server sends webhooks only to `allowed`
// (the operator's --webhook-hosts: "host" for any port of it, or "host:port"); empty allows
// every host. kInvalidArgument naming the URL's host and what is allowed.
Status CheckWebhookAllowed(std::string_view url, const std::vector<std::string>& allowed);

// Splits a checked webhook URL into the base the HTTP client connects to ("http://host:port")
// and the request target ("/path?query", "/" when empty).
void SplitWebhookUrl(std::string_view url, std::string* base, std::string* target);

// A budget name: 1-64 letters, digits, '-', '_' and '.', starting with a letter or digit, and
// not "alerts".
Status CheckBudgetName(std::string_view name);

}  // namespace tf::cost
