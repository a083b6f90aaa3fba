// Load-time quantisation of a model's 2-D weights (ModelOptions::quantize, `--quantize`).
#pragma once

#include <optional>
#include <string_view>

#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

enum class Quantize { kNone, kQ8_0, kQ4_0 };

// "none", "q8_0", "q4_0" (the spellings --quantize takes), or nullopt.
std::optional<Quantize> ParseQuantize(std::string_view name);
std::string_view QuantizeName(Quantize q);

// Replaces every F32, F16 or BF16 weight matrix of w (projections, LM head, embedding) by its
// Q8_0 or Q4_0 quantisation (quant.h), in new buffers owned by w->storage, splitting the rows
// over `pool`. Matrices already in a block format stay as they are, and so do those whose
// column count is not a multiple of 32 (they cannot be cut into blocks). A tied LM head stays
// shared with the embedding. kNone changes nothing.
void QuantizeWeights(Quantize target, ThreadPool& pool, ModelWeights* w);

}  // namespace tf::engine
