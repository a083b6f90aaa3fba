#include "engine/quantize_weights.h"

#include <algorithm>
#include <vector>

#include "engine/pack_weights.h"
#include "engine/quant.h"

namespace tf::engine {
namespace {

void QuantizeMatrix(DType target, ThreadPool& pool, ModelWeights* w, WeightMatrix* m) {
  if (IsBlockType(m->type) || m->cols % kQuantBlock != 0) return;
  const size_t row_bytes = RowBytes(target, m->cols);
  uint8_t* out = NewWeightBuffer(w, row_bytes * static_cast<size_t>(m->rows));
  const WeightMatrix source = *m;
  // The source rows give their pages back (where they lie in a mapped file) a few hundred KiB
  // at a time as they are quantised, so that a large matrix (an LM head) is not held in both
  // forms at once; the whole matrix's once it is done.
  const int64_t piece = std::max<int64_t>(1, (int64_t{256} << 10) / source.row_bytes());
  pool.ParallelFor(
      m->rows,
      [&](int64_t begin, int64_t end) {
        std::vector<float> row(source.cols);  // [cols]
        for (int64_t b = begin; b < end; b += piece) {
          const int64_t e = std::min(end, b + piece);
          for (int64_t r = b; r < e; ++r) {
            ReadRow(source, r, row.data());
            QuantizeRow(target, row.data(), source.cols, out + r * row_bytes);
          }
          GiveBackMappedRows(*w, source, b, e);
        }
      },
      /*min_chunk=*/64);
  m->type = target;
  m->data = out;
  w->quantised_rows.push_back(out);
  GiveBackMappedRows(*w, source);  // the rows as the file holds them are read no more
}

}  // namespace

std::optional<Quantize> ParseQuantize(std::string_view name) {
  if (name == "none") return Quantize::kNone;
  if (name == "q8_0") return Quantize::kQ8_0;
  if (name == "q4_0") return Quantize::kQ4_0;
  return std::nullopt;
}

std::string_view QuantizeName(Quantize q) {
  switch (q) {
    case Quantize::kNone:
      return "none";
    case Quantize::kQ8_0:
      return "q8_0";
    case Quantize::kQ4_0:
      return "q4_0";
  }
  return "?";
}

void QuantizeWeights(Quantize target, ThreadPool& pool, ModelWeights* w) {
  if (target == Quantize::kNone) return;
  const DType type = target == Quantize::kQ8_0 ? DType::kQ8_0 : DType::kQ4_0;
  const bool tied = w->lm_head.data == w->embed.data;
  for (LayerWeights& l : w->layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      QuantizeMatrix(type, pool, w, m);
    }
  }
  QuantizeMatrix(type, pool, w, &w->embed);
  if (tied) {
    w->lm_head.type = w->embed.type;
    w->lm_head.data = w->embed.data;
  } else {
    QuantizeMatrix(type, pool, w, &w->lm_head);
  }
}

}  // namespace tf::engine
