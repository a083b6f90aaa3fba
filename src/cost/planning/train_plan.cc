#include "cost/planning/train_plan.h"

#include "cost/numbers.h"

namespace tf::cost {

double HardwareFactor(Recompute r) { return r == Recompute::kFull ? 8.0 / 6.0 : 1.0; }

namespace {

// The layouts, the recommended one, and a refusal when none fits.
void PlanMemory(const TrainInput& in, const Accelerator& a, TrainPlan& plan) {
  if (!a.memory_gib) {
    plan.warnings.push_back(a.name + " has no memory size in the catalog: memory not planned");
    return;
  }
  TrainMemoryInput mem;
  mem.params = in.params;
  mem.gpus = in.gpus;
  mem.dims = in.dims;
  mem.seq_len = in.seq_len;
  mem.micro_batch = in.micro_batch;
  mem.recompute = in.recompute;
  plan.usable_bytes_per_gpu = *a.memory_gib * kGiB * (1 - in.memory_reserve);
  mem.usable_bytes = plan.usable_bytes_per_gpu;
  plan.layouts = TrainLayouts(mem);
  plan.recommended = RecommendLayout(plan.layouts);
  if (in.dims.layers <= 0) {
    plan.warnings.push_back(
        "model shape unknown: activation memory not counted (pass --model or --layers, "
        "--hidden and --heads)");
  }
  if (!plan.recommended) {
    const MemoryLayout* least = nullptr;
    for (const auto& l : plan.layouts) {
      if (!least || l.total_bytes() < least->total_bytes()) least = &l;
    }
    std::string need = least ? FormatFixed(least->total_bytes() / kGiB, 1) + " GiB" : "?";
    plan.refusals.push_back("cannot fit: no layout of " + std::to_string(in.gpus) + " x " + a.name +
                            " fits in " + FormatFixed(plan.usable_bytes_per_gpu / kGiB, 1) +
                            " GiB usable per GPU (the smallest "
                            "needs " +
                            need +
                            "); use more GPUs, GPUs with more memory, full recomputation or a "
                            "shorter sequence / smaller micro-batch");
  }
}

}  // namespace

Result<TrainPlan> PlanTraining(const TrainInput& in, const Catalog& catalog) {
  if (in.params <= 0) return InvalidArgument("--params must be positive");
  if (in.tokens <= 0) return InvalidArgument("--tokens must be positive");
  if (in.gpus <= 0) return InvalidArgument("--gpus must be at least 1");
  TrainPlan plan;
  TF_ASSIGN_OR_RETURN(plan.accelerator, catalog.ResolveAccelerator(in.gpu));
  const Accelerator& a = *plan.accelerator;
  std::optional<double> peak_tflops = in.fp8 ? a.fp8_tflops : a.bf16_tflops;
  if (in.fp8 && (a.fp8 == Fp8Support::kNo || !peak_tflops)) {
    return InvalidArgument(a.name + " has no FP8 peak in the catalog (fp8_supported: " +
                           std::string(Fp8SupportName(a.fp8)) + ")");
  }
  if (!peak_tflops) return InvalidArgument(a.name + " has no peak TFLOP/s in the catalog");
  plan.peak_flops_per_gpu = *peak_tflops * 1e12;

  double hardware = HardwareFactor(in.recompute);
  if (in.achieved_tflops) {
    if (*in.achieved_tflops <= 0 || *in.achieved_tflops > *peak_tflops) {
      return InvalidArgument("--achieved-tflops must be in (0, " + FormatFixed(*peak_tflops, 0) +
                             "], the peak of " + a.name);
    }
    plan.hfu = *in.achieved_tflops / *peak_tflops;
    plan.mfu = plan.hfu / hardware;
  } else {
    if (in.mfu <= 0 || in.mfu > 1) return InvalidArgument("--mfu must be in (0, 1]");
    plan.mfu = in.mfu;
    plan.hfu = in.mfu * hardware;
    if (plan.hfu > 1) {
      return InvalidArgument("MFU " + FormatFixed(in.mfu, 2) +
                             " with full recomputation needs more than the peak FLOP/s");
    }
  }

  if (in.goodput <= 0 || in.goodput > 1) return InvalidArgument("--goodput must be in (0, 1]");
  plan.goodput = in.goodput;

  plan.flops = 6 * in.params * in.tokens;
  plan.seconds = plan.flops / (in.gpus * plan.peak_flops_per_gpu * plan.mfu * plan.goodput);
  plan.gpu_hours = plan.seconds * in.gpus / 3600;
  PlanMemory(in, a, plan);
  if (!plan.possible()) return plan;

  PricingQuery query{.accelerator = a.name,
                     .provider = in.provider,
                     .gpus = in.gpus,
                     .tensor = plan.recommended ? plan.recommended->tensor : 1,
                     .share = in.share};
  plan.on_demand = PricedOffers(catalog, query);
  query.spot = true;
  plan.spot = PricedOffers(catalog, query);
  if (plan.on_demand.empty()) {
    std::string layout = query.tensor > 1 ? " with tensor parallelism " +
                                                std::to_string(query.tensor) + " inside one machine"
                                          : "";
    plan.warnings.push_back("no on-demand price in the catalog for " + std::to_string(in.gpus) +
                            " x " + a.name + layout);
  }
  return plan;
}

}  // namespace tf::cost
