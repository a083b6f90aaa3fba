#include "engine/weights.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

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
  Loader(ModelWeights* w, std::string config_name) : w_(w), config_name_(std::move(config_name)) {}

  void Index() {
    for (const auto& file : w_->files) {
      for (const auto& t : file->tensors()) found_.emplace(t.name, Found{&t, file.get()});
    }
  }

  bool Has(const std::string& name) const { return found_.count(name) > 0; }

  // The float32 data of tensor `name`, which must have shape `shape`.
  Result<const float*> Get(const std::string& name, const std::vector<int64_t>& shape) {
    auto it = found_.find(name);
    if (it == found_.end()) {
      std::string where = w_->files.size() == 1 ? w_->files[0]->path() : "the checkpoint";
      return InvalidArgument(where + ": tensor '" + name + "' is missing; " + config_name_ +
                             " needs it with shape " + Shape(shape));
    }
    const TensorView& t = *it->second.view;
    if (t.shape != shape) {
      return InvalidArgument(it->second.file->path() + ": tensor '" + name + "' has shape " +
                             t.ShapeString() + " but " + config_name_ + " implies " + Shape(shape));
    }
    bool aligned = reinterpret_cast<uintptr_t>(t.data) % alignof(float) == 0;
    if (t.dtype == DType::kF32 && aligned) return reinterpret_cast<const float*>(t.data);
    std::vector<float>& out = w_->converted.emplace_back(t.NumElements());
    ConvertToF32(t.dtype, t.data, out.size(), out.data());
    return static_cast<const float*>(out.data());
  }

 private:
  struct Found {
    const TensorView* view;
    const SafetensorsFile* file;
  };
  ModelWeights* w_;
  std::string config_name_;
  std::map<std::string, Found> found_;
};

}  // namespace

Result<ModelWeights> LoadWeights(const std::string& dir, const ModelConfig& c) {
  ModelWeights w;
  TF_ASSIGN_OR_RETURN(auto paths, CheckpointFiles(dir));
  for (const auto& path : paths) {
    TF_ASSIGN_OR_RETURN(auto file, SafetensorsFile::Open(path));
    w.files.push_back(std::move(file));
  }
  Loader l(&w, dir + "/config.json");
  l.Index();
  const int64_t h = c.hidden_size, q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim, ff = c.intermediate_size;
  TF_ASSIGN_OR_RETURN(w.embed, l.Get("model.embed_tokens.weight", {c.vocab_size, h}));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    std::string p = "model.layers." + std::to_string(i) + ".";
    LayerWeights lw;
    TF_ASSIGN_OR_RETURN(lw.attn_norm, l.Get(p + "input_layernorm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.wq, l.Get(p + "self_attn.q_proj.weight", {q_dim, h}));
    TF_ASSIGN_OR_RETURN(lw.wk, l.Get(p + "self_attn.k_proj.weight", {kv_dim, h}));
    TF_ASSIGN_OR_RETURN(lw.wv, l.Get(p + "self_attn.v_proj.weight", {kv_dim, h}));
    TF_ASSIGN_OR_RETURN(lw.wo, l.Get(p + "self_attn.o_proj.weight", {h, q_dim}));
    if (c.qkv_bias) {
      TF_ASSIGN_OR_RETURN(lw.bq, l.Get(p + "self_attn.q_proj.bias", {q_dim}));
      TF_ASSIGN_OR_RETURN(lw.bk, l.Get(p + "self_attn.k_proj.bias", {kv_dim}));
      TF_ASSIGN_OR_RETURN(lw.bv, l.Get(p + "self_attn.v_proj.bias", {kv_dim}));
    }
    if (c.o_bias) {
      TF_ASSIGN_OR_RETURN(lw.bo, l.Get(p + "self_attn.o_proj.bias", {h}));
    }
    TF_ASSIGN_OR_RETURN(lw.ffn_norm, l.Get(p + "post_attention_layernorm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.w_gate, l.Get(p + "mlp.gate_proj.weight", {ff, h}));
    TF_ASSIGN_OR_RETURN(lw.w_up, l.Get(p + "mlp.up_proj.weight", {ff, h}));
    TF_ASSIGN_OR_RETURN(lw.w_down, l.Get(p + "mlp.down_proj.weight", {h, ff}));
    w.layers.push_back(lw);
  }
  TF_ASSIGN_OR_RETURN(w.final_norm, l.Get("model.norm.weight", {h}));
  if (c.tie_word_embeddings && !l.Has("lm_head.weight")) {
    w.lm_head = w.embed;
  } else {
    TF_ASSIGN_OR_RETURN(w.lm_head, l.Get("lm_head.weight", {c.vocab_size, h}));
  }
  return w;
}

}  // namespace tf::engine
