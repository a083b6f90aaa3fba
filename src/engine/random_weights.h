// Weights drawn at random for a config, in memory: for tests and benchmarks that need a model of
// a given size without a checkpoint on disk.
#pragma once

#include <cstdint>

#include "engine/config.h"
#include "engine/dtype.h"
#include "engine/weights.h"

namespace tf::engine {

// Every tensor the config needs, as `type` (F32, F16 or BF16) for the matrices and float32 for
// norms (near 1) and biases, from a generator seeded with `seed` (same seed, same weights).
// Matrix entries are normal with standard deviation 1 / sqrt(columns), so activations keep
// their scale through the layers.
ModelWeights RandomWeights(const ModelConfig& config, DType type, uint64_t seed);

// A copy of w whose matrices are all F32 with the values w's read as (ReadRow): the same model
// in float32. It shares w's storage for the norms and biases.
ModelWeights DequantizedWeights(const ModelWeights& w);

}  // namespace tf::engine
