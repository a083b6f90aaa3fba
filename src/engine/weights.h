// A checkpoint's tensors, found by their Hugging Face names and checked against the config.
//
// In this version every weight is float32 in memory: F32 tensors are used in place from the
// mapped file (copied only if misaligned); BF16 and F16 tensors are converted to float32 when
// loaded, so they take twice their file size in memory. Computing on 16-bit weights directly
// comes with the quantised formats.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/config.h"
#include "engine/safetensors.h"

namespace tf::engine {

class GgufFile;

struct LayerWeights {
  const float* attn_norm;     // [hidden]
  const float* wq;            // [num_heads * head_dim, hidden]
  const float* wk;            // [num_kv_heads * head_dim, hidden]
  const float* wv;            // [num_kv_heads * head_dim, hidden]
  const float* wo;            // [hidden, num_heads * head_dim]
  const float* bq = nullptr;  // [num_heads * head_dim], with qkv_bias
  const float* bk = nullptr;  // [num_kv_heads * head_dim], with qkv_bias
  const float* bv = nullptr;  // [num_kv_heads * head_dim], with qkv_bias
  const float* bo = nullptr;  // [hidden], with o_bias
  const float* ffn_norm;      // [hidden]
  const float* w_gate;        // [intermediate, hidden]
  const float* w_up;          // [intermediate, hidden]
  const float* w_down;        // [hidden, intermediate]
};

struct ModelWeights {
  const float* embed;  // [vocab, hidden]
  std::vector<LayerWeights> layers;
  const float* final_norm;  // [hidden]
  const float* lm_head;     // [vocab, hidden]; the embedding when tied

  // What the pointers point into.
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  std::shared_ptr<const GgufFile> gguf;  // a model loaded from a GGUF file (gguf_model.h)
  std::vector<std::vector<float>> converted;
};

// Opens dir/model.safetensors, or the shards that dir/model.safetensors.index.json lists, and
// finds every tensor the config needs. A missing tensor, or one whose shape differs from what
// the config implies, is InvalidArgument naming the file, the tensor, and both shapes.
Result<ModelWeights> LoadWeights(const std::string& dir, const ModelConfig& config);

}  // namespace tf::engine
