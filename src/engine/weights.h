// A checkpoint's tensors, found by their Hugging Face names and checked against the config.
//
// The 2-D weights (projections, LM head, embedding) are WeightMatrix values: typed rows used in
// place where possible. From safetensors, F32, F16 and BF16 tensors point into the mapped file
// (F32 is copied only if it is not 4-byte aligned) until Model::FromWeights moves them into the
// model's own buffer (PlaceMatrices); the kernels compute on the 16-bit types directly. Norms
// and biases are float32 (F16/BF16 ones converted at load).
//
// Other loaders (GGUF) build a ModelWeights themselves and hand it to Model::FromWeights:
//   - every WeightMatrix gets its type, rows and cols ([out, in] as Hugging Face stores them:
//     one row per output) and data pointing at rows * RowBytes(type, cols) bytes, row after row
//     (Q8_0/Q4_0 blocks run along a row, so cols must be a multiple of 32); F32 data must be
//     4-byte aligned, the other types may have any alignment; `name` is the tensor's name in
//     its file, used in errors;
//   - norms and biases are float32 pointers (4-byte aligned);
//   - `storage` keeps alive whatever the pointers point into (a mapped file, a buffer made with
//     NewWeightBuffer); the ModelWeights may be moved, so the pointed-to bytes must not move;
//     `mappings` lists the mapped files, so that matrices are moved out of them.
// Model::FromWeights checks every shape against the config (CheckWeights) before using them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/config.h"
#include "engine/dtype.h"
#include "engine/formats/mapped_file.h"
#include "engine/formats/safetensors.h"

namespace tf::engine {

struct WeightMatrix {
  DType type = DType::kF32;
  const void* data = nullptr;  // [rows, cols] of `type`: rows * RowBytes(type, cols) bytes
  int64_t rows = 0;
  int64_t cols = 0;
  std::string name;  // the tensor's name in its file, for errors
  // Q8_0 / Q4_0 only: the same rows repacked for the kernel set's packed matmul
  // (kernels/packed_blocks.h), which Model::FromWeights makes where the kernels have one; null
  // otherwise. Loaders leave it null. Rows quantised at load are then not kept as rows: `data`
  // is null and the packed copy is all there is (ReadRow reads it; a model whose kernels have
  // no packed matmul unpacks it into rows of its own).
  const void* packed = nullptr;

  size_t row_bytes() const { return RowBytes(type, cols); }
  // Row r as stored; only where data is not null.
  const uint8_t* row(int64_t r) const {
    return static_cast<const uint8_t*>(data) + static_cast<size_t>(r) * row_bytes();
  }
};

struct LayerWeights {
  const float* attn_norm;     // [hidden]
  WeightMatrix wq;            // [num_heads * head_dim, hidden]
  WeightMatrix wk;            // [num_kv_heads * head_dim, hidden]
  WeightMatrix wv;            // [num_kv_heads * head_dim, hidden]
  WeightMatrix wo;            // [hidden, num_heads * head_dim]
  const float* bq = nullptr;  // [num_heads * head_dim], with qkv_bias
  const float* bk = nullptr;  // [num_kv_heads * head_dim], with qkv_bias
  const float* bv = nullptr;  // [num_kv_heads * head_dim], with qkv_bias
  const float* bo = nullptr;  // [hidden], with o_bias
  const float* ffn_norm;      // [hidden]
  WeightMatrix w_gate;        // [intermediate, hidden]
  WeightMatrix w_up;          // [intermediate, hidden]
  WeightMatrix w_down;        // [hidden, intermediate]
};

struct ModelWeights {
  WeightMatrix embed;  // [vocab, hidden]; read one row per token
  std::vector<LayerWeights> layers;
  const float* final_norm;  // [hidden]
  WeightMatrix lm_head;     // [vocab, hidden]; the embedding when tied

  // What the pointers point into: mapped files, converted or quantised buffers.
  std::vector<std::shared_ptr<const void>> storage;
  // The read-only file mappings among them, whose pages a matrix no longer read can give back
  // (MappedFile::DropPages; PlaceMatrices does once it has copied a matrix).
  std::vector<const MappedFile*> mappings;
  // Buffers in `storage` that hold one matrix's rows quantised at load and nothing else
  // (QuantizeWeights): PlaceMatrices frees each once that matrix has its packed copy.
  std::vector<const void*> quantised_rows;
};

// A zeroed buffer of `bytes` bytes, 64-byte aligned, owned by w->storage.
uint8_t* NewWeightBuffer(ModelWeights* w, size_t bytes);

// Writes row `r` of m as float32 (from its packed copy where it keeps no rows). out: [m.cols].
void ReadRow(const WeightMatrix& m, int64_t r, float* out);

// How many weight matrices (layers' projections, LM head, embedding; a tied head counted once)
// have each type, in DType order: "2 F32, 14 Q8_0".
std::string MatrixTypesSummary(const ModelWeights& w);

// Every matrix and vector the config needs is present with the config's shape, and block-format
// matrices have whole blocks per row. InvalidArgument naming the tensor otherwise.
Status CheckWeights(const ModelConfig& config, const ModelWeights& w);

// Opens dir/model.safetensors, or the shards that dir/model.safetensors.index.json lists, and
// finds every tensor the config needs. A missing tensor, or one whose shape differs from what
// the config implies, is InvalidArgument naming the file, the tensor, and both shapes.
Result<ModelWeights> LoadWeights(const std::string& dir, const ModelConfig& config);

}  // namespace tf::engine
