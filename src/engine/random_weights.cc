#include "engine/random_weights.h"

#include <cmath>
#include <cstring>
#include <random>
#include <string>

namespace tf::engine {
namespace {

class Filler {
 public:
  Filler(ModelWeights* w, DType type, uint64_t seed) : w_(w), type_(type), rng_(seed) {}

  WeightMatrix Matrix(std::string name, int64_t rows, int64_t cols) {
    std::normal_distribution<float> dist(0.0f, 1.0f / std::sqrt(static_cast<float>(cols)));
    const size_t row_bytes = RowBytes(type_, cols);
    uint8_t* data = NewWeightBuffer(w_, row_bytes * static_cast<size_t>(rows));
    for (int64_t i = 0; i < rows * cols; ++i) {
      const float v = dist(rng_);
      if (type_ == DType::kF32) {
        std::memcpy(data + 4 * i, &v, 4);
      } else {
        uint16_t h;
        if (type_ == DType::kF16) {
          h = F32ToF16(v);
        } else {  // BF16: truncated, the values are random anyway
          uint32_t u;
          std::memcpy(&u, &v, 4);
          h = static_cast<uint16_t>(u >> 16);
        }
        std::memcpy(data + 2 * i, &h, 2);
      }
    }
    return WeightMatrix{type_, data, rows, cols, std::move(name)};
  }

  const float* Vector(int64_t n, float mean, float stddev) {
    std::normal_distribution<float> dist(mean, stddev);
    auto* v = reinterpret_cast<float*>(NewWeightBuffer(w_, n * sizeof(float)));
    for (int64_t i = 0; i < n; ++i) v[i] = dist(rng_);
    return v;
  }

 private:
  ModelWeights* w_;
  DType type_;
  std::mt19937_64 rng_;
};

}  // namespace

ModelWeights RandomWeights(const ModelConfig& c, DType type, uint64_t seed) {
  ModelWeights w;
  Filler f(&w, type, seed);
  const int64_t h = c.hidden_size, q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim, ff = c.intermediate_size;
  w.embed = f.Matrix("embed", c.vocab_size, h);
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const std::string p = "layer" + std::to_string(i) + ".";
    LayerWeights l;
    l.attn_norm = f.Vector(h, 1.0f, 0.1f);
    l.wq = f.Matrix(p + "wq", q_dim, h);
    l.wk = f.Matrix(p + "wk", kv_dim, h);
    l.wv = f.Matrix(p + "wv", kv_dim, h);
    l.wo = f.Matrix(p + "wo", h, q_dim);
    if (c.qkv_bias) {
      l.bq = f.Vector(q_dim, 0.0f, 0.1f);
      l.bk = f.Vector(kv_dim, 0.0f, 0.1f);
      l.bv = f.Vector(kv_dim, 0.0f, 0.1f);
    }
    if (c.o_bias) l.bo = f.Vector(h, 0.0f, 0.1f);
    l.ffn_norm = f.Vector(h, 1.0f, 0.1f);
    l.w_gate = f.Matrix(p + "w_gate", ff, h);
    l.w_up = f.Matrix(p + "w_up", ff, h);
    l.w_down = f.Matrix(p + "w_down", h, ff);
    w.layers.push_back(std::move(l));
  }
  w.final_norm = f.Vector(h, 1.0f, 0.1f);
  w.lm_head = c.tie_word_embeddings ? w.embed : f.Matrix("lm_head", c.vocab_size, h);
  return w;
}

ModelWeights DequantizedWeights(const ModelWeights& w) {
  ModelWeights out = w;
  auto to_f32 = [&](WeightMatrix* m) {
    auto* data = reinterpret_cast<float*>(NewWeightBuffer(&out, m->rows * m->cols * 4));
    for (int64_t r = 0; r < m->rows; ++r) ReadRow(*m, r, data + r * m->cols);
    m->type = DType::kF32;
    m->data = data;
  };
  for (LayerWeights& l : out.layers) {
    for (WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) to_f32(m);
  }
  const bool tied = w.lm_head.data == w.embed.data;
  to_f32(&out.embed);
  if (tied) {
    out.lm_head = out.embed;
  } else {
    to_f32(&out.lm_head);
  }
  return out;
}

}  // namespace tf::engine
