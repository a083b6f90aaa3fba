// Where a model's matrices live for the matmuls, arranged at load: block-format matrices
// repacked for the kernel set's packed matmuls (kernels/packed_blocks.h), and the others that
// lie in a mapped file (GGUF or safetensors) copied out of it, all into one buffer on large
// pages.
#pragma once

#include "engine/kernels/kernels.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

// Gives every Q8_0 and Q4_0 matrix the layers and the LM head use in matmuls a packed copy
// (WeightMatrix::packed), where `k` has a packed matmul for its type, and moves every other
// such matrix that lies in one of w->mappings into memory of its own (WeightMatrix::data now
// points there; same bytes). Both go into one buffer owned by w->storage (NewWeightBuffer: 2
// MiB pages where the system gives them), in the order a decode step reads them; the rows left
// behind in a mapped file give their pages back (MappedFile::DropPages), so nothing is held
// twice. The embedding, read a row at a time, stays where it is, and so does a matrix that
// shares its bytes (a tied LM head; with a packed matmul it gets its packed copy). The work is
// split over `pool`. Matrices are never changed, only copied; but rows quantised at load
// (w->quantised_rows) are freed once packed, the matrix keeping only its packed copy (data
// null), and a matrix that came with only a packed copy gets rows of its own (unpacked) where
// `k` has no packed matmul for it.
void PlaceMatrices(const kernels::KernelSet& k, ThreadPool& pool, ModelWeights* w);

// Called once the matmuls no longer read `rows` (a matrix's rows as a loader left them, now
// copied, packed or quantised elsewhere): where they lie in one of w.mappings and the embedding
// does not share them, their pages go back to the system (MappedFile::DropPages; read again,
// they come back from the file). Nothing otherwise.
void GiveBackMappedRows(const ModelWeights& w, const WeightMatrix& rows);
// The same for rows [begin, end) of `rows` only, a piece already read (the whole pages within).
void GiveBackMappedRows(const ModelWeights& w, const WeightMatrix& rows, int64_t begin,
                        int64_t end);

}  // namespace tf::engine
