#include "engine/pack_weights.h"

#include "engine/kernels/packed_blocks.h"

namespace tf::engine {
namespace {

void PackMatrix(const kernels::KernelSet& k, ThreadPool& pool, ModelWeights* w, WeightMatrix* m) {
  using Pack = void (*)(const void*, int64_t, int64_t, int64_t, int64_t, uint8_t*);
  Pack pack = nullptr;
  int64_t bytes = 0;
  if (m->type == DType::kQ8_0 && k.matmul_q8_0_packed != nullptr) {
    pack = kernels::PackQ8_0;
    bytes = kernels::PackedQ8_0Bytes(m->rows, m->cols);
  } else if (m->type == DType::kQ4_0 && k.matmul_q4_0_packed != nullptr) {
    pack = kernels::PackQ4_0;
    bytes = kernels::PackedQ4_0Bytes(m->rows, m->cols);
  }
  if (pack == nullptr || m->rows == 0) return;
  uint8_t* out = NewWeightBuffer(w, static_cast<size_t>(bytes));
  const WeightMatrix& source = *m;
  const int64_t groups = (m->rows + kernels::kPackRows - 1) / kernels::kPackRows;
  pool.ParallelFor(
      groups,
      [&](int64_t begin, int64_t end) {
        pack(source.data, source.rows, source.cols, begin, end, out);
      },
      /*min_chunk=*/4);
  m->packed = out;
  // The matmuls read only the packed copy from now on, so the rows as stored can give their
  // memory back where they lie in a mapped file (which keeps them readable), unless the
  // embedding, read a row per token, shares them (a tied LM head).
  const auto* begin = static_cast<const uint8_t*>(m->data);
  const size_t size = static_cast<size_t>(m->rows) * m->row_bytes();
  const auto* embed = static_cast<const uint8_t*>(w->embed.data);
  const size_t embed_size = static_cast<size_t>(w->embed.rows) * w->embed.row_bytes();
  if (embed != nullptr && begin < embed + embed_size && embed < begin + size) return;
  for (const MappedFile* mapping : w->mappings) {
    if (mapping->Contains(begin, size)) mapping->DropPages(begin, size);
  }
}

}  // namespace

void PackBlockWeights(const kernels::KernelSet& k, ThreadPool& pool, ModelWeights* w) {
  for (LayerWeights& l : w->layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      PackMatrix(k, pool, w, m);
    }
  }
  PackMatrix(k, pool, w, &w->lm_head);
}

}  // namespace tf::engine
