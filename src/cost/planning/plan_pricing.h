// Prices for the planners: what an accelerator-hour costs at each offer in the catalog.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/catalog.h"

namespace tf::cost {

struct OfferPrice {
  const Offer* offer = nullptr;
  double usd_per_gpu_hour = 0;       // on-demand, or the lowest observed spot price
  double usd_per_gpu_hour_high = 0;  // equal to the above for on-demand; spot: the highest
};

// Offers of `accelerator` that can hold a run on `gpus` accelerators, with an on-demand (or,
// with `spot`, a spot) price, cheapest per accelerator-hour first. An offer fits when whole
// instances make up the run (gpus a multiple of the instance's count) or when the run divides
// one instance (the rest of it hosting other replicas). With `one_node_below`, runs of fewer
// GPUs than that must sit in one instance (tensor parallelism across machines is not planned).
// `provider` (if not empty) keeps only that provider's offers.
std::vector<OfferPrice> PricedOffers(const Catalog& catalog, const std::string& accelerator,
                                     const std::string& provider, bool spot, int gpus,
                                     int one_node_below = 0);

// Bytes per element of a number format: fp32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.
std::optional<double> BytesPerElement(const std::string& dtype);

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace tf::cost
