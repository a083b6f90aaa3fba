// The training planner: a pure function from a run's size and hardware to its compute,
// time, GPU-hours, cost at catalog prices and memory per GPU under each parallel layout.
//
// Compute: C = 6 * N * D model FLOPs (Kaplan et al. 2020; EleutherAI "Transformer Math 101").
// Time: C / (GPUs * peak dense FLOP/s * MFU * goodput). MFU counts model FLOPs only, over the
// training steps (as papers report it); with full activation recomputation the hardware does
// 8 * N * D (Narayanan et al. 2021), so a GPU sustaining X FLOP/s of hardware work achieves
// MFU = X * 6/8 / peak. Goodput is the share of the reserved GPU time that runs training steps:
// the rest goes to restarts after failures, checkpoints, lost work and stragglers. The Llama 3
// paper reports more than 90% effective training time for its 405B run; at 0.9, its published
// 30.84M H100-hours fall out at the 38-43% MFU it reports.
//
// Cost: the run's machines are priced only where they can hold the recommended layout (its
// tensor-parallel group inside one machine), whole machines unless `share`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cost/catalog.h"
#include "cost/planning/plan_pricing.h"
#include "cost/planning/train_memory.h"

namespace tf::cost {

constexpr double kDefaultGoodput = 0.9;

struct TrainInput {
  double params = 0;  // N
  double tokens = 0;  // D
  std::string gpu;    // accelerator name or unique prefix
  int gpus = 0;
  // Model FLOPs utilisation; ignored when achieved_tflops is set.
  double mfu = 0.4;
  // Hardware TFLOP/s each GPU sustains (the way papers often report throughput).
  std::optional<double> achieved_tflops;
  double goodput = kDefaultGoodput;  // share of the reserved GPU time spent in training steps
  bool fp8 = false;                  // use the FP8 peak
  Recompute recompute = Recompute::kSelective;
  std::string provider;  // price only this provider's offers (empty: all)
  bool share = false;    // fewer GPUs than a machine pay for theirs only (PricingQuery)
  // Memory: the model's dims (from the catalog's model shapes or flags) and batch.
  ModelDims dims;
  std::string shape_name;  // where dims came from, for the report
  int seq_len = 4096;
  int micro_batch = 1;
  double memory_reserve = 0.10;  // of each GPU's memory, for CUDA context, buffers, fragmentation
};

struct TrainPlan {
  const Accelerator* accelerator = nullptr;
  double flops = 0;               // 6 N D
  double peak_flops_per_gpu = 0;  // FLOP/s
  double mfu = 0;
  double hfu = 0;  // hardware FLOPs utilisation
  double goodput = 1;
  double seconds = 0;
  double gpu_hours = 0;
  // Offers that hold the recommended layout (any layout when memory is not planned), cheapest
  // first; empty when the run is refused.
  std::vector<OfferPrice> on_demand;
  std::vector<OfferPrice> spot;
  std::vector<MemoryLayout> layouts;
  std::optional<MemoryLayout> recommended;
  double usable_bytes_per_gpu = 0;
  std::vector<std::string> warnings;
  // Why the run cannot be done as asked (no layout fits in the GPUs' memory); empty when it can.
  std::vector<std::string> refusals;

  double days() const { return seconds / 86400; }
  double hours() const { return seconds / 3600; }
  // The whole run at an offer's price (its low and high spot figures).
  double Usd(const OfferPrice& p) const { return p.usd_per_hour() * hours(); }
  double UsdHigh(const OfferPrice& p) const { return p.usd_per_hour_high() * hours(); }
  bool possible() const { return refusals.empty(); }
};

// Hardware FLOPs per model FLOP: 8/6 with full recomputation, 1 otherwise.
double HardwareFactor(Recompute r);

// InvalidArgument for impossible input (unknown GPU, MFU or goodput outside (0, 1], achieved
// FLOP/s above peak, FP8 on a GPU without it); the plan otherwise, with refusals when nothing
// fits.
Result<TrainPlan> PlanTraining(const TrainInput& in, const Catalog& catalog);

}  // namespace tf::cost
