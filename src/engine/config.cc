#include "engine/config.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace tf::engine {
namespace {

using Json = nlohmann::json;

// Reads fields of one JSON object, recording the first error with the file name and field.
class Fields {
 public:
  Fields(const Json& j, std::string_view file, std::string prefix = "")
      : j_(j), file_(file), prefix_(std::move(prefix)) {}

  bool Has(const char* key) const { return j_.contains(key) && !j_[key].is_null(); }

  // A positive (or, with allow_zero, non-negative) integer; required unless `fallback` is set.
  int64_t Int(const char* key, std::optional<int64_t> fallback = std::nullopt,
              bool allow_zero = false) {
    if (!Has(key)) {
      if (!fallback) Fail(key, "is missing");
      return fallback.value_or(0);
    }
    const Json& v = j_[key];
    if (!v.is_number_integer() || v.get<int64_t>() < (allow_zero ? 0 : 1)) {
      Fail(key, "must be a " + std::string(allow_zero ? "non-negative" : "positive") +
                    " integer, not " + v.dump());
      return 0;
    }
    return v.get<int64_t>();
  }

  double Number(const char* key, double fallback) {
    if (!Has(key)) return fallback;
    const Json& v = j_[key];
    if (!v.is_number() || !(v.get<double>() > 0)) {
      Fail(key, "must be a positive number, not " + v.dump());
      return fallback;
    }
    return v.get<double>();
  }

  bool Bool(const char* key, bool fallback) {
    if (!Has(key)) return fallback;
    if (!j_[key].is_boolean()) {
      Fail(key, "must be true or false, not " + j_[key].dump());
      return fallback;
    }
    return j_[key].get<bool>();
  }

  std::string String(const char* key, std::string fallback) {
    if (!Has(key)) return fallback;
    if (!j_[key].is_string()) {
      Fail(key, "must be a string, not " + j_[key].dump());
      return fallback;
    }
    return j_[key].get<std::string>();
  }

  // One token id or a list of them.
  std::vector<int32_t> TokenIds(const char* key) {
    std::vector<int32_t> out;
    if (!Has(key)) return out;
    const Json& v = j_[key];
    for (const Json& id : v.is_array() ? v : Json::array({v})) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX) {
        Fail(key, "must be a token id or a list of them, not " + v.dump());
        return {};
      }
      out.push_back(static_cast<int32_t>(id.get<int64_t>()));
    }
    return out;
  }

  void Fail(const std::string& key, const std::string& what) {
    if (status_.ok()) {
      status_ = InvalidArgument(std::string(file_) + ": " + prefix_ + key + " " + what);
    }
  }
  const Status& status() const { return status_; }

 private:
  const Json& j_;
  std::string_view file_;
  std::string prefix_;
  Status status_;
};

// rope_theta and the scaling, from "rope_parameters" (v5) or the top level and "rope_scaling".
Status ParseRope(const Json& j, std::string_view file, RopeConfig* rope) {
  Fields top(j, file);
  rope->theta = top.Number("rope_theta", rope->theta);
  TF_RETURN_IF_ERROR(top.status());
  const char* key = j.contains("rope_parameters") ? "rope_parameters" : "rope_scaling";
  if (!j.contains(key) || j[key].is_null()) return OkStatus();
  if (!j[key].is_object())
    return InvalidArgument(std::string(file) + ": " + key + " must be an object");
  Fields f(j[key], file, std::string(key) + ".");
  rope->theta = f.Number("rope_theta", rope->theta);
  std::string type = f.String("rope_type", f.String("type", "default"));
  if (type == "default") {
    rope->type = RopeConfig::Type::kDefault;
  } else if (type == "linear") {
    rope->type = RopeConfig::Type::kLinear;
    rope->factor = f.Number("factor", 1.0);
  } else if (type == "llama3") {
    rope->type = RopeConfig::Type::kLlama3;
    rope->factor = f.Number("factor", rope->factor);
    rope->low_freq_factor = f.Number("low_freq_factor", rope->low_freq_factor);
    rope->high_freq_factor = f.Number("high_freq_factor", rope->high_freq_factor);
    rope->original_max_position_embeddings =
        f.Int("original_max_position_embeddings", rope->original_max_position_embeddings);
    if (f.status().ok() && !(rope->high_freq_factor > rope->low_freq_factor)) {
      f.Fail("high_freq_factor", "must be greater than low_freq_factor");
    }
  } else {
    f.Fail("rope_type", "'" + type + "' is not supported (default, linear and llama3 are)");
  }
  return f.status();
}

}  // namespace

int64_t ModelConfig::MaxContext() const {
  if (sliding_window && *sliding_window < max_position_embeddings) return *sliding_window;
  return max_position_embeddings;
}

Result<ModelConfig> ParseModelConfig(std::string_view json_text, std::string_view file) {
  Json j = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(std::string(file) + ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(std::string(file) + ": not a JSON object");
  Fields f(j, file);
  ModelConfig c;
  c.model_type = f.String("model_type", "");
  TF_RETURN_IF_ERROR(f.status());
  if (c.model_type != "llama" && c.model_type != "mistral" && c.model_type != "qwen2") {
    return InvalidArgument(std::string(file) + ": model_type '" + c.model_type +
                           "' is not supported (llama, mistral and qwen2 are)");
  }
  c.vocab_size = f.Int("vocab_size");
  c.hidden_size = f.Int("hidden_size");
  c.intermediate_size = f.Int("intermediate_size");
  c.num_layers = f.Int("num_hidden_layers");
  c.num_heads = f.Int("num_attention_heads");
  c.num_kv_heads = f.Int("num_key_value_heads", c.num_heads);
  c.max_position_embeddings = f.Int("max_position_embeddings", 2048);
  c.rms_norm_eps = static_cast<float>(f.Number("rms_norm_eps", 1e-6));
  c.tie_word_embeddings = f.Bool("tie_word_embeddings", false);
  bool attention_bias = f.Bool("attention_bias", false);
  c.qkv_bias = c.model_type == "qwen2" || attention_bias;
  c.o_bias = c.model_type != "qwen2" && attention_bias;
  if (f.Bool("mlp_bias", false)) f.Fail("mlp_bias", "true is not supported");
  std::string act = f.String("hidden_act", "silu");
  if (act != "silu") f.Fail("hidden_act", "'" + act + "' is not supported (silu is)");
  if (c.model_type == "mistral" ||
      (c.model_type == "qwen2" && f.Bool("use_sliding_window", false))) {
    if (f.Has("sliding_window")) c.sliding_window = f.Int("sliding_window");
  }
  auto bos = f.TokenIds("bos_token_id");
  if (!bos.empty()) c.bos_token_id = bos[0];
  c.eos_token_ids = f.TokenIds("eos_token_id");
  TF_RETURN_IF_ERROR(f.status());

  if (c.num_heads > 0 && c.num_heads % c.num_kv_heads != 0) {
    return InvalidArgument(
        std::string(file) + ": num_key_value_heads (" + std::to_string(c.num_kv_heads) +
        ") does not divide num_attention_heads (" + std::to_string(c.num_heads) + ")");
  }
  if (f.Has("head_dim")) {
    c.head_dim = f.Int("head_dim");
  } else if (c.hidden_size % c.num_heads != 0) {
    return InvalidArgument(std::string(file) + ": hidden_size (" + std::to_string(c.hidden_size) +
                           ") is not a multiple of num_attention_heads (" +
                           std::to_string(c.num_heads) + ") and head_dim is not given");
  } else {
    c.head_dim = c.hidden_size / c.num_heads;
  }
  TF_RETURN_IF_ERROR(f.status());
  if (c.head_dim % 2 != 0) {
    return InvalidArgument(std::string(file) + ": head_dim (" + std::to_string(c.head_dim) +
                           ") must be even for rotary embeddings");
  }
  TF_RETURN_IF_ERROR(ParseRope(j, file, &c.rope));
  for (int32_t id : c.eos_token_ids) {
    if (id >= c.vocab_size) f.Fail("eos_token_id", std::to_string(id) + " is not below vocab_size");
  }
  if (c.bos_token_id && *c.bos_token_id >= c.vocab_size) {
    f.Fail("bos_token_id", std::to_string(*c.bos_token_id) + " is not below vocab_size");
  }
  TF_RETURN_IF_ERROR(f.status());
  return c;
}

Result<GenerationConfig> ParseGenerationConfig(std::string_view json_text, std::string_view file) {
  Json j = Json::parse(json_text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgument(std::string(file) + ": not valid JSON");
  if (!j.is_object()) return InvalidArgument(std::string(file) + ": not a JSON object");
  Fields f(j, file);
  GenerationConfig g;
  g.eos_token_ids = f.TokenIds("eos_token_id");
  if (f.Has("temperature")) {
    g.temperature = static_cast<float>(f.Number("temperature", 1.0));
    if (*g.temperature < 0) f.Fail("temperature", "must not be negative");
  }
  if (f.Has("top_p")) {
    g.top_p = static_cast<float>(f.Number("top_p", 1.0));
    if (!(*g.top_p > 0 && *g.top_p <= 1)) f.Fail("top_p", "must be in (0, 1]");
  }
  if (f.Has("top_k")) {
    g.top_k = f.Int("top_k", 0, /*allow_zero=*/true);  // 0: no limit
  }
  if (f.Has("repetition_penalty")) {
    g.repetition_penalty = static_cast<float>(f.Number("repetition_penalty", 1.0));
    if (!(*g.repetition_penalty > 0)) f.Fail("repetition_penalty", "must be greater than 0");
  }
  if (f.Has("max_new_tokens")) {
    g.max_new_tokens = f.Int("max_new_tokens");
  }
  TF_RETURN_IF_ERROR(f.status());
  return g;
}

Result<GenerationConfig> LoadGenerationConfig(const std::string& dir) {
  const std::string path = dir + "/generation_config.json";
  std::ifstream in(path, std::ios::binary);
  if (!in) return GenerationConfig{};
  std::stringstream ss;
  ss << in.rdbuf();
  return ParseGenerationConfig(ss.str(), path);
}

Result<ModelConfig> LoadModelConfig(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound(path + ": cannot be read");
  std::stringstream ss;
  ss << in.rdbuf();
  TF_ASSIGN_OR_RETURN(ModelConfig config, ParseModelConfig(ss.str(), path));
  const size_t slash = path.find_last_of('/');
  TF_ASSIGN_OR_RETURN(
      GenerationConfig generation,
      LoadGenerationConfig(slash == std::string::npos ? "." : path.substr(0, slash)));
  for (int32_t id : generation.eos_token_ids) {
    if (id >= config.vocab_size) {
      return InvalidArgument(path.substr(0, slash + 1) + "generation_config.json: eos_token_id " +
                             std::to_string(id) + " is not below vocab_size (" +
                             std::to_string(config.vocab_size) + ")");
    }
    if (std::find(config.eos_token_ids.begin(), config.eos_token_ids.end(), id) ==
        config.eos_token_ids.end()) {
      config.eos_token_ids.push_back(id);
    }
  }
  return config;
}

}  // namespace tf::engine
