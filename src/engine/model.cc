#include "engine/model.h"

#include <algorithm>
#include <cmath>

#include "engine/formats/gguf_model.h"
#include "engine/matmul.h"
#include "engine/pack_weights.h"
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

Result<std::unique_ptr<Model>> Model::Load(const std::string& path, const ModelOptions& options) {
  if (IsGgufPath(path)) {
    TF_ASSIGN_OR_RETURN(std::shared_ptr<const GgufFile> file, GgufFile::Open(path));
    TF_ASSIGN_OR_RETURN(ModelConfig config, GgufModelConfig(*file));
    TF_ASSIGN_OR_RETURN(ModelWeights weights, LoadGgufWeights(file, config));
    return FromWeights(std::move(config), std::move(weights), options);
  }
  TF_ASSIGN_OR_RETURN(ModelConfig config, LoadModelConfig(path + "/config.json"));
  TF_ASSIGN_OR_RETURN(ModelWeights weights, LoadWeights(path, config));
  return FromWeights(std::move(config), std::move(weights), options);
}

Result<std::unique_ptr<Model>> Model::FromWeights(ModelConfig config, ModelWeights weights,
                                                  const ModelOptions& options) {
  TF_RETURN_IF_ERROR(CheckWeights(config, weights));
  std::unique_ptr<Model> model(new Model(std::move(config), std::move(weights), options));
  QuantizeWeights(options.quantize, model->pool_, &model->weights_);
  PlaceMatrices(*model->kernels_, model->pool_, &model->weights_);
  return model;
}

Model::Model(ModelConfig config, ModelWeights weights, const ModelOptions& options)
    : config_(std::move(config)),
      weights_(std::move(weights)),
      kernels_(options.kernels != nullptr ? options.kernels : &kernels::BestKernels()),
      pool_(options.num_threads),
      inv_freq_(RopeInvFreq(config_.rope, config_.head_dim)) {}

std::unique_ptr<KvCache> Model::NewCache(int64_t capacity) const {
  capacity = std::clamp<int64_t>(capacity, 1, config_.MaxContext());
  return std::make_unique<KvCache>(NewBlockPool((capacity + kKvBlockSize - 1) / kKvBlockSize),
                                   capacity);
}

std::shared_ptr<KvBlockPool> Model::NewBlockPool(int64_t num_blocks) const {
  return std::make_shared<KvBlockPool>(config_.num_layers, config_.num_kv_heads * config_.head_dim,
                                       kKvBlockSize, num_blocks);
}

int64_t Model::KvBlockBytes() const {
  return KvBlockPool::BlockBytes(config_.num_layers, config_.num_kv_heads * config_.head_dim,
                                 kKvBlockSize);
}

void Model::MatMul(const WeightMatrix& w, const float* x, float* y, int64_t n, int64_t n_in,
                   int64_t n_out) {
  engine::MatMul(*kernels_, pool_, w, x, y, n);  // w is [n_out, n_in]
}

// The rows of one step: which sequence each token row belongs to and its position.
struct Model::StepRows {
  int64_t n = 0;                 // token rows in the step
  std::vector<int32_t> seq;      // [n] index into the batch
  std::vector<int64_t> pos;      // [n] position in its sequence
  std::vector<float> cos, sin;   // [n, head_dim / 2] rotary tables at those positions
  std::vector<KvCache*> caches;  // [batch]
  int64_t max_ctx = 0;           // the longest context a row attends to
};

Status Model::Plan(std::span<const BatchSequence> batch, StepRows* rows) {
  const ModelConfig& c = config_;
  if (batch.empty()) return InvalidArgument("no sequences to run");
  // Blocks each pool must give, to check them all before reserving any.
  std::vector<std::pair<const KvBlockPool*, int64_t>> pool_needs;
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchSequence& b = batch[i];
    if (b.cache == nullptr)
      return InvalidArgument("sequence " + std::to_string(i) + " has no cache");
    if (b.tokens.empty()) return InvalidArgument("no tokens to run");
    for (size_t j = 0; j < i; ++j) {
      if (batch[j].cache == b.cache) {
        return InvalidArgument("sequences " + std::to_string(j) + " and " + std::to_string(i) +
                               " share a cache");
      }
    }
    for (int32_t id : b.tokens) {
      if (id < 0 || id >= c.vocab_size) {
        return InvalidArgument("token id " + std::to_string(id) + " is outside the vocabulary (" +
                               std::to_string(c.vocab_size) + ")");
      }
    }
    const int64_t end = b.cache->size() + static_cast<int64_t>(b.tokens.size());
    if (end > b.cache->capacity()) {
      return ResourceExhausted("context of " + std::to_string(end) +
                               " positions exceeds the cache's " +
                               std::to_string(b.cache->capacity()));
    }
    const KvBlockPool* pool = &b.cache->pool();
    auto it = std::find_if(pool_needs.begin(), pool_needs.end(),
                           [&](const auto& p) { return p.first == pool; });
    if (it == pool_needs.end()) it = pool_needs.insert(pool_needs.end(), {pool, 0});
    it->second += b.cache->BlocksToReserve(end);
  }
  for (const auto& [pool, need] : pool_needs) {
    if (need > pool->free_blocks()) {
      return ResourceExhausted("the KV cache has " + std::to_string(pool->free_blocks()) +
                               " free blocks but the step needs " + std::to_string(need));
    }
  }
  const int64_t half = c.head_dim / 2;
  *rows = StepRows{};
  for (size_t i = 0; i < batch.size(); ++i) {
    const BatchSequence& b = batch[i];
    const int64_t first = b.cache->size(), n = static_cast<int64_t>(b.tokens.size());
    TF_RETURN_IF_ERROR(b.cache->Reserve(first + n));  // cannot fail: checked above
    rows->caches.push_back(b.cache);
    rows->cos.resize((rows->n + n) * half);
    rows->sin.resize((rows->n + n) * half);
    RopeTables(inv_freq_, first, n, rows->cos.data() + rows->n * half,
               rows->sin.data() + rows->n * half);
    for (int64_t t = 0; t < n; ++t) {
      rows->seq.push_back(static_cast<int32_t>(i));
      rows->pos.push_back(first + t);
    }
    rows->n += n;
    rows->max_ctx = std::max(rows->max_ctx, first + n);
  }
  return OkStatus();
}

Status Model::Forward(std::span<const int32_t> tokens, KvCache* cache, bool all_positions,
                      std::vector<float>* logits) {
  BatchSequence one[1] = {{cache, tokens, true}};
  StepRows rows;
  TF_RETURN_IF_ERROR(Plan(one, &rows));
  std::vector<int64_t> logit_rows;
  for (int64_t t = all_positions ? 0 : rows.n - 1; t < rows.n; ++t) logit_rows.push_back(t);
  Run(one, rows, logit_rows, logits);
  return OkStatus();
}

Status Model::ForwardBatch(std::span<const BatchSequence> batch, std::vector<float>* logits) {
  StepRows rows;
  TF_RETURN_IF_ERROR(Plan(batch, &rows));
  std::vector<int64_t> logit_rows;
  int64_t end = 0;
  for (const BatchSequence& b : batch) {
    end += static_cast<int64_t>(b.tokens.size());
    if (b.want_logits) logit_rows.push_back(end - 1);
  }
  Run(batch, rows, logit_rows, logits);
  return OkStatus();
}

void Model::Run(std::span<const BatchSequence> batch, const StepRows& rows,
                const std::vector<int64_t>& logit_rows, std::vector<float>* logits) {
  const ModelConfig& c = config_;
  const int64_t n = rows.n, h = c.hidden_size;
  std::vector<float> x(n * h);  // [n, hidden]
  int64_t row = 0;
  for (const BatchSequence& b : batch) {
    for (int32_t id : b.tokens) {
      ReadRow(weights_.embed, id, x.data() + row * h);
      ++row;
    }
  }
  for (int64_t l = 0; l < c.num_layers; ++l) Layer(l, rows, x.data());
  for (const BatchSequence& b : batch) {
    b.cache->set_size(b.cache->size() + static_cast<int64_t>(b.tokens.size()));
  }

  const int64_t out_rows = static_cast<int64_t>(logit_rows.size());
  std::vector<float> normed(out_rows * h);  // [out_rows, hidden]
  for (int64_t i = 0; i < out_rows; ++i) {
    kernels_->rms_norm(x.data() + logit_rows[i] * h, weights_.final_norm, normed.data() + i * h, h,
                       c.rms_norm_eps);
  }
  logits->resize(out_rows * c.vocab_size);  // [out_rows, vocab]
  if (out_rows > 0)
    MatMul(weights_.lm_head, normed.data(), logits->data(), out_rows, h, c.vocab_size);
}

void Model::Layer(int64_t l, const StepRows& rows, float* x) {
  const ModelConfig& c = config_;
  const LayerWeights& w = weights_.layers[l];
  const int64_t n = rows.n;
  const int64_t h = c.hidden_size, hd = c.head_dim, half = hd / 2;
  const int64_t q_dim = c.num_heads * hd, kv_dim = c.num_kv_heads * hd;

  // Attention block.
  std::vector<float> xn(n * h);  // [n, hidden]
  for (int64_t t = 0; t < n; ++t) {
    kernels_->rms_norm(x + t * h, w.attn_norm, xn.data() + t * h, h, c.rms_norm_eps);
  }
  std::vector<float> q(n * q_dim), k(n * kv_dim), v(n * kv_dim);  // [n, q_dim], [n, kv_dim] x2
  const MatMulPart qkv[] = {{&w.wq, q.data()}, {&w.wk, k.data()}, {&w.wv, v.data()}};
  MatMuls(*kernels_, pool_, qkv, xn.data(), n, h);  // one pass over the pool for the three
  AddBias(q.data(), w.bq, n, q_dim);
  AddBias(k.data(), w.bk, n, kv_dim);
  AddBias(v.data(), w.bv, n, kv_dim);
  for (int64_t t = 0; t < n; ++t) {
    const float* cos = rows.cos.data() + t * half;
    const float* sin = rows.sin.data() + t * half;
    for (int64_t head = 0; head < c.num_heads; ++head) {
      kernels_->rope(q.data() + t * q_dim + head * hd, cos, sin, half);
    }
    for (int64_t head = 0; head < c.num_kv_heads; ++head) {
      kernels_->rope(k.data() + t * kv_dim + head * hd, cos, sin, half);
    }
    // The token's keys and values into its sequence's block for its position.
    KvCache* cache = rows.caches[rows.seq[t]];
    const int64_t bs = cache->pool().block_size(), p = rows.pos[t];
    const int64_t slot = int64_t{cache->block_table()[p / bs]} * bs + p % bs;
    std::copy_n(k.data() + t * kv_dim, kv_dim, cache->pool().keys(l) + slot * kv_dim);
    std::copy_n(v.data() + t * kv_dim, kv_dim, cache->pool().values(l) + slot * kv_dim);
  }
  std::vector<float> attn(n * q_dim);  // [n, q_dim]
  const int64_t group = c.num_heads / c.num_kv_heads;
  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  const auto* kern = kernels_;
  // One task per (token, head); a token at position p sees its sequence's positions [0, p].
  // A task costs about 2 * n_ctx * head_dim multiply-adds; ranges get enough of them to be
  // worth a thread.
  const int64_t min_tasks = std::max<int64_t>(1, 32768 / (rows.max_ctx * hd));
  pool_.ParallelFor(
      n * c.num_heads,
      [&](int64_t begin, int64_t end) {
        std::vector<float> scratch(rows.max_ctx);  // [n_ctx]
        for (int64_t task = begin; task < end; ++task) {
          int64_t t = task / c.num_heads, head = task % c.num_heads;
          KvCache* cache = rows.caches[rows.seq[t]];
          KvBlockPool& pool = cache->pool();
          int64_t kv_off = (head / group) * hd;
          kern->attention_head(q.data() + t * q_dim + head * hd, pool.keys(l) + kv_off,
                               pool.values(l) + kv_off, cache->block_table().data(),
                               pool.block_size(), rows.pos[t] + 1, kv_dim, hd, scale,
                               scratch.data(), attn.data() + t * q_dim + head * hd);
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
  const MatMulPart gate_up[] = {{&w.w_gate, gate.data()}, {&w.w_up, up.data()}};
  MatMuls(*kernels_, pool_, gate_up, xn.data(), n, h);
  for (int64_t t = 0; t < n; ++t) {  // per token, so that no token's values depend on the batch
    kernels_->silu_mul(gate.data() + t * ff, up.data() + t * ff, gate.data() + t * ff, ff);
  }
  MatMul(w.w_down, gate.data(), out.data(), n, ff, h);
  AddInto(x, out.data(), n * h);
}

}  // namespace tf::engine
