#include "engine/model.h"

#include <algorithm>
#include <cmath>

#include "engine/rope.h"

namespace tf::engine {
namespace {

void AddBias(float* y, const float* bias, int64_t n, int64_t dim) {  // y: [n, dim], bias: [dim]
  if (bias == nullptr) return;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t i = 0; i < dim; ++i) y[t * dim + i] += bias[i];
  }
}

void AddInto(float* x, const float* y, int64_t count) {
  for (int64_t i = 0; i < count; ++i) x[i] += y[i];
}

}  // namespace

Result<std::unique_ptr<Model>> Model::Load(const std::string& dir, const ModelOptions& options) {
  TF_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(dir + "/config.json"));
  TF_ASSIGN_OR_RETURN(ModelWeights weights, LoadWeights(dir, config));
  return std::unique_ptr<Model>(new Model(std::move(config), std::move(weights), options));
}

Model::Model(ModelConfig config, ModelWeights weights, const ModelOptions& options)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      kernels_(options.kernels != nullptr ? options.kernels : &kernels::BestKernels()),
      pool_(options.num_threads),
      inv_freq_(RopeInvFreq(config_.rope, config_.head_dim)) {}

std::unique_ptr<KvCache> Model::NewCache(int64_t capacity) const {
  capacity = std::clamp<int64_t>(capacity, 1, config_.MaxContext());
  return NewContiguousKvCache(config_.num_layers, config_.num_kv_heads * config_.head_dim,
                              capacity);
}

void Model::MatMul(const float* w, const float* x, float* y, int64_t n, int64_t n_in,
                   int64_t n_out) {
  // Rows per range: enough work (about 64 Ki multiply-adds) to be worth a thread.
  int64_t min_rows = std::max<int64_t>(1, 65536 / std::max<int64_t>(1, n * n_in));
  const auto* k = kernels_;
  pool_.ParallelFor(
      n_out,
      [&](int64_t begin, int64_t end) { k->matmul_rows(w, x, y, n, n_in, n_out, begin, end); },
      min_rows);
}

Status Model::Forward(std::span<const int32_t> tokens, KvCache* cache, bool all_positions,
                      std::vector<float>* logits) {
  const ModelConfig& c = config_;
  const int64_t n = static_cast<int64_t>(tokens.size());
  const int64_t first = cache->size();
  if (n == 0) return InvalidArgument("no tokens to run");
  if (first + n > cache->capacity()) {
    return ResourceExhausted("context of " + std::to_string(first + n) +
                             " positions exceeds the cache's " + std::to_string(cache->capacity()));
  }
  for (int32_t id : tokens) {
    if (id < 0 || id >= c.vocab_size) {
      return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                             std::to_string(c.vocab_size) + ")");
    }
  }
  const int64_t h = c.hidden_size, half = c.head_dim / 2;
  std::vector<float> x(n * h);  // [n, hidden]
  for (int64_t t = 0; t < n; ++t) {
    std::copy_n(weights_.embed + int64_t{tokens[t]} * h, h, x.data() + t * h);
  }
  std::vector<float> cos(n * half), sin(n * half);  // [n, head_dim / 2]
  RopeTables(inv_freq_, first, n, cos.data(), sin.data());
  for (int64_t l = 0; l < c.num_layers; ++l) {
    Layer(l, n, first, cos.data(), sin.data(), cache, x.data());
  }
  cache->set_size(first + n);

  const int64_t rows = all_positions ? n : 1;
  const float* last = x.data() + (n - rows) * h;  // [rows, hidden]
  std::vector<float> normed(rows * h);
  for (int64_t t = 0; t < rows; ++t) {
    kernels_->rms_norm(last + t * h, weights_.final_norm, normed.data() + t * h, h, c.rms_norm_eps);
  }
  logits->resize(rows * c.vocab_size);  // [rows, vocab]
  MatMul(weights_.lm_head, normed.data(), logits->data(), rows, h, c.vocab_size);
  return OkStatus();
}

void Model::Layer(int64_t l, int64_t n, int64_t first, const float* cos, const float* sin,
                  KvCache* cache, float* x) {
  const ModelConfig& c = config_;
  const LayerWeights& w = weights_.layers[l];
  const int64_t h = c.hidden_size, hd = c.head_dim, half = hd / 2;
  const int64_t q_dim = c.num_heads * hd, kv_dim = c.num_kv_heads * hd;
  const int64_t stride = cache->row_stride();
  float* k_cache = cache->keys(l);    // [capacity, stride]
  float* v_cache = cache->values(l);  // [capacity, stride]

  // Attention block.
  std::vector<float> xn(n * h);  // [n, hidden]
  for (int64_t t = 0; t < n; ++t) {
    kernels_->rms_norm(x + t * h, w.attn_norm, xn.data() + t * h, h, c.rms_norm_eps);
  }
  std::vector<float> q(n * q_dim), k(n * kv_dim), v(n * kv_dim);  // [n, q_dim], [n, kv_dim] x2
  MatMul(w.wq, xn.data(), q.data(), n, h, q_dim);
  MatMul(w.wk, xn.data(), k.data(), n, h, kv_dim);
  MatMul(w.wv, xn.data(), v.data(), n, h, kv_dim);
  AddBias(q.data(), w.bq, n, q_dim);
  AddBias(k.data(), w.bk, n, kv_dim);
  AddBias(v.data(), w.bv, n, kv_dim);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t head = 0; head < c.num_heads; ++head) {
      kernels_->rope(q.data() + t * q_dim + head * hd, cos + t * half, sin + t * half, half);
    }
    for (int64_t head = 0; head < c.num_kv_heads; ++head) {
      kernels_->rope(k.data() + t * kv_dim + head * hd, cos + t * half, sin + t * half, half);
    }
    std::copy_n(k.data() + t * kv_dim, kv_dim, k_cache + (first + t) * stride);
    std::copy_n(v.data() + t * kv_dim, kv_dim, v_cache + (first + t) * stride);
  }
  std::vector<float> attn(n * q_dim);  // [n, q_dim]
  const int64_t group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const auto* kern = kernels_;
  // One task per (token, head); token t sees positions [0, first + t]. A task costs about
  // 2 * n_ctx * head_dim multiply-adds; ranges get enough of them to be worth a thread.
  const int64_t min_tasks = std::max<int64_t>(1, 32768 / ((first + n) * hd));
  pool_.ParallelFor(
      n * c.num_heads,
      [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(first + n);  // [n_ctx]
        for (int64_t task = begin; task < end; ++task) {
          int64_t t = task / c.num_heads, head = task % c.num_heads;
          int64_t kv_off = (head / group) * hd;
          kern->attention_head(q.data() + t * q_dim + head * hd, k_cache + kv_off, v_cache + kv_off,
                               first + t + 1, stride, hd, scale, scratch.data(),
                               attn.data() + t * q_dim + head * hd);
        }
      },
      min_tasks);
  std::vector<float> out(n * h);  // [n, hidden]
  MatMul(w.wo, attn.data(), out.data(), n, q_dim, h);
  AddBias(out.data(), w.bo, n, h);
  AddInto(x, out.data(), n * h);

  // Feed-forward block (SwiGLU).
  const int64_t ff = c.intermediate_size;
  for (int64_t t = 0; t < n; ++t) {
    kernels_->rms_norm(x + t * h, w.ffn_norm, xn.data() + t * h, h, c.rms_norm_eps);
  }
  std::vector<float> gate(n * ff), up(n * ff);  // [n, intermediate] x2
  MatMul(w.w_gate, xn.data(), gate.data(), n, h, ff);
  MatMul(w.w_up, xn.data(), up.data(), n, h, ff);
  kernels_->silu_mul(gate.data(), up.data(), gate.data(), n * ff);
  MatMul(w.w_down, gate.data(), out.data(), n, ff, h);
  AddInto(x, out.data(), n * h);
}

}  // namespace tf::engine
