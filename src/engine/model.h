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
#include "engine/thread_pool.h"
#include "engine/weights.h"

namespace tf::engine {

struct ModelOptions {
  int num_threads = 0;                          // 0: one per hardware thread
  const kernels::KernelSet* kernels = nullptr;  // null: the best this CPU supports
};

class Model {
 public:
  // Reads dir/config.json and the safetensors weights (see weights.h), checking every tensor's
  // shape against the config. Errors name the file and what is wrong.
  static Result<std::unique_ptr<Model>> Load(const std::string& dir, const ModelOptions& options);

  const ModelConfig& config() const { return config_; }
  const kernels::KernelSet& kernels() const { return *kernels_; }
  int num_threads() const { return pool_.num_threads(); }

  // An empty cache for one sequence of up to `capacity` positions (at most config().MaxContext()).
  std::unique_ptr<KvCache> NewCache(int64_t capacity) const;

  // Runs `tokens` at positions [cache->size(), cache->size() + n), appends their keys and values
  // to the cache, and writes logits: [n, vocab] with all_positions, else only the last
  // position's [1, vocab]. InvalidArgument for an id outside the vocabulary; ResourceExhausted
  // when the cache is full. On error the cache is unchanged.
  Status Forward(std::span<const int32_t> tokens, KvCache* cache, bool all_positions,
                 std::vector<float>* logits);

 private:
  Model(ModelConfig config, ModelWeights weights, const ModelOptions& options);

  // One decoder layer over x: [n, hidden], in place.
  void Layer(int64_t layer, int64_t n, int64_t first_pos, const float* cos, const float* sin,
             KvCache* cache, float* x);
  // y: [n, n_out] = x: [n, n_in] times w: [n_out, n_in] transposed, split over the pool.
  void MatMul(const float* w, const float* x, float* y, int64_t n, int64_t n_in, int64_t n_out);

  ModelConfig config_;
  ModelWeights weights_;
  const kernels::KernelSet* kernels_;
  ThreadPool pool_;
  std::vector<float> inv_freq_;  // [head_dim / 2]
};

}  // namespace tf::engine
