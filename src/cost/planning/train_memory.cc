#include "cost/planning/train_memory.h"

#include <algorithm>

namespace tf::cost {

double ModelStateBytes(double p, int d, int zero_stage) {
  switch (zero_stage) {
    case 1:
      return 4 * p + 12 * p / d;
    case 2:
      return 2 * p + 14 * p / d;
    case 3:
      return 16 * p / d;
    default:
      return 16 * p;
  }
}

double ActivationBytes(const TrainMemoryInput& in, int tensor) {
  const ModelDims& m = in.dims;
  if (m.layers <= 0 || m.hidden <= 0 || m.heads <= 0) return 0;
  double sbh = static_cast<double>(in.seq_len) * in.micro_batch * m.hidden;
  double attention = 5.0 * m.heads * in.seq_len / m.hidden;  // the a*s/h score term
  double per_gpu = 0;
  switch (in.recompute) {
    case Recompute::kNone:
      per_gpu = sbh * m.layers * (34 + attention);
      break;
    case Recompute::kSelective:
      per_gpu = sbh * m.layers * 34;
      break;
    case Recompute::kFull:
      per_gpu = sbh * (2.0 * m.layers + 34 + attention);
      break;
  }
  return per_gpu / tensor;
}

std::vector<MemoryLayout> TrainLayouts(const TrainMemoryInput& in) {
  std::vector<MemoryLayout> out;
  for (int t = 1; t <= std::min(8, in.gpus_per_node); t *= 2) {
    if (in.gpus % t != 0) continue;
    if (in.dims.heads > 0 && in.dims.heads % t != 0) continue;
    int max_pipeline = in.dims.layers > 0 ? in.dims.layers : 128;
    for (int p = 1; p <= max_pipeline; p *= 2) {
      if (in.gpus % (t * p) != 0) break;
      if (in.dims.layers > 0 && in.dims.layers % p != 0) continue;
      int d = in.gpus / (t * p);
      double shard = in.params / (t * p);
      double activations = ActivationBytes(in, t);
      for (int zero = 0; zero <= (p == 1 ? 3 : 1); ++zero) {
        if (zero > 0 && d == 1) break;  // nothing to partition across
        MemoryLayout l;
        l.tensor = t;
        l.pipeline = p;
        l.data = d;
        l.zero_stage = zero;
        l.model_state_bytes = ModelStateBytes(shard, d, zero);
        l.activation_bytes = activations;
        l.fits = l.total_bytes() <= in.usable_bytes;
        out.push_back(l);
      }
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const MemoryLayout& a, const MemoryLayout& b) {
    int ma = a.tensor * a.pipeline, mb = b.tensor * b.pipeline;
    if (ma != mb) return ma < mb;
    if (a.zero_stage != b.zero_stage) return a.zero_stage < b.zero_stage;
    return a.total_bytes() < b.total_bytes();
  });
  return out;
}

std::optional<MemoryLayout> RecommendLayout(const std::vector<MemoryLayout>& layouts) {
  for (const auto& l : layouts) {
    if (l.fits) return l;
  }
  return std::nullopt;
}

}  // namespace tf::cost
