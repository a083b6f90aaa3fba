#include "engine/formats/gguf_model.h"

#include <algorithm>
#include <cstring>

#include "engine/formats/gguf_metadata.h"
#include "engine/quant.h"

namespace tf::engine {
namespace {

std::string Shape(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// The rope scaling: rope.scaling.type (none, linear; yarn and others refused) with
// rope.scaling.factor, or the older rope.scale_linear.
void ReadRopeScaling(GgufMetadata& m, const std::string& arch, RopeConfig* rope) {
  std::string type = m.String(arch + ".rope.scaling.type", "none");
  if (type == "linear") {
    rope->type = RopeConfig::Type::kLinear;
    rope->factor = m.Number(arch + ".rope.scaling.factor", 1.0);
  } else if (type != "none") {
    m.Fail(arch + ".rope.scaling.type", "'" + type + "' is not supported (none and linear are)");
  } else if (m.Has(arch + ".rope.scale_linear")) {
    rope->type = RopeConfig::Type::kLinear;
    rope->factor = m.Number(arch + ".rope.scale_linear", 1.0);
  }
}

// The token ids that end generation: EOS, and EOT where it differs (Llama 3's <|eot_id|>).
std::vector<int32_t> EndIds(GgufMetadata& m) {
  std::vector<int32_t> ids;
  for (const char* key : {"tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"}) {
    if (!m.Has(key)) continue;
    auto id = static_cast<int32_t>(m.Int(key, 0, /*allow_zero=*/true));
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  }
  return ids;
}

// The engine's DType of a ggml tensor type (GgmlType lists only those the engine reads).
DType ToDType(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return DType::kF32;
    case GgmlType::kF16:
      return DType::kF16;
    case GgmlType::kBF16:
      return DType::kBF16;
    case GgmlType::kQ8_0:
      return DType::kQ8_0;
    case GgmlType::kQ4_0:
      return DType::kQ4_0;
    case GgmlType::kQ2_K:
      return DType::kQ2_K;
    case GgmlType::kQ3_K:
      return DType::kQ3_K;
    case GgmlType::kQ4_K:
      return DType::kQ4_K;
    case GgmlType::kQ5_K:
      return DType::kQ5_K;
    case GgmlType::kQ6_K:
      return DType::kQ6_K;
  }
  return DType::kF32;
}

class Loader {
 public:
  Loader(ModelWeights* w, const GgufFile& file) : w_(w), file_(file) {}

  bool Has(const std::string& name) const { return file_.FindTensor(name) != nullptr; }

  // The float32 data of vector `name` (norms, biases), which must have `shape`. With
  // rotary_heads > 0 the elements are put back from the converter's rotary order (see
  // UnpermuteRotaryRows) for that many heads.
  Result<const float*> Get(const std::string& name, const std::vector<int64_t>& shape,
                           int64_t rotary_heads = 0) {
    TF_ASSIGN_OR_RETURN(const GgufTensor* t, Find(name, shape));
    const uint8_t* src = Reordered(*t, shape[0], rotary_heads);
    bool aligned = reinterpret_cast<uintptr_t>(src) % alignof(float) == 0;
    if (t->type == GgmlType::kF32 && aligned) return reinterpret_cast<const float*>(src);
    auto* out = reinterpret_cast<float*>(NewWeightBuffer(w_, t->NumElements() * sizeof(float)));
    DequantizeRow(ToDType(t->type), src, t->NumElements(), out);
    return static_cast<const float*>(out);
  }

  // Matrix `name` of shape [rows, cols] in its own type, in place in the file unless its rows
  // are put back from the rotary order (then a reordered copy) or it is misaligned F32.
  Result<WeightMatrix> Matrix(const std::string& name, int64_t rows, int64_t cols,
                              int64_t rotary_heads = 0) {
    TF_ASSIGN_OR_RETURN(const GgufTensor* t, Find(name, {rows, cols}));
    WeightMatrix m{ToDType(t->type), Reordered(*t, rows, rotary_heads), rows, cols, name};
    if (m.type == DType::kF32 && reinterpret_cast<uintptr_t>(m.data) % alignof(float) != 0) {
      uint8_t* copy = NewWeightBuffer(w_, t->num_bytes);
      std::memcpy(copy, m.data, t->num_bytes);
      m.data = copy;
    }
    return m;
  }

 private:
  Result<const GgufTensor*> Find(const std::string& name, const std::vector<int64_t>& shape) {
    const GgufTensor* t = file_.FindTensor(name);
    if (t == nullptr) {
      return InvalidArgument(file_.path() + ": tensor '" + name +
                             "' is missing; the metadata implies it with shape " + Shape(shape));
    }
    if (t->Shape() != shape) {
      return InvalidArgument(file_.path() + ": tensor '" + name + "' has shape " +
                             Shape(t->Shape()) + " but the metadata implies " + Shape(shape));
    }
    return t;
  }

  // t's bytes, or with rotary_heads > 0 a copy (owned by the weights) with its `rows` rows put
  // back from the rotary order.
  const uint8_t* Reordered(const GgufTensor& t, int64_t rows, int64_t rotary_heads) {
    if (rotary_heads == 0) return t.data;
    uint8_t* out = NewWeightBuffer(w_, t.num_bytes);
    UnpermuteRotaryRows(t.data, t.num_bytes / static_cast<size_t>(rows), rotary_heads,
                        rows / rotary_heads, out);
    return out;
  }

  ModelWeights* w_;
  const GgufFile& file_;
};

}  // namespace

void UnpermuteRotaryRows(const uint8_t* src, size_t row_bytes, int64_t n_heads, int64_t head_dim,
                         uint8_t* dst) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < half; ++i) {
      for (int64_t j = 0; j < 2; ++j) {
        int64_t from = h * head_dim + 2 * i + j, to = h * head_dim + j * half + i;
        std::memcpy(dst + to * row_bytes, src + from * row_bytes, row_bytes);
      }
    }
  }
}

Result<ModelConfig> GgufModelConfig(const GgufFile& file) {
  GgufMetadata m(file);
  ModelConfig c;
  std::string arch = m.String("general.architecture");
  TF_RETURN_IF_ERROR(m.status());
  if (arch != "llama" && arch != "qwen2") {
    return InvalidArgument(file.path() + ": general.architecture '" + arch +
                           "' is not supported (llama, which Mistral files use too, and qwen2 "
                           "are)");
  }
  c.model_type = arch;
  c.hidden_size = m.Int(arch + ".embedding_length");
  c.intermediate_size = m.Int(arch + ".feed_forward_length");
  c.num_layers = m.Int(arch + ".block_count");
  c.num_heads = m.Int(arch + ".attention.head_count");
  c.num_kv_heads = m.Int(arch + ".attention.head_count_kv", c.num_heads);
  c.max_position_embeddings = m.Int(arch + ".context_length");
  c.rms_norm_eps = static_cast<float>(m.Number(arch + ".attention.layer_norm_rms_epsilon"));
  c.rope.theta = m.Number(arch + ".rope.freq_base", 10000.0);
  ReadRopeScaling(m, arch, &c.rope);
  TF_RETURN_IF_ERROR(m.status());
  if (c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgument(file.path() + ": " + arch + ".attention.head_count_kv (" +
                           std::to_string(c.num_kv_heads) + ") does not divide " + arch +
                           ".attention.head_count (" + std::to_string(c.num_heads) + ")");
  }
  if (m.Has(arch + ".attention.key_length")) {
    c.head_dim = m.Int(arch + ".attention.key_length");
  } else if (c.hidden_size % c.num_heads != 0) {
    return InvalidArgument(file.path() + ": " + arch + ".embedding_length (" +
                           std::to_string(c.hidden_size) + ") is not a multiple of " + arch +
                           ".attention.head_count and attention.key_length is not given");
  } else {
    c.head_dim = c.hidden_size / c.num_heads;
  }
  int64_t value_length = m.Int(arch + ".attention.value_length", c.head_dim);
  int64_t rope_dims = m.Int(arch + ".rope.dimension_count", c.head_dim);
  TF_RETURN_IF_ERROR(m.status());
  if (value_length != c.head_dim) {
    m.Fail(arch + ".attention.value_length",
           "differs from the key length " + std::to_string(c.head_dim) + " (not supported)");
  } else if (rope_dims != c.head_dim) {
    m.Fail(arch + ".rope.dimension_count",
           std::to_string(rope_dims) + " differs from the head size " + std::to_string(c.head_dim) +
               " (partial rotary embeddings are not supported)");
  } else if (c.head_dim % 2 != 0) {
    m.Fail(arch + ".attention.key_length", "must be even for rotary embeddings");
  }
  TF_RETURN_IF_ERROR(m.status());

  // The vocabulary: the embedding's rows, which vocab_size and the token list must not exceed.
  const GgufTensor* embed = file.FindTensor("token_embd.weight");
  if (embed == nullptr || embed->ne.size() != 2) {
    return InvalidArgument(file.path() + ": tensor 'token_embd.weight' is missing or not 2-D");
  }
  c.vocab_size = embed->ne[1];
  int64_t declared = m.Int(arch + ".vocab_size", c.vocab_size);
  TF_RETURN_IF_ERROR(m.status());
  if (declared != c.vocab_size) {
    return InvalidArgument(file.path() + ": " + arch + ".vocab_size (" + std::to_string(declared) +
                           ") differs from the rows of token_embd.weight (" +
                           std::to_string(c.vocab_size) + ")");
  }

  c.tie_word_embeddings = file.FindTensor("output.weight") == nullptr;
  c.qkv_bias = arch == "qwen2" || file.FindTensor("blk.0.attn_q.bias") != nullptr;
  c.o_bias = file.FindTensor("blk.0.attn_output.bias") != nullptr;
  if (const GgufTensor* factors = file.FindTensor("rope_freqs.weight")) {
    if (factors->Shape() != std::vector<int64_t>{c.head_dim / 2}) {
      return InvalidArgument(file.path() + ": tensor 'rope_freqs.weight' has shape " +
                             Shape(factors->Shape()) + " but the metadata implies [" +
                             std::to_string(c.head_dim / 2) + "]");
    }
    c.rope.freq_factors.resize(c.head_dim / 2);
    DequantizeRow(ToDType(factors->type), factors->data, c.head_dim / 2,
                  c.rope.freq_factors.data());
  }
  if (m.Has("tokenizer.ggml.bos_token_id")) {
    c.bos_token_id =
        static_cast<int32_t>(m.Int("tokenizer.ggml.bos_token_id", 0, /*allow_zero=*/true));
  }
  c.eos_token_ids = EndIds(m);
  TF_RETURN_IF_ERROR(m.status());
  for (int32_t id : c.eos_token_ids) {
    if (id >= c.vocab_size)
      m.Fail("tokenizer.ggml.eos_token_id", "is not below the vocabulary size");
  }
  if (c.bos_token_id && *c.bos_token_id >= c.vocab_size) {
    m.Fail("tokenizer.ggml.bos_token_id", "is not below the vocabulary size");
  }
  TF_RETURN_IF_ERROR(m.status());
  return c;
}

Result<ModelWeights> LoadGgufWeights(const std::shared_ptr<const GgufFile>& file,
                                     const ModelConfig& c) {
  ModelWeights w;
  w.storage.push_back(file);
  if (file->mapping() != nullptr) w.mappings.push_back(file->mapping());
  Loader l(&w, *file);
  const int64_t h = c.hidden_size, q_dim = c.num_heads * c.head_dim;
  const int64_t kv_dim = c.num_kv_heads * c.head_dim, ff = c.intermediate_size;
  // llama files keep q and k (and their biases) in the converter's rotary order.
  const bool reordered = c.model_type == "llama";
  const int64_t q_heads = reordered ? c.num_heads : 0, k_heads = reordered ? c.num_kv_heads : 0;
  TF_ASSIGN_OR_RETURN(w.embed, l.Matrix("token_embd.weight", c.vocab_size, h));
  for (int64_t i = 0; i < c.num_layers; ++i) {
    std::string p = "blk." + std::to_string(i) + ".";
    LayerWeights lw;
    TF_ASSIGN_OR_RETURN(lw.attn_norm, l.Get(p + "attn_norm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.wq, l.Matrix(p + "attn_q.weight", q_dim, h, q_heads));
    TF_ASSIGN_OR_RETURN(lw.wk, l.Matrix(p + "attn_k.weight", kv_dim, h, k_heads));
    TF_ASSIGN_OR_RETURN(lw.wv, l.Matrix(p + "attn_v.weight", kv_dim, h));
    TF_ASSIGN_OR_RETURN(lw.wo, l.Matrix(p + "attn_output.weight", h, q_dim));
    if (c.qkv_bias) {
      TF_ASSIGN_OR_RETURN(lw.bq, l.Get(p + "attn_q.bias", {q_dim}, q_heads));
      TF_ASSIGN_OR_RETURN(lw.bk, l.Get(p + "attn_k.bias", {kv_dim}, k_heads));
      TF_ASSIGN_OR_RETURN(lw.bv, l.Get(p + "attn_v.bias", {kv_dim}));
    }
    if (c.o_bias) {
      TF_ASSIGN_OR_RETURN(lw.bo, l.Get(p + "attn_output.bias", {h}));
    }
    TF_ASSIGN_OR_RETURN(lw.ffn_norm, l.Get(p + "ffn_norm.weight", {h}));
    TF_ASSIGN_OR_RETURN(lw.w_gate, l.Matrix(p + "ffn_gate.weight", ff, h));
    TF_ASSIGN_OR_RETURN(lw.w_up, l.Matrix(p + "ffn_up.weight", ff, h));
    TF_ASSIGN_OR_RETURN(lw.w_down, l.Matrix(p + "ffn_down.weight", h, ff));
    w.layers.push_back(std::move(lw));
  }
  TF_ASSIGN_OR_RETURN(w.final_norm, l.Get("output_norm.weight", {h}));
  if (c.tie_word_embeddings) {
    w.lm_head = w.embed;
  } else {
    TF_ASSIGN_OR_RETURN(w.lm_head, l.Matrix("output.weight", c.vocab_size, h));
  }
  return w;
}

}  // namespace tf::engine
