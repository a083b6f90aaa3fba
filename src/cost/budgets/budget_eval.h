// Evaluating a budget: a pure function of the budget, its current period, the spend so far in
// that period and the time, giving the budget's status and the alerts it should raise now.
//
// Forecast: a linear burn to the period's end,
//
//   forecast = spend + rate × (period end − now)
//
// where rate is the burn rate given (dollars per hour of the work running now) or, without
// one, the period's average so far (spend / elapsed). A forecast is made only once
// min(10% of the period, 24 h) has elapsed (kForecastMinElapsed*): before that an hour of
// spend would be stretched over a whole month.
//
// Alerts, for each threshold t (percent of the amount, 100 being exhaustion):
//   "actual"    spend ≥ t% of the amount;
//   "forecast"  forecast ≥ t% while spend is still below t% (once spend has crossed t the
//               actual alert says more). So a threshold's forecast alert, when there is one,
//               always comes before its actual alert.
// Evaluation proposes every alert whose condition holds; firing each once per (period, kind,
// threshold) is the store's job (store::BudgetStore::AddBudgetAlert).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "cost/budgets/budget.h"
#include "cost/budgets/budget_period.h"

namespace tf::cost {

inline constexpr double kForecastMinElapsedFraction = 0.10;
inline constexpr TimeMs kForecastMinElapsedMs = kDayMs;

// How much of a period must have elapsed before it is forecast.
TimeMs ForecastMinElapsed(const PeriodBounds& period);

enum class BudgetState { kOk, kWarning, kExhausted };
// "ok" (below every threshold), "warning" (a threshold crossed), "exhausted".
const char* BudgetStateName(BudgetState state);

struct BudgetStatus {
  PeriodBounds period;
  double spend = 0;                // dollars so far in the period
  double percent = 0;              // of the amount
  std::optional<double> forecast;  // dollars at the period's end; none while too early
  std::optional<double> forecast_percent;
  BudgetState state = BudgetState::kOk;

  bool exhausted() const { return state == BudgetState::kExhausted; }
};

inline constexpr const char* kActualAlert = "actual";
inline constexpr const char* kForecastAlert = "forecast";

struct AlertDue {
  std::string kind;      // kActualAlert or kForecastAlert
  double threshold = 0;  // percent
  double value = 0;      // the spend (actual) or forecast that crossed it, in dollars
  std::string message;   // for people
};

struct BudgetEvaluation {
  BudgetStatus status;
  std::vector<AlertDue> alerts;  // forecast alerts first, then actual ones, by threshold
};

// `name` is the budget's name, for messages. `burn_per_hour`: see the forecast above.
BudgetEvaluation EvaluateBudget(const std::string& name, const Budget& budget,
                                const PeriodBounds& period, double spend, TimeMs now,
                                std::optional<double> burn_per_hour = std::nullopt);

}  // namespace tf::cost
