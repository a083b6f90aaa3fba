// Repacking a model's block-format matrices for the kernel set's packed matmuls at load
// (kernels/packed_blocks.h), so that every matmul over them runs on the packed kernel.
#pragma once

#include "engine/kernels/kernels.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

// Gives every Q8_0 and Q4_0 matrix the layers and the LM head use in matmuls a packed copy
// (WeightMatrix::packed, in a buffer owned by w->storage; as many bytes as the matrix, rounded
// up to 16 rows), where `k` has a packed matmul for its type, splitting the work over `pool`.
// The embedding, read a row at a time, is left as it is (a tied LM head gets its own packed
// copy). The matrices' own rows are not changed; where they lie in one of w->mappings (and
// are not the embedding's) their pages are given back (MappedFile::DropPages), so a GGUF
// Q8_0 model does not hold its matrices twice.
void PackBlockWeights(const kernels::KernelSet& k, ThreadPool& pool, ModelWeights* w);

}  // namespace tf::engine
