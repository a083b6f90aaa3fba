#include "cost/planning/serve_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "base/ascii.h"
#include "cost/numbers.h"

namespace tf::cost {
namespace {

std::string GiB(double bytes) { return FormatFixed(bytes / kGiB, 1) + " GiB"; }

}  // namespace

double ServePlan::UsdPerMillionTokens(const OfferPrice& price) const {
  if (tokens_per_second <= 0) return 0;
  return price.usd_per_hour() / (tokens_per_second * 3600) * 1e6;
}

Result<ServePlan> PlanServing(const ServeInput& in, const Catalog& catalog) {
  if (in.params <= 0) return InvalidArgument("--params must be positive");
  if (in.gpus < 1) return InvalidArgument("--gpus must be at least 1");
  if (in.context < 1) return InvalidArgument("--context must be at least 1 token");
  if (in.concurrency < 1) return InvalidArgument("--concurrency must be at least 1");
  if (in.layers <= 0 || in.kv_heads <= 0 || in.head_dim <= 0) {
    return InvalidArgument(
        "the model's shape is unknown: pass --model, or --layers, --kv-heads "
        "and --head-dim");
  }
  std::string dtype = AsciiLower(in.dtype);
  auto weight_size = BytesPerElement(dtype);
  if (!weight_size) return InvalidArgument("unknown --dtype '" + in.dtype + "'");
  std::string kv_dtype = AsciiLower(in.kv_dtype);
  if (kv_dtype.empty()) kv_dtype = dtype == "fp8" ? "fp8" : "bf16";
  auto kv_size = BytesPerElement(kv_dtype);
  if (!kv_size || *kv_size < 1) return InvalidArgument("unsupported --kv-dtype '" + kv_dtype + "'");

  ServePlan plan;
  TF_ASSIGN_OR_RETURN(plan.accelerator, catalog.ResolveAccelerator(in.gpu));
  const Accelerator& a = *plan.accelerator;
  for (const std::string& d : {dtype, kv_dtype}) {
    if (d == "fp8" && a.fp8 == Fp8Support::kNo) {
      plan.refusals.push_back(a.name +
                              " has no FP8 support (catalog: fp8_supported=no); use "
                              "bf16 or a GPU with FP8 (L4, L40S, H100, H200, ...)");
      break;
    }
  }
  if (!a.memory_gib || !a.bandwidth_gbs) {
    return InvalidArgument(a.name + " has no memory size or bandwidth in the catalog");
  }

  plan.weight_bytes = in.params * *weight_size;
  plan.kv_bytes_per_token = 2.0 * in.layers * in.kv_heads * in.head_dim * *kv_size;
  double kv_per_sequence = plan.kv_bytes_per_token * in.context;
  plan.kv_bytes = kv_per_sequence * in.concurrency;
  plan.usable_bytes = *a.memory_gib * kGiB * in.gpus * (1 - in.memory_reserve);
  std::string where = std::to_string(in.gpus) + " x " + a.name + " (" + GiB(plan.usable_bytes) +
                      " usable of " + GiB(*a.memory_gib * kGiB * in.gpus) + ")";
  double left = plan.usable_bytes - plan.weight_bytes;
  plan.max_concurrency = left > 0 ? static_cast<int>(std::floor(left / kv_per_sequence)) : 0;
  if (left <= 0) {
    plan.refusals.push_back("the weights do not fit: " + GiB(plan.weight_bytes) + " of " + dtype +
                            " weights in " + where);
  } else if (plan.kv_bytes > left) {
    std::string msg = "the KV cache does not fit: " + std::to_string(in.concurrency) +
                      " sequences of " + std::to_string(in.context) + " tokens need " +
                      GiB(plan.kv_bytes) + ", " + GiB(left) + " is left after the weights on " +
                      where;
    msg += plan.max_concurrency > 0
               ? "; at most " + std::to_string(plan.max_concurrency) + " such sequences fit"
               : "; not even one sequence of this length fits";
    plan.refusals.push_back(msg);
  }
  if (in.heads > 0 && in.heads % in.gpus != 0) {
    plan.warnings.push_back(std::to_string(in.heads) +
                            " attention heads do not split evenly "
                            "over " +
                            std::to_string(in.gpus) + " GPUs of tensor parallelism");
  }

  double bandwidth = *a.bandwidth_gbs * 1e9 * in.gpus;  // bytes/s, all GPUs
  plan.tokens_per_second = in.concurrency * bandwidth / (plan.weight_bytes + plan.kv_bytes);
  plan.tokens_per_second_single = bandwidth / (plan.weight_bytes + kv_per_sequence);
  // The tensor-parallel group sits in one machine; beyond a machine's 8 GPUs, pipeline stages
  // of 8 span machines.
  PricingQuery query{.accelerator = a.name,
                     .provider = in.provider,
                     .gpus = in.gpus,
                     .tensor = std::min(in.gpus, kMaxTensorParallel),
                     .share = in.share};
  plan.on_demand = PricedOffers(catalog, query);
  query.spot = true;
  plan.spot = PricedOffers(catalog, query);
  if (plan.on_demand.empty()) {
    plan.warnings.push_back("no on-demand price in the catalog for " + std::to_string(in.gpus) +
                            " x " + a.name + " with tensor parallelism inside one machine");
  }
  return plan;
}

}  // namespace tf::cost
