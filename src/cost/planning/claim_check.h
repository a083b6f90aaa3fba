// A verdict on a quote for a training run: does "a 70B model on 1T tokens, 256 GPUs, 30 days,
// $50K-$100K" hold at a stated MFU, by how much is it off in time and money, and what would it
// take (MFU, GPUs, price per GPU-hour). The estimate is the training planner's (6 N D at the
// MFU and goodput given), priced at the cheapest catalog offer that holds the planned layout.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cost/catalog.h"
#include "cost/planning/train_plan.h"

namespace tf::cost {

struct Claim {
  double params = 0;  // 0: not stated
  double tokens = 0;
  int gpus = 0;
  std::string gpu;  // the accelerator, when the claim names one ("256 H100s")
  std::optional<double> days;
  std::optional<double> gpu_hours;
  std::optional<double> usd_low, usd_high;  // one figure: both the same
};

// Reads a claim as people write one: quantities each followed by what they count, in any order,
// separated by commas or words:
//   "a 70B model on 1T tokens, 256 GPUs, 30 days, $50K-$100K"
//   "405B-parameter model, 15.6T tokens, 16384 H100s, 30.84M GPU-hours"
// Units: model/params/parameters, tokens, GPUs (or an accelerator name, "x H100"), GPU-hours,
// hours/days/weeks/months, and $ amounts (a range with "-" or "to"). "billion", "trillion",
// "million" and "thousand" scale the number before them. A number without a unit, or a quantity
// stated twice, is an error that quotes it.
Result<Claim> ParseClaim(std::string_view text, const Catalog& catalog);

// "70B parameters on 1T tokens, 256 x H100, 30 days, $50K-$100K": the claim as it was read.
std::string DescribeClaim(const Claim& claim, const std::string& accelerator);

struct ClaimVerdict {
  TrainPlan plan;  // the estimate
  // The offer the money is measured at: the cheapest on-demand offer that holds the layout, or
  // with `spot`, the cheapest spot price where it is below that. Empty without a price.
  std::optional<OfferPrice> priced_at;
  double tolerance = 0;

  // Time: the estimate against the claimed days (or GPU-hours); ratio > 1 means it takes longer.
  std::optional<double> time_ratio;
  // What meets the claimed days: the MFU at the claimed GPUs (above 1 is impossible), and the
  // GPUs at the stated MFU, in whole machines of the priced offer.
  double mfu_for_time = 0;
  int gpus_for_time = 0;

  // Money at priced_at: the estimate and its multiple of the claim's upper and lower figures.
  double usd = 0;
  std::optional<double> money_ratio_high, money_ratio_low;
  // What meets the claim's upper figure: the price per GPU-hour, the MFU at priced_at (above 1
  // is impossible), and the tokens that money trains at priced_at.
  double usd_per_gpu_hour_for_budget = 0;
  double mfu_for_budget = 0;
  double tokens_for_budget = 0;

  bool time_holds() const { return !time_ratio || *time_ratio <= 1 + tolerance; }
  bool money_holds() const { return !money_ratio_high || *money_ratio_high <= 1 + tolerance; }
  bool holds() const { return plan.possible() && time_holds() && money_holds(); }
};

// `in` carries the MFU, goodput, accelerator (when the claim names none), provider and shape;
// the claim's size, tokens and GPUs replace its own. A claim must state parameters, tokens and
// GPUs, and something to check (time, GPU-hours or money). An estimate within `tolerance`
// above the claim (0.1: 10%) holds.
Result<ClaimVerdict> CheckClaim(const Claim& claim, TrainInput in, const Catalog& catalog,
                                double tolerance = 0.1, bool spot = false);

}  // namespace tf::cost
