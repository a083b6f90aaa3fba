#include "cost/budgets/budget_eval.h"

#include <algorithm>

#include "cost/numbers.h"

namespace tf::cost {
namespace {

// Spend a hair under a threshold because of rounding still crosses it.
constexpr double kPercentSlack = 1e-9;

std::string Percent(double p) { return FormatFixed(p, 1) + "%"; }

std::string Threshold(double t) {
  return FormatFixed(t, t == static_cast<double>(static_cast<int64_t>(t)) ? 0 : 1) + "%";
}

std::string PeriodWords(const Budget& b, const PeriodBounds& p) {
  return PeriodName(b.period) + " period " + FormatUtcDate(p.start) + " to " + FormatUtcDate(p.end);
}

std::string ActionWords(const Budget& b, const PeriodBounds& p) {
  switch (b.action) {
    case BudgetAction::kNotify:
      return "action notify: nothing is stopped";
    case BudgetAction::kRefuseSubmissions:
      return "action refuse-submissions: new jobs of the project are refused until " +
             FormatUtcDate(p.end);
    case BudgetAction::kStopSpot:
      return "action stop-spot: the project's jobs on spot capacity are cancelled";
  }
  return "";
}

}  // namespace

TimeMs ForecastMinElapsed(const PeriodBounds& period) {
  return std::min<TimeMs>(static_cast<TimeMs>(period.length() * kForecastMinElapsedFraction),
                          kForecastMinElapsedMs);
}

const char* BudgetStateName(BudgetState state) {
  switch (state) {
    case BudgetState::kOk:
      return "ok";
    case BudgetState::kWarning:
      return "warning";
    case BudgetState::kExhausted:
      return "exhausted";
  }
  return "ok";
}

BudgetEvaluation EvaluateBudget(const std::string& name, const Budget& budget,
                                const PeriodBounds& period, double spend, TimeMs now,
                                std::optional<double> burn_per_hour) {
  BudgetEvaluation out;
  BudgetStatus& s = out.status;
  s.period = period;
  s.spend = std::max(0.0, spend);
  s.percent = budget.amount > 0 ? s.spend / budget.amount * 100 : 0;

  const TimeMs clamped_now = std::clamp(now, period.start, period.end);
  const TimeMs elapsed = clamped_now - period.start;
  const TimeMs remaining = period.end - clamped_now;
  if (elapsed >= ForecastMinElapsed(period) && elapsed > 0) {
    double rate_per_ms = burn_per_hour ? std::max(0.0, *burn_per_hour) / kHourMs
                                       : s.spend / static_cast<double>(elapsed);
    s.forecast = s.spend + rate_per_ms * static_cast<double>(remaining);
    s.forecast_percent = budget.amount > 0 ? *s.forecast / budget.amount * 100 : 0;
  }

  const double lowest = budget.thresholds.empty() ? kExhaustedPercent : budget.thresholds.front();
  if (s.percent + kPercentSlack >= kExhaustedPercent) {
    s.state = BudgetState::kExhausted;
  } else if (s.percent + kPercentSlack >= lowest) {
    s.state = BudgetState::kWarning;
  }

  const std::string head = "budget '" + name + "' ";
  const std::string amount = FormatUsd(budget.amount);
  if (s.forecast_percent) {
    for (double t : budget.thresholds) {
      if (s.percent + kPercentSlack >= t || *s.forecast_percent + kPercentSlack < t) continue;
      out.alerts.push_back({kForecastAlert, t, *s.forecast,
                            head + "is forecast to reach " + Threshold(t) + " of " + amount + ": " +
                                FormatUsd(*s.forecast) + " (" + Percent(*s.forecast_percent) +
                                ") by " + FormatUtcDate(period.end) + " at the current burn, " +
                                FormatUsd(s.spend) + " spent so far in the " +
                                PeriodWords(budget, period)});
    }
  }
  for (double t : budget.thresholds) {
    if (s.percent + kPercentSlack < t) continue;
    std::string message = t >= kExhaustedPercent
                              ? head + "is exhausted: " + FormatUsd(s.spend) + " spent of " +
                                    amount + " (" + Percent(s.percent) + ") in the " +
                                    PeriodWords(budget, period) + "; " + ActionWords(budget, period)
                              : head + "crossed " + Threshold(t) + " of " + amount + ": " +
                                    FormatUsd(s.spend) + " spent (" + Percent(s.percent) +
                                    ") in the " + PeriodWords(budget, period);
    out.alerts.push_back({kActualAlert, t, s.spend, std::move(message)});
  }
  return out;
}

}  // namespace tf::cost
