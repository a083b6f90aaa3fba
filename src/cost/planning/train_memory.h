// Memory per GPU of a training run under each parallel layout: data parallel with ZeRO stages
// 0-3, tensor x pipeline model parallelism, and activation memory.
//
// Model state (ZeRO, Rajbhandari et al. 2019), mixed-precision Adam, 16 bytes per parameter
// (2 weights + 2 gradients + 12 fp32 master weights, momentum and variance). With P' = P/(t*p)
// parameters per model-parallel shard and d data-parallel ranks:
//   plain data parallel 16P'; ZeRO-1 4P' + 12P'/d; ZeRO-2 2P' + 14P'/d; ZeRO-3 16P'/d.
// Activations (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer
// Models", Table 2; BF16; sequence parallelism with tensor parallelism), per GPU for s tokens
// per sequence, b sequences per micro-batch, h hidden, a heads, L layers, t tensor-parallel:
//   no recomputation   s*b*h*L*(34 + 5*a*s/h) / t
//   selective          s*b*h*L*34 / t              (what FlashAttention-era training stores)
//   full               s*b*h*(2*L + 34 + 5*a*s/h) / t   (each layer's input, plus one layer)
// With 1F1B pipelining the first stage holds p micro-batches of L/p layers, so the activation
// memory per GPU does not shrink with p (the paper's section 4.2.3).
#pragma once

#include <optional>
#include <vector>

namespace tf::cost {

enum class Recompute { kNone, kSelective, kFull };

struct ModelDims {
  int layers = 0, hidden = 0, heads = 0;  // 0: unknown, activations not counted
};

struct TrainMemoryInput {
  double params = 0;
  int gpus = 0;
  int gpus_per_node = 8;  // tensor parallelism stays inside a node
  ModelDims dims;
  int seq_len = 4096;
  int micro_batch = 1;
  Recompute recompute = Recompute::kSelective;
  double usable_bytes = 0;  // per GPU
};

struct MemoryLayout {
  int tensor = 1, pipeline = 1, data = 1;
  int zero_stage = 0;
  double model_state_bytes = 0;
  double activation_bytes = 0;
  double total_bytes() const { return model_state_bytes + activation_bytes; }
  bool fits = false;
};

// Model-state bytes per GPU for a ZeRO stage.
double ModelStateBytes(double params_per_shard, int data_parallel, int zero_stage);
// Activation bytes per GPU (0 when dims are unknown).
double ActivationBytes(const TrainMemoryInput& in, int tensor);

// Every layout of in.gpus: tensor 1-8 within a node (dividing the heads), pipeline dividing the
// layers, ZeRO 0-3 without pipelining and 0-1 with it (ZeRO-2/3 do not combine with pipeline
// parallelism). Ordered by preference: fewer model-parallel GPUs first (less communication),
// then the lower ZeRO stage, then less memory.
std::vector<MemoryLayout> TrainLayouts(const TrainMemoryInput& in);

// The first layout that fits, nullopt if none does.
std::optional<MemoryLayout> RecommendLayout(const std::vector<MemoryLayout>& layouts);

}  // namespace tf::cost
