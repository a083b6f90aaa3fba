#include "engine/pack_weights.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/kernels/packed_blocks.h"

namespace tf::engine {
namespace {

using Pack = void (*)(const void*, int64_t, int64_t, int64_t, int64_t, uint8_t*);

size_t RoundUp64(size_t bytes) { return (bytes + 63) / 64 * 64; }

size_t MatrixBytes(const WeightMatrix& m) { return static_cast<size_t>(m.rows) * m.row_bytes(); }

// How `k` packs m (null: it does not), and the bytes of its packed copy.
Pack PackerFor(const kernels::KernelSet& k, const WeightMatrix& m, size_t* bytes) {
  if (m.type == DType::kQ8_0 && k.matmul_q8_0_packed != nullptr) {
    *bytes = static_cast<size_t>(kernels::PackedQ8_0Bytes(m.rows, m.cols));
    return kernels::PackQ8_0;
  }
  if (m.type == DType::kQ4_0 && k.matmul_q4_0_packed != nullptr) {
    *bytes = static_cast<size_t>(kernels::PackedQ4_0Bytes(m.rows, m.cols));
    return kernels::PackQ4_0;
  }
  return nullptr;
}

// The mapping of w that holds m's bytes, or null.
const MappedFile* MappingOf(const ModelWeights& w, const WeightMatrix& m) {
  for (const MappedFile* mapping : w.mappings) {
    if (mapping->Contains(m.data, MatrixBytes(m))) return mapping;
  }
  return nullptr;
}

bool SharesTheEmbedding(const ModelWeights& w, const WeightMatrix& m) {
  if (m.data == nullptr) return false;
  const auto* begin = static_cast<const uint8_t*>(m.data);
  const auto* embed = static_cast<const uint8_t*>(w.embed.data);
  return embed != nullptr && begin < embed + MatrixBytes(w.embed) && embed < begin + MatrixBytes(m);
}

using Unpack = void (*)(const void*, int64_t, int64_t, int64_t, uint8_t*);

// What happens to one matrix: packed, copied, unpacked (a matrix that kept only its packed copy,
// for kernels without a packed matmul), or left (bytes 0).
struct Placement {
  WeightMatrix* m;
  Pack pack = nullptr;
  Unpack unpack = nullptr;
  size_t bytes = 0;
};

Placement Plan(const kernels::KernelSet& k, const ModelWeights& w, WeightMatrix* m) {
  Placement p{m};
  if (m->rows == 0) return p;
  if (m->data == nullptr) {  // only a packed copy, which these kernels may read as it is
    size_t bytes = 0;
    if (m->packed != nullptr && PackerFor(k, *m, &bytes) == nullptr) {
      p.unpack = m->type == DType::kQ4_0 ? kernels::UnpackQ4_0Rows : kernels::UnpackQ8_0Rows;
      p.bytes = MatrixBytes(*m);
    }
    return p;
  }
  p.pack = PackerFor(k, *m, &p.bytes);
  if (p.pack == nullptr && MappingOf(w, *m) != nullptr && !SharesTheEmbedding(w, *m)) {
    p.bytes = MatrixBytes(*m);
  }
  return p;
}

// Frees the buffer of m's rows where they were quantised at load (the matmuls read its packed
// copy now); m keeps no rows then.
void FreeQuantisedRows(ModelWeights* w, WeightMatrix* m) {
  auto listed = std::find(w->quantised_rows.begin(), w->quantised_rows.end(), m->data);
  if (listed == w->quantised_rows.end() || SharesTheEmbedding(*w, *m)) return;
  w->quantised_rows.erase(listed);
  std::erase_if(w->storage, [&](const auto& s) { return s.get() == m->data; });
  m->data = nullptr;
}

void Place(const Placement& p, ThreadPool& pool, ModelWeights* weights, uint8_t* out) {
  const ModelWeights& w = *weights;
  WeightMatrix* m = p.m;
  if (p.unpack != nullptr) {
    pool.ParallelFor(
        m->rows,
        [&](int64_t begin, int64_t end) {
          p.unpack(m->packed, m->cols, begin, end, out + begin * m->row_bytes());
        },
        /*min_chunk=*/64);
    m->data = out;
    return;
  }
  const int64_t groups = (m->rows + kernels::kPackRows - 1) / kernels::kPackRows;
  const auto* source = static_cast<const uint8_t*>(m->data);
  const size_t group_bytes = kernels::kPackRows * m->row_bytes();
  const size_t source_bytes = MatrixBytes(*m);
  // Rows of a mapped file give their pages back as soon as they are placed, a few hundred KiB
  // at a time, so that a large matrix is not held twice while it is copied (the whole pages
  // within each piece; those straddling two pieces at the end).
  const MappedFile* mapping = SharesTheEmbedding(w, *m) ? nullptr : MappingOf(w, *m);
  const int64_t piece = std::max<int64_t>(1, (size_t{256} << 10) / group_bytes);  // groups
  pool.ParallelFor(
      groups,
      [&](int64_t begin, int64_t end) {
        for (int64_t b = begin; b < end; b += piece) {
          const int64_t e = std::min(end, b + piece);
          const size_t from = b * group_bytes, to = std::min(source_bytes, e * group_bytes);
          if (p.pack != nullptr) {
            p.pack(source, m->rows, m->cols, b, e, out);
          } else {
            std::memcpy(out + from, source + from, to - from);
          }
          if (mapping != nullptr) mapping->DropPages(source + from, to - from);
        }
      },
      /*min_chunk=*/4);
  // The matmuls read only the new copy from now on.
  GiveBackMappedRows(w, *m);
  if (p.pack != nullptr) {
    m->packed = out;
    FreeQuantisedRows(weights, m);
  } else {
    m->data = out;
  }
}

}  // namespace

void GiveBackMappedRows(const ModelWeights& w, const WeightMatrix& rows) {
  GiveBackMappedRows(w, rows, 0, rows.rows);
}

void GiveBackMappedRows(const ModelWeights& w, const WeightMatrix& rows, int64_t begin,
                        int64_t end) {
  if (rows.data == nullptr || begin >= end || SharesTheEmbedding(w, rows)) return;
  const MappedFile* mapping = MappingOf(w, rows);
  if (mapping != nullptr) mapping->DropPages(rows.row(begin), (end - begin) * rows.row_bytes());
}

void PlaceMatrices(const kernels::KernelSet& k, ThreadPool& pool, ModelWeights* w) {
  std::vector<Placement> plan;
  for (LayerWeights& l : w->layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      plan.push_back(Plan(k, *w, m));
    }
  }
  plan.push_back(Plan(k, *w, &w->lm_head));
  // One buffer for all of them, in the order a decode step reads them, so that the step
  // streams through large pages (NewWeightBuffer) rather than a small buffer per matrix: with
  // 4 KiB pages every 4 KiB of a stream is a TLB miss.
  size_t total = 0;
  for (const Placement& p : plan) total += RoundUp64(p.bytes);
  if (total == 0) return;
  uint8_t* out = NewWeightBuffer(w, total);
  for (const Placement& p : plan) {
    if (p.bytes == 0) continue;
    Place(p, pool, w, out);
    out += RoundUp64(p.bytes);
  }
}

}  // namespace tf::engine
