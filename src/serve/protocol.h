// OpenAI's completions and chat completions as `tensorfleet engine serve` speaks them: request
// bodies parsed into what the engine needs (errors name the field), and the response bodies and
// stream chunks built from what it produces. Pure: no HTTP, no engine thread.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "engine/config.h"
#include "engine/generate.h"
#include "engine/sampling.h"
#include "engine/tokenizers/tokenizer.h"

namespace tf::serve {

using Json = nlohmann::json;

// {"error": {"message", "type", "param", "code"}} with its HTTP status.
struct ApiError {
  int http_status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // the offending field; "" is sent as null
  std::string code;   // "" is sent as null
  Json ToJson() const;
};

// What the HTTP server answers by itself (a body over its limit: 413; a handler past its
// deadline or a shutdown: 503; a handler that failed: 500), in the same shape as every other
// error of this API.
ApiError ServerRefusal(int http_status, std::string message);

enum class Endpoint { kCompletions, kChatCompletions };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::kCompletions;
  std::string model;  // "" when not given: the served model
  // Completions: the prompt as text, or as token ids.
  std::optional<std::string> prompt_text;
  std::vector<int32_t> prompt_ids;
  // Chat: the messages, each content reduced to a string (text parts joined).
  Json messages = Json::array();
  std::optional<int64_t> max_tokens;  // unset: 16 for completions, the context for chat
  bool ignore_eos = false;
  std::vector<std::string> stop;
  engine::SamplingParams sampling;  // top_logprobs set when logprobs were asked for
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // Chat, as vLLM takes them: end the prompt with the opening of the assistant's turn (the
  // template's add_generation_prompt), or leave the last message open for the model to go on
  // with (continue_final_message; then add_generation_prompt must be false).
  bool add_generation_prompt = true;
  bool continue_final_message = false;
};

// Sets the sampling fields that generation_config.json gives, before a request is parsed over
// them (temperature, top_p, top_k, repetition_penalty).
void ApplyGenerationDefaults(const engine::GenerationConfig& generation,
                             engine::SamplingParams* sampling);

// Parses a request body. Unknown fields are ignored, as vLLM does; fields this engine does not
// support with other than their default (n > 1, echo, best_of, suffix) are refused.
std::optional<ApiError> ParseCompletionRequest(const Json& body, Endpoint endpoint,
                                               CompletionRequest* out);

struct Usage {
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;  // of the prompt's, taken from the prefix cache
  // As OpenAI's: with prompt_tokens_details.cached_tokens.
  Json ToJson() const;
};

// Builds the bodies of one request's answer.
class CompletionWriter {
 public:
  CompletionWriter(Endpoint endpoint, std::string id, int64_t created, std::string model,
                   const engine::Tokenizer& tokenizer, bool logprobs);

  // Streaming: the first chunk (chat: the assistant role; completions: none).
  std::optional<Json> FirstChunk() const;
  // Streaming: the chunk for one step, or none when it carries nothing (no text, no logprobs).
  std::optional<Json> StepChunk(const engine::GenerateStep& step);
  // Streaming: the chunk with the finish reason, and the usage chunk (empty choices).
  Json FinishChunk(engine::FinishReason finish) const;
  Json UsageChunk(const Usage& usage) const;

  // Not streaming: records a step's logprobs, then builds the whole answer.
  void AddStep(const engine::GenerateStep& step);
  Json Whole(const engine::GenerateResult& result, const Usage& usage) const;

 private:
  Json Envelope(bool chunk) const;
  Json StepLogprobs(const engine::SampledToken& token);  // also advances text_offset_
  Json LogprobsOf(const Json& entries) const;            // the choice's "logprobs" value

  Endpoint endpoint_;
  std::string id_;
  int64_t created_;
  std::string model_;
  const engine::Tokenizer& tokenizer_;
  bool logprobs_;
  int64_t text_offset_ = 0;
  Json entries_ = Json::array();  // non-streamed: each token's logprob entry
};

// "stop" or "length" as OpenAI names them.
std::string FinishReasonText(engine::FinishReason finish);

// One Server-Sent Events message: "data: <json>\n\n".
std::string SseData(const Json& j);
// Serialises with invalid UTF-8 replaced, never throwing.
std::string Dump(const Json& j);

}  // namespace tf::serve
