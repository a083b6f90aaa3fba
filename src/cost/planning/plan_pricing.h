// Prices for the planners: what a run's GPUs cost per hour at each offer in the catalog.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cost/catalog.h"

namespace tf::cost {

// Tensor parallelism stays inside one machine, and machines hold at most this many GPUs in a
// tensor-parallel group.
constexpr int kMaxTensorParallel = 8;

struct OfferPrice {
  const Offer* offer = nullptr;
  double usd_per_gpu_hour = 0;       // on-demand, or the lowest observed spot price
  double usd_per_gpu_hour_high = 0;  // equal to the above for on-demand; spot: the highest
  int instances = 1;                 // machines rented
  // GPUs paid for: the run's own, or the whole machine when the run uses part of one and the
  // rest is not shared with other work.
  int billed_gpus = 1;
  int used_gpus = 1;

  double usd_per_hour() const { return usd_per_gpu_hour * billed_gpus; }
  double usd_per_hour_high() const { return usd_per_gpu_hour_high * billed_gpus; }
  // GPUs rented and left idle.
  int idle_gpus() const { return billed_gpus - used_gpus; }
};

struct PricingQuery {
  std::string accelerator;  // exact catalog name
  std::string provider;     // only this provider's offers (empty: all)
  bool spot = false;        // the observed spot range instead of the on-demand price
  int gpus = 1;
  // GPUs that must sit in one machine (a tensor-parallel group): a machine with fewer cannot
  // hold the layout, and whole groups must fill the machines of a multi-machine run.
  int tensor = 1;
  // A run smaller than a machine pays only for its own GPUs, the rest doing other work (other
  // replicas, other jobs). Without it the whole machine is paid for.
  bool share = false;
};

// The offers that can hold the run, cheapest per hour of the whole run first. A run of several
// machines must be whole machines (gpus a multiple of the machine's count); a run smaller than
// a machine rents one (with `share`, only a machine its size divides, the rest hosting more of
// the same).
std::vector<OfferPrice> PricedOffers(const Catalog& catalog, const PricingQuery& query);

// The cheapest spot price when it is below the cheapest on-demand price, else nullptr: spot is
// worth quoting only when it saves money.
const OfferPrice* SpotBelowOnDemand(const std::vector<OfferPrice>& on_demand,
                                    const std::vector<OfferPrice>& spot);

// Bytes per element of a number format: fp32 4, bf16/fp16 2, fp8/int8 1, int4 0.5.
std::optional<double> BytesPerElement(const std::string& dtype);

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace tf::cost
