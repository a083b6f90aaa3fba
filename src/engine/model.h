// A Llama-family decoder (Llama 2/3, Mistral, Qwen2) on the CPU: load a Hugging Face checkpoint
// directory and run the forward pass.
//
// Thread safety: Load is thread-safe. Forward runs one call at a time (it uses the model's thread
// pool); the weights are read-only, so several Models may share nothing but the files.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/config.h"
#include "engine/kernels/kernels.h"
#include "engine/kv_cache.h"
#include "engine/quantize_weights.h"
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

struct ModelOptions {
  int num_threads = 0;                          // 0: one per hardware thread
  const kernels::KernelSet* kernels = nullptr;  // null: the best this CPU supports
  // Load-time quantisation of the F32/F16/BF16 weight matrices (see quantize_weights.h).
  Quantize quantize = Quantize::kNone;
};

// One sequence's share of a batched forward step (Model::ForwardBatch).
struct BatchSequence {
  KvCache* cache = nullptr;         // its tokens go at positions [cache->size(), + tokens)
  std::span<const int32_t> tokens;  // a prefill chunk or one decode token; at least one
  bool want_logits = true;          // whether to return the logits of its last token
};

class Model {
 public:
  // Reads a Hugging Face checkpoint directory (config.json and the safetensors weights, see
  // weights.h) or, when `path` is a GGUF file, that file (gguf_model.h), checking every tensor's
  // shape against the config. Errors name the file and what is wrong.
  static Result<std::unique_ptr<Model>> Load(const std::string& path, const ModelOptions& options);
  // A model over weights another loader built (see weights.h for how): checks them against the
  // config (CheckWeights), then quantises them as the options say. `config` must be valid (as
  // LoadModelConfig returns it).
  static Result<std::unique_ptr<Model>> FromWeights(ModelConfig config, ModelWeights weights,
                                                    const ModelOptions& options);

  const ModelConfig& config() const { return config_; }
  const kernels::KernelSet& kernels() const { return *kernels_; }
  const ModelWeights& weights() const { return weights_; }
  int num_threads() const { return pool_.num_threads(); }

  // An empty cache for one sequence of up to `capacity` positions (at most config().MaxContext()),
  // over a pool of its own just large enough.
  std::unique_ptr<KvCache> NewCache(int64_t capacity) const;
  // A pool of `num_blocks` KV-cache blocks of kKvBlockSize positions, for sequences to share.
  std::shared_ptr<KvBlockPool> NewBlockPool(int64_t num_blocks) const;
  // Bytes one block of NewBlockPool takes (keys and values of every layer).
  int64_t KvBlockBytes() const;

  // Runs `tokens` at positions [cache->size(), cache->size() + n), appends their keys and values
  // to the cache, and writes logits: [n, vocab] with all_positions, else only the last
  // position's [1, vocab]. InvalidArgument for an id outside the vocabulary; ResourceExhausted
  // when the cache is full. On error the cache is unchanged.
  Status Forward(std::span<const int32_t> tokens, KvCache* cache, bool all_positions,
                 std::vector<float>* logits);

  // One step over several sequences: every sequence's tokens are run together as one
  // [total tokens, hidden] activation, so each weight matrix is read once for the whole batch,
  // and attention reads each sequence's own cache. Each cache takes the blocks it needs from its
  // pool. logits: [sequences with want_logits, vocab], in batch order.
  //
  // A sequence's results do not depend on the rest of the batch or on how its tokens were split
  // into steps: every kernel computes each token's outputs in the same order whatever the batch,
  // so they are bit-identical to running it alone (the thread count changes nothing either).
  // InvalidArgument for an empty sequence, a null or repeated cache, or an id outside the
  // vocabulary; ResourceExhausted when a sequence would pass its capacity or its pool lacks the
  // blocks. On error no cache is changed.
  Status ForwardBatch(std::span<const BatchSequence> batch, std::vector<float>* logits);

 private:
  Model(ModelConfig config, ModelWeights weights, const ModelOptions& options);

  struct StepRows;  // where each token row of a step goes (model.cc)
  // Checks and reserves the batch's blocks, lays out its rows.
  Status Plan(std::span<const BatchSequence> batch, StepRows* rows);
  // Runs the planned rows through every layer and writes the logits of logit_rows.
  void Run(std::span<const BatchSequence> batch, const StepRows& rows,
           const std::vector<int64_t>& logit_rows, std::vector<float>* logits);
  // One decoder layer over x: [n, hidden], in place.
  void Layer(int64_t layer, const StepRows& rows, float* x);
  // y: [n, n_out] = x: [n, n_in] times w: [n_out, n_in] transposed, split over the pool.
  void MatMul(const WeightMatrix& w, const float* x, float* y, int64_t n, int64_t n_in,
              int64_t n_out);

  ModelConfig config_;
  ModelWeights weights_;
  const kernels::KernelSet* kernels_;
  ThreadPool pool_;
  std::vector<float> inv_freq_;  // [head_dim / 2]
};

}  // namespace tf::engine
