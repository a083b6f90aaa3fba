#include "engine/weights.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <new>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <vector>

#include "engine/kernels/packed_blocks.h"
#include "engine/quant.h"

namespace tf::engine {
namespace {

std::string Shape(const std::vector<int64_t>& shape) {
  TensorView v;
  v.shape = shape;
  return v.ShapeString();
}

// The checkpoint files of `dir`: the single file, or the shards of the index.
Result<std::vector<std::string>> CheckpointFiles(const std::string& dir) {
  namespace fs = std::filesystem;
  std::string single = dir + "/model.safetensors";
  if (fs::exists(single)) return std::vector<std::string>{single};
  std::string index_path = dir + "/model.safetensors.index.json";
  std::ifstream in(index_path);
  if (!in) {
    return NotFound(dir + ": has neither model.safetensors nor model.safetensors.index.json");
  }
  std::stringstream ss;
  ss << in.rdbuf();
  auto index = nlohmann::json::parse(ss.str(), nullptr, /*allow_exceptions=*/false);
  if (index.is_discarded() || !index.is_object() || !index.contains("weight_map") ||
      !index["weight_map"].is_object()) {
    return InvalidArgument(index_path + ": not JSON with a \"weight_map\" object");
  }
  std::set<std::string> shards;
  for (const auto& [tensor, file] : index["weight_map"].items()) {
    std::string name = file.is_string() ? file.get<std::string>() : "";
    if (name.empty() || name.find('/') != std::string::npos || name[0] == '.') {
      return InvalidArgument(index_path + ": tensor '" + tensor + "' maps to a bad file name " +
                             file.dump());
    }
    shards.insert(name);
  }
  std::vector<std::string> out;
  for (const auto& s : shards) out.push_back(dir + "/" + s);
  return out;
}

class Loader {
 public:
  Loader(ModelWeights* w, std::vector<const SafetensorsFile*> files, std::string config_name)
      : w_(w), files_(std::move(files)), config_name_(std::move(config_name)) {
    for (const SafetensorsFile* file : files_) {
      for (const auto& t : file->tensors()) found_.emplace(t.name, Found{&t, file});
    }
  }

  bool Has(const std::string& name) const { return found_.count(name) > 0; }

  // The float32 data of tensor `name`, which must have shape `shape`.
  Result<const float*> Get(const std::string& name, const std::vector<int64_t>& shape) {
    TF_ASSIGN_OR_RETURN(const TensorView* t, Find(name, shape));
    bool aligned = reinterpret_cast<uintptr_t>(t->data) % alignof(float) == 0;
    if (t->dtype == DType::kF32 && aligned) return reinterpret_cast<const float*>(t->data);
    return Converted(*t);
  }

  // Matrix `name` of shape [rows, cols], in place in its own type (F32 copied if misaligned).
  Result<WeightMatrix> Matrix(const std::string& name, int64_t rows, int64_t cols) {
    TF_ASSIGN_OR_RETURN(const TensorView* t, Find(name, {rows, cols}));
    WeightMatrix m{t->dtype, t->data, rows, cols, name};
    if (t->dtype == DType::kF32 && reinterpret_cast<uintptr_t>(t->data) % alignof(float) != 0) {
      m.data = Converted(*t);
    }
    return m;
  }

 private:
  struct Found {
    const TensorView* view;
    const SafetensorsFile* file;
  };

  Result<const TensorView*> Find(const std::string& name, const std::vector<int64_t>& shape) {
    auto it = found_.find(name);
    if (it == found_.end()) {
      std::string where = files_.size() == 1 ? files_[0]->path() : "the checkpoint";
      return InvalidArgument(where + ": tensor '" + name + "' is missing; " + config_name_ +
                             " needs it with shape " + Shape(shape));
    }
    const TensorView& t = *it->second.view;
    if (t.shape != shape) {
      return InvalidArgument(it->second.file->path() + ": tensor '" + name + "' has shape " +
                             t.ShapeString() + " but " + config_name_ + " implies " + Shape(shape));
    }
    return &t;
  }

  const float* Converted(const TensorView& t) {
    auto* out = reinterpret_cast<float*>(NewWeightBuffer(w_, t.NumElements() * sizeof(float)));
    ConvertToF32(t.dtype, t.data, t.NumElements(), out);
    return out;
  }

  ModelWeights* w_;
  std::vector<const SafetensorsFile*> files_;
  std::string config_name_;
  std::map<std::string, Found> found_;
};

Status CheckMatrix(const WeightMatrix& m, int64_t rows, int64_t cols, const std::string& role) {
  std::string what = "weight matrix '" + (m.name.empty() ? role : m.name) + "'";
  if (m.data == nullptr && (m.packed == nullptr || !IsBlockType(m.type))) {
    return InvalidArgument(what + " (" + role + ") has no data");
  }
  if (m.rows != rows || m.cols != cols) {
    return InvalidArgument(what + " has shape " + Shape({m.rows, m.cols}) +
                           " but the config implies " + Shape({rows, cols}) + " (" + role + ")");
  }
  if (cols % BlockWeights(m.type) != 0) {
    return InvalidArgument(what + " is " + std::string(DTypeName(m.type)) + " with " +
                           std::to_string(cols) + " columns; " + std::string(DTypeName(m.type)) +
                           " needs a multiple of " + std::to_string(BlockWeights(m.type)));
  }
  if (m.type == DType::kF32 && reinterpret_cast<uintptr_t>(m.data) % alignof(float) != 0) {
    return InvalidArgument(what + " is F32 data that is not 4-byte aligned");
  }
  return OkStatus();
}

}  // namespace

uint8_t* NewWeightBuffer(ModelWeights* w, size_t bytes) {
  // Buffers of 64 KiB or more are mapped, not allocated and cleared: the system gives a page
  // (zeroed) only when it is first written, and takes it back when the buffer goes (a freed
  // heap block may stay with the process), so a buffer filled a piece at a time while others
  // are freed (PlaceMatrices) does not hold all its pages from the start. Those of 2 MiB or
  // more start on a 2 MiB boundary and ask for transparent huge pages before they are touched:
  // a decode step streams every matrix once, and with 4 KiB pages that is a TLB miss every
  // 4 KiB.
  constexpr size_t kMapped = size_t{64} << 10, kHuge = size_t{2} << 20, kPage = 4096;
  if (bytes >= kMapped) {
    const size_t align = bytes >= kHuge ? kHuge : 1;
    const size_t unit = bytes >= kHuge ? kHuge : kPage;
    const size_t size = (bytes + unit - 1) / unit * unit;
    const size_t extra = align > 1 ? align : 0;
    void* mapped =
        ::mmap(nullptr, size + extra, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mapped == MAP_FAILED) throw std::bad_alloc();
    // Keep the aligned `size` bytes within; unmap the rest on either side.
    auto* start = static_cast<uint8_t*>(mapped);
    auto* buffer = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(start) + align - 1) /
                                              align * align);
    if (buffer > start) ::munmap(start, buffer - start);
    uint8_t* end = start + size + extra;
    if (buffer + size < end) ::munmap(buffer + size, end - (buffer + size));
    if (align > 1) ::madvise(buffer, size, MADV_HUGEPAGE);  // advice: without it, 4 KiB pages
    w->storage.emplace_back(buffer,
                            [size](const void* p) { ::munmap(const_cast<void*>(p), size); });
    return buffer;
  }
  static constexpr std::align_val_t kAlign{64};
  auto* buffer = static_cast<uint8_t*>(::operator new(std::max<size_t>(bytes, 1), kAlign));
  std::memset(buffer, 0, bytes);
  w->storage.emplace_back(buffer,
                          [](const void* p) { ::operator delete(const_cast<void*>(p), kAlign); });
  return buffer;
}

void ReadRow(const WeightMatrix& m, int64_t r, float* out) {
  if (m.data == nullptr && m.packed != nullptr) {
    std::vector<uint8_t> row(m.row_bytes());
    if (m.type == DType::kQ4_0) {
      kernels::UnpackQ4_0Rows(m.packed, m.cols, r, r + 1, row.data());
    } else {
      kernels::UnpackQ8_0Rows(m.packed, m.cols, r, r + 1, row.data());
    }
    DequantizeRow(m.type, row.data(), m.cols, out);
    return;
  }
  DequantizeRow(m.type, m.row(r), m.cols, out);
}

std::string MatrixTypesSummary(const ModelWeights& w) {
  std::map<DType, int> counts;
  for (const LayerWeights& l : w.layers) {
    for (const WeightMatrix* m : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) {
      ++counts[m->type];
    }
  }
  ++counts[w.embed.type];
  if (w.lm_head.data != w.embed.data) ++counts[w.lm_head.type];
  std::string out;
  for (const auto& [type, n] : counts) {
    out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + std::string(DTypeName(type));
  }
  return out;
}

Status CheckWeights(const ModelConfig& c, const ModelWeights& w) {
  const int64_t h = c.hidden_size, q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim, ff = c.intermediate_size;
  TF_RETURN_IF_ERROR(CheckMatrix(w.embed, c.vocab_size, h, "token embedding"));
  TF_RETURN_IF_ERROR(CheckMatrix(w.lm_head, c.vocab_size, h, "LM head"));
  if (w.final_norm == nullptr) return InvalidArgument("the final norm's weights are missing");
  if (static_cast<int64_t>(w.layers.size()) != c.num_layers) {
    return InvalidArgument("the weights have " + std::to_string(w.layers.size()) +
                           " layers but the config has " + std::to_string(c.num_layers));
  }
  for (int64_t i = 0; i < c.num_layers; ++i) {
    const LayerWeights& l = w.layers[i];
    const std::string layer = "layer " + std::to_string(i) + " ";
    TF_RETURN_IF_ERROR(CheckMatrix(l.wq, q_dim, h, layer + "q projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.wk, kv_dim, h, layer + "k projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.wv, kv_dim, h, layer + "v projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.wo, h, q_dim, layer + "output projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.w_gate, ff, h, layer + "gate projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.w_up, ff, h, layer + "up projection"));
    TF_RETURN_IF_ERROR(CheckMatrix(l.w_down, h, ff, layer + "down projection"));
    if (l.attn_norm == nullptr || l.ffn_norm == nullptr) {
      return InvalidArgument(layer + "norm weights are missing");
    }
    if (c.qkv_bias && (l.bq == nullptr || l.bk == nullptr || l.bv == nullptr)) {
      return InvalidArgument(layer + "q/k/v biases are missing; the config has them");
    }
    if (c.o_bias && l.bo == nullptr) {
      return InvalidArgument(layer + "output bias is missing; the config has it");
    }
  }
  return OkStatus();
}

Result<ModelWeights> LoadWeights(const std::string& dir, const ModelConfig& c) {
  ModelWeights w;
  TF_ASSIGN_OR_RETURN(auto paths, CheckpointFiles(dir));
  std::vector<const SafetensorsFile*> files;
  for (const auto& path : paths) {
    TF_ASSIGN_OR_RETURN(auto file, SafetensorsFile::Open(path));
    files.push_back(file.get());
    w.mappings.push_back(file->mapping());
    w.storage.push_back(std::shared_ptr<const SafetensorsFile>(std::move(file)));
  }
  Loader l(&w, std::move(files), dir + "/config.json");
  const int64_t h = c.hidden_size, q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim, ff = c.intermediate_size;
  TF_ASSIGN_OR_RETURN(w.embed, l.Matrix("model.embed_tokens.weight", c.vocab_size, h));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights lw;
    TF_ASSIGN_OR_RETURN(lw.attn_norm, l.Get(p + "input_layernorm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.wq, l.Matrix(p + "self_attn.q_proj.weight", q_dim, h));
    TF_ASSIGN_OR_RETURN(lw.wk, l.Matrix(p + "self_attn.k_proj.weight", kv_dim, h));
    TF_ASSIGN_OR_RETURN(lw.wv, l.Matrix(p + "self_attn.v_proj.weight", kv_dim, h));
    TF_ASSIGN_OR_RETURN(lw.wo, l.Matrix(p + "self_attn.o_proj.weight", h, q_dim));
    if (c.qkv_bias) {
      TF_ASSIGN_OR_RETURN(lw.bq, l.Get(p + "self_attn.q_proj.bias", {q_dim}));
      TF_ASSIGN_OR_RETURN(lw.bk, l.Get(p + "self_attn.k_proj.bias", {kv_dim}));
      TF_ASSIGN_OR_RETURN(lw.bv, l.Get(p + "self_attn.v_proj.bias", {kv_dim}));
    }
    if (c.o_bias) {
      TF_ASSIGN_OR_RETURN(lw.bo, l.Get(p + "self_attn.o_proj.bias", {h}));
    }
    TF_ASSIGN_OR_RETURN(lw.ffn_norm, l.Get(p + "post_attention_layernorm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.w_gate, l.Matrix(p + "mlp.gate_proj.weight", ff, h));
    TF_ASSIGN_OR_RETURN(lw.w_up, l.Matrix(p + "mlp.up_proj.weight", ff, h));
    TF_ASSIGN_OR_RETURN(lw.w_down, l.Matrix(p + "mlp.down_proj.weight", h, ff));
    w.layers.push_back(std::move(lw));
  }
  TF_ASSIGN_OR_RETURN(w.final_norm, l.Get("model.norm.weight", {h}));
  if (c.tie_word_embeddings && !l.Has("lm_head.weight")) {
    w.lm_head = w.embed;
  } else {
    TF_ASSIGN_OR_RETURN(w.lm_head, l.Matrix("lm_head.weight", c.vocab_size, h));
  }
  return w;
}

}  // namespace tf::engine
