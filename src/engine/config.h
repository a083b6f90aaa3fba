// The architecture of a Llama-family checkpoint, read from its Hugging Face config.json.
//
// Supported model_type values: "llama" (Llama 2 and 3, including Llama-3 rope scaling and tied
// embeddings), "mistral", "qwen2" (biases on the q/k/v projections). Both the transformers v4
// layout (rope_theta and rope_scaling at the top level) and v5 (inside "rope_parameters") are
// read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tf::engine {

struct RopeConfig {
  enum class Type { kDefault, kLinear, kLlama3 };
  Type type = Type::kDefault;
  double theta = 10000.0;
  // kLinear and kLlama3: positions are stretched by `factor`.
  double factor = 1.0;
  // kLlama3 only.
  double low_freq_factor = 1.0;
  double high_freq_factor = 4.0;
  int64_t original_max_position_embeddings = 8192;
  // Per-pair divisors of the inverse frequencies, [head_dim / 2], or empty: how GGUF files store
  // Llama 3's scaling (the rope_freqs tensor), applied on top of `type`.
  std::vector<float> freq_factors;
};

struct ModelConfig {
  std::string model_type;  // "llama", "mistral" or "qwen2"
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // divides num_heads (grouped-query attention)
  int64_t head_dim = 0;      // hidden_size / num_heads unless given
  int64_t max_position_embeddings = 0;
  // Mistral's sliding window; contexts are limited to it until windowed attention exists.
  std::optional<int64_t> sliding_window;
  float rms_norm_eps = 1e-6f;
  RopeConfig rope;
  bool tie_word_embeddings = false;
  bool qkv_bias = false;  // q/k/v projections have biases (qwen2; llama attention_bias)
  bool o_bias = false;    // the output projection has one (llama attention_bias)
  std::optional<int32_t> bos_token_id;
  std::vector<int32_t> eos_token_ids;  // config.json allows one id or a list

  // The longest context the engine will run: max_position_embeddings, or the sliding window
  // when that is smaller.
  int64_t MaxContext() const;
};

// Parses config.json text. `file_name` only goes into messages. Errors are InvalidArgument and
// name the file and the field: "config.json: num_key_value_heads (3) does not divide
// num_attention_heads (4)".
Result<ModelConfig> ParseModelConfig(std::string_view json_text, std::string_view file_name);

// Reads and parses the file at `path`. If a generation_config.json lies beside it, its
// end-of-sequence ids are added to eos_token_ids, as transformers' generate() stops on those
// (instruction-tuned Llama 3 checkpoints list their end-of-turn token only there).
Result<ModelConfig> LoadModelConfig(const std::string& path);

// A checkpoint's generation_config.json: the defaults that transformers' generate() uses when
// the caller does not say. Only the fields present are set, so a server can apply them under
// what each request asks (as vLLM does); do_sample and the rest are ignored.
struct GenerationConfig {
  std::vector<int32_t> eos_token_ids;
  std::optional<float> temperature;
  std::optional<float> top_p;
  std::optional<int64_t> top_k;
  std::optional<float> repetition_penalty;
  std::optional<int64_t> max_new_tokens;
};

// Parses generation_config.json text; InvalidArgument names the file and the field.
Result<GenerationConfig> ParseGenerationConfig(std::string_view json_text,
                                               std::string_view file_name);
// Reads dir/generation_config.json; an empty GenerationConfig when the file does not exist.
Result<GenerationConfig> LoadGenerationConfig(const std::string& dir);

}  // namespace tf::engine
