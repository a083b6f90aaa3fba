// The serving planner: whether a model fits on a set of GPUs with its KV cache, the decode
// roofline, and what a million tokens cost at catalog prices.
//
// Memory: weights = N * bytes per element; KV cache bytes = 2 (K and V) * layers * kv_heads *
// head_dim * bytes per element * tokens, for `concurrency` sequences of `context` tokens. Both
// must fit in the GPUs' memory less a reserve (activations, CUDA context; vLLM's default
// gpu_memory_utilization is 0.9).
// Decode is memory-bandwidth bound: every step reads all weights once and each sequence's KV
// cache, so the roofline is aggregate bandwidth / bytes read per step, times the sequences
// decoded per step. The KV cache is taken at the full context (the slowest point of a
// sequence). Tensor-parallel communication is not counted: a real server runs below this.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "cost/catalog.h"
#include "cost/planning/plan_pricing.h"

namespace tf::cost {

struct ServeInput {
  double params = 0;
  std::string dtype = "bf16";  // weights: fp32, bf16, fp16, fp8, int8, int4
  std::string kv_dtype;        // KV cache; empty: bf16, or fp8 when the weights are fp8
  std::string gpu;
  int gpus = 1;
  int context = 4096;  // tokens per sequence (prompt + output)
  int concurrency = 1;
  int layers = 0, kv_heads = 0, head_dim = 0, heads = 0;  // the model's shape
  std::string shape_name;
  std::string provider;          // price only this provider's offers (empty: all)
  bool share = false;            // fewer GPUs than a machine pay for theirs only (PricingQuery)
  double memory_reserve = 0.10;  // of each GPU's memory
};

struct ServePlan {
  const Accelerator* accelerator = nullptr;
  double weight_bytes = 0;
  double kv_bytes_per_token = 0;
  double kv_bytes = 0;                  // for concurrency x context
  double usable_bytes = 0;              // all GPUs
  int max_concurrency = 0;              // sequences of `context` tokens that fit beside the weights
  double tokens_per_second = 0;         // all sequences together
  double tokens_per_second_single = 0;  // one sequence alone
  std::vector<OfferPrice> on_demand, spot;
  // Why the plan cannot run (empty when it can); every reason found, not just the first.
  std::vector<std::string> refusals;
  std::vector<std::string> warnings;

  bool possible() const { return refusals.empty(); }
  // USD per million generated tokens at an offer's price for the GPUs it bills, 0 when nothing
  // decodes.
  double UsdPerMillionTokens(const OfferPrice& price) const;
};

// InvalidArgument for input that is not a plan at all (unknown GPU or dtype, counts < 1, no
// model shape); an impossible plan is returned with its refusals.
Result<ServePlan> PlanServing(const ServeInput& in, const Catalog& catalog);

}  // namespace tf::cost
