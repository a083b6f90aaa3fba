#include "serve/protocol.h"

#include <cmath>
#include <limits>

namespace tf::serve {
namespace {

ApiError Bad(std::string param, std::string message) {
  ApiError e;
  e.param = std::move(param);
  e.message = std::move(message);
  return e;
}

// Reads an optional field of `body`, leaving *out unchanged when it is absent or null.
std::optional<ApiError> GetNumber(const Json& body, const char* name, double lo, double hi,
                                  float* out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number()) return Bad(name, std::string("'") + name + "' must be a number");
  double v = it->get<double>();
  if (!(v >= lo && v <= hi)) {
    return Bad(name, std::string("'") + name + "' must be in [" + Dump(lo) + ", " + Dump(hi) +
                         "], not " + Dump(*it));
  }
  *out = static_cast<float>(v);
  return std::nullopt;
}

std::optional<ApiError> GetInteger(const Json& body, const char* name, int64_t lo, int64_t hi,
                                   std::optional<int64_t>* out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_number_integer()) return Bad(name, std::string("'") + name + "' must be an integer");
  int64_t v = it->is_number_unsigned() && it->get<uint64_t>() > uint64_t(INT64_MAX)
                  ? INT64_MAX
                  : it->get<int64_t>();
  if (v < lo || v > hi) {
    return Bad(name, std::string("'") + name + "' must be in [" + std::to_string(lo) + ", " +
                         std::to_string(hi) + "], not " + Dump(*it));
  }
  *out = v;
  return std::nullopt;
}

std::optional<ApiError> GetBool(const Json& body, const char* name, bool* out) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_boolean()) return Bad(name, std::string("'") + name + "' must be true or false");
  *out = it->get<bool>();
  return std::nullopt;
}

std::optional<ApiError> ParsePrompt(const Json& body, CompletionRequest* out) {
  auto it = body.find("prompt");
  if (it == body.end() || it->is_null()) return Bad("prompt", "'prompt' is required");
  const Json& p = *it;
  auto ids = [&](const Json& list) -> std::optional<ApiError> {
    for (const Json& id : list) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 ||
          id.get<int64_t>() > std::numeric_limits<int32_t>::max()) {
        return Bad("prompt", "'prompt' token ids must be integers >= 0");
      }
      out->prompt_ids.push_back(id.get<int32_t>());
    }
    return std::nullopt;
  };
  if (p.is_string()) {
    out->prompt_text = p.get<std::string>();
    return std::nullopt;
  }
  if (p.is_array() && p.size() == 1 && p[0].is_string()) {
    out->prompt_text = p[0].get<std::string>();
    return std::nullopt;
  }
  if (p.is_array() && !p.empty() && p[0].is_number()) return ids(p);
  if (p.is_array() && p.size() == 1 && p[0].is_array()) return ids(p[0]);
  if (p.is_array() && p.size() > 1) {
    return Bad("prompt", "'prompt' may hold one prompt only; send one request per prompt");
  }
  return Bad("prompt", "'prompt' must be a string, an array of one string, or token ids");
}

std::optional<ApiError> ParseMessages(const Json& body, CompletionRequest* out) {
  auto it = body.find("messages");
  if (it == body.end() || !it->is_array() || it->empty()) {
    return Bad("messages", "'messages' must be a non-empty array");
  }
  for (size_t i = 0; i < it->size(); ++i) {
    const Json& m = (*it)[i];
    std::string where = "messages[" + std::to_string(i) + "]";
    if (!m.is_object()) return Bad(where, "'" + where + "' must be an object");
    auto role = m.find("role");
    if (role == m.end() || !role->is_string()) {
      return Bad(where + ".role", "'" + where + ".role' must be a string");
    }
    Json message = m;
    auto content = m.find("content");
    if (content != m.end() && content->is_array()) {  // [{"type": "text", "text": ...}, ...]
      std::string text;
      for (const Json& part : *content) {
        if (!part.is_object() || part.value("type", "") != "text" || !part.contains("text") ||
            !part["text"].is_string()) {
          return Bad(where + ".content",
                     "'" + where + ".content' parts must be {\"type\": \"text\", \"text\": ...}");
        }
        text += part["text"].get<std::string>();
      }
      message["content"] = text;
    } else if (content != m.end() && !content->is_string() && !content->is_null()) {
      return Bad(where + ".content", "'" + where + ".content' must be a string or text parts");
    }
    out->messages.push_back(std::move(message));
  }
  return std::nullopt;
}

std::optional<ApiError> ParseStop(const Json& body, CompletionRequest* out) {
  auto it = body.find("stop");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (it->is_string()) {
    out->stop.push_back(it->get<std::string>());
    return std::nullopt;
  }
  if (!it->is_array() || it->size() > 4) {
    return Bad("stop", "'stop' must be a string or an array of at most 4 strings");
  }
  for (const Json& s : *it) {
    if (!s.is_string()) return Bad("stop", "'stop' must hold strings only");
    out->stop.push_back(s.get<std::string>());
  }
  return std::nullopt;
}

std::optional<ApiError> ParseLogitBias(const Json& body, engine::SamplingParams* s) {
  auto it = body.find("logit_bias");
  if (it == body.end() || it->is_null()) return std::nullopt;
  if (!it->is_object()) return Bad("logit_bias", "'logit_bias' must map token ids to numbers");
  for (const auto& [key, value] : it->items()) {
    int64_t id = -1;
    try {
      size_t used = 0;
      id = std::stoll(key, &used);
      if (used != key.size()) id = -1;
    } catch (const std::exception&) {
    }
    if (id < 0 || id > std::numeric_limits<int32_t>::max()) {
      return Bad("logit_bias", "'logit_bias' key '" + key + "' is not a token id");
    }
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100)) {
      return Bad("logit_bias", "'logit_bias' values must be numbers in [-100, 100]");
    }
    s->logit_bias[static_cast<int32_t>(id)] = value.get<float>();
  }
  return std::nullopt;
}

// Fields this engine has only one way of doing.
std::optional<ApiError> ParseUnsupported(const Json& body) {
  std::optional<int64_t> n;
  if (auto e = GetInteger(body, "n", 1, 1, &n)) {
    e->message = "'n' must be 1: this server returns one choice per request";
    return e;
  }
  std::optional<int64_t> best_of;
  if (auto e = GetInteger(body, "best_of", 1, 1, &best_of)) {
    e->message = "'best_of' must be 1: this server returns one choice per request";
    return e;
  }
  bool echo = false;
  if (auto e = GetBool(body, "echo", &echo)) return e;
  if (echo) return Bad("echo", "'echo' is not supported");
  if (auto it = body.find("suffix"); it != body.end() && !it->is_null()) {
    return Bad("suffix", "'suffix' is not supported");
  }
  // A request that offers functions expects the model to call them when it should: answering
  // it as plain text would drop what was asked without a word.
  for (const char* field : {"tools", "functions"}) {
    if (auto it = body.find(field); it != body.end() && !it->is_null() && !it->empty()) {
      return Bad(field, std::string("'") + field +
                            "' is not supported: this server does not call functions; send the "
                            "request without them");
    }
  }
  return std::nullopt;
}

}  // namespace

Json ApiError::ToJson() const {
  return {{"error",
           {{"message", message},
            {"type", type},
            {"param", param.empty() ? Json(nullptr) : Json(param)},
            {"code", code.empty() ? Json(nullptr) : Json(code)}}}};
}

ApiError ServerRefusal(int http_status, std::string message) {
  ApiError e;
  e.http_status = http_status;
  e.message = std::move(message);
  if (http_status == 413) {
    e.type = "invalid_request_error";
    e.code = "request_too_large";
  } else if (http_status == 503) {
    e.type = "service_unavailable";
  } else {
    e.type = "server_error";
  }
  return e;
}

void ApplyGenerationDefaults(const engine::GenerationConfig& generation,
                             engine::SamplingParams* sampling) {
  if (generation.temperature) sampling->temperature = *generation.temperature;
  if (generation.top_p) sampling->top_p = *generation.top_p;
  if (generation.top_k) sampling->top_k = *generation.top_k;
  if (generation.repetition_penalty) sampling->repetition_penalty = *generation.repetition_penalty;
}

std::optional<ApiError> ParseCompletionRequest(const Json& body, Endpoint endpoint,
                                               CompletionRequest* out) {
  if (!body.is_object()) return Bad("", "the request body must be a JSON object");
  out->endpoint = endpoint;
  if (auto it = body.find("model"); it != body.end() && !it->is_null()) {
    if (!it->is_string()) return Bad("model", "'model' must be a string");
    out->model = it->get<std::string>();
  }
  const bool chat = endpoint == Endpoint::kChatCompletions;
  if (auto e = chat ? ParseMessages(body, out) : ParsePrompt(body, out)) return e;
  if (chat) {
    if (auto e = GetBool(body, "add_generation_prompt", &out->add_generation_prompt)) return e;
    if (auto e = GetBool(body, "continue_final_message", &out->continue_final_message)) return e;
    if (out->continue_final_message && out->add_generation_prompt) {
      return Bad("continue_final_message",
                 "'continue_final_message' continues the last message, which a generation "
                 "prompt would close: send it with 'add_generation_prompt': false");
    }
  }
  if (auto e = ParseUnsupported(body)) return e;

  std::optional<int64_t> max_tokens;
  if (auto e = GetInteger(body, "max_tokens", 1, INT32_MAX, &max_tokens)) return e;
  if (chat) {
    std::optional<int64_t> completion;
    if (auto e = GetInteger(body, "max_completion_tokens", 1, INT32_MAX, &completion)) return e;
    if (completion) max_tokens = completion;
  }
  out->max_tokens = max_tokens;
  if (auto e = GetBool(body, "ignore_eos", &out->ignore_eos)) return e;
  if (auto e = ParseStop(body, out)) return e;

  engine::SamplingParams& s = out->sampling;
  if (auto e = GetNumber(body, "temperature", 0, 2, &s.temperature)) return e;
  if (auto e = GetNumber(body, "top_p", 0, 1, &s.top_p)) return e;
  if (s.top_p <= 0) return Bad("top_p", "'top_p' must be in (0, 1]");
  std::optional<int64_t> top_k;
  if (auto e = GetInteger(body, "top_k", -1, INT32_MAX, &top_k)) return e;
  if (top_k) s.top_k = *top_k < 0 ? 0 : *top_k;  // vLLM's -1: no limit
  if (auto e = GetNumber(body, "frequency_penalty", -2, 2, &s.frequency_penalty)) return e;
  if (auto e = GetNumber(body, "presence_penalty", -2, 2, &s.presence_penalty)) return e;
  if (auto e = GetNumber(body, "repetition_penalty", 0, 100, &s.repetition_penalty)) return e;
  if (s.repetition_penalty <= 0) {
    return Bad("repetition_penalty", "'repetition_penalty' must be > 0");
  }
  std::optional<int64_t> seed;
  if (auto e = GetInteger(body, "seed", INT64_MIN, INT64_MAX, &seed)) return e;
  if (seed) s.seed = static_cast<uint64_t>(*seed);
  if (auto e = ParseLogitBias(body, &s)) return e;

  if (chat) {
    bool logprobs = false;
    if (auto e = GetBool(body, "logprobs", &logprobs)) return e;
    std::optional<int64_t> top;
    if (auto e = GetInteger(body, "top_logprobs", 0, 20, &top)) return e;
    if (top && !logprobs) return Bad("top_logprobs", "'top_logprobs' needs 'logprobs': true");
    if (logprobs) s.top_logprobs = static_cast<int>(top.value_or(0));
  } else {
    std::optional<int64_t> logprobs;  // completions: how many alternatives
    if (auto e = GetInteger(body, "logprobs", 0, 5, &logprobs)) return e;
    if (logprobs) s.top_logprobs = static_cast<int>(*logprobs);
  }

  if (auto e = GetBool(body, "stream", &out->stream)) return e;
  if (auto it = body.find("stream_options"); it != body.end() && !it->is_null()) {
    if (!it->is_object()) return Bad("stream_options", "'stream_options' must be an object");
    if (!out->stream) return Bad("stream_options", "'stream_options' needs 'stream': true");
    if (auto e = GetBool(*it, "include_usage", &out->include_usage)) {
      e->param = "stream_options.include_usage";
      return e;
    }
  }
  if (Status v = s.Validate(); !v.ok()) return Bad("", v.message());
  return std::nullopt;
}

Json Usage::ToJson() const {
  return {{"prompt_tokens", prompt_tokens},
          {"completion_tokens", completion_tokens},
          {"total_tokens", prompt_tokens + completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", cached_tokens}}}};
}

std::string FinishReasonText(engine::FinishReason finish) {
  return finish == engine::FinishReason::kLength ? "length" : "stop";
}

std::string Dump(const Json& j) { return j.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::string SseData(const Json& j) { return "data: " + Dump(j) + "\n\n"; }

CompletionWriter::CompletionWriter(Endpoint endpoint, std::string id, int64_t created,
                                   std::string model, const engine::Tokenizer& tokenizer,
                                   bool logprobs)
    : endpoint_(endpoint),
      id_(std::move(id)),
      created_(created),
      model_(std::move(model)),
      tokenizer_(tokenizer),
      logprobs_(logprobs) {}

Json CompletionWriter::Envelope(bool chunk) const {
  const bool chat = endpoint_ == Endpoint::kChatCompletions;
  const char* object =
      chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", id_}, {"object", object}, {"created", created_}, {"model", model_}};
}

Json CompletionWriter::StepLogprobs(const engine::SampledToken& token) {
  auto entry = [&](int32_t id, float logprob) {
    std::string bytes = tokenizer_.TokenBytes(id);
    std::vector<int> byte_values(bytes.begin(), bytes.end());
    for (int& b : byte_values) b &= 0xff;
    return Json{{"token", engine::LossyUtf8(bytes, false, nullptr)},
                {"logprob", logprob},
                {"bytes", byte_values}};
  };
  Json e = entry(token.id, token.logprob.value_or(0));
  Json top = Json::array();
  for (const auto& t : token.top) top.push_back(entry(t.id, t.logprob));
  e["top_logprobs"] = top;
  e["text_offset"] = text_offset_;
  return e;
}

Json CompletionWriter::LogprobsOf(const Json& entries) const {
  if (!logprobs_) return nullptr;
  if (endpoint_ == Endpoint::kChatCompletions) {
    Json content = Json::array();
    for (Json e : entries) {
      e.erase("text_offset");
      for (Json& t : e["top_logprobs"]) t.erase("text_offset");
      content.push_back(std::move(e));
    }
    return {{"content", content}};
  }
  Json tokens = Json::array(), token_logprobs = Json::array(), top = Json::array(),
       offsets = Json::array();
  for (const Json& e : entries) {
    tokens.push_back(e["token"]);
    token_logprobs.push_back(e["logprob"]);
    Json alternatives = Json::object();
    for (const Json& t : e["top_logprobs"]) {
      alternatives[t["token"].get<std::string>()] = t["logprob"];
    }
    top.push_back(alternatives);
    offsets.push_back(e["text_offset"]);
  }
  return {{"tokens", tokens},
          {"token_logprobs", token_logprobs},
          {"top_logprobs", top},
          {"text_offset", offsets}};
}

std::optional<Json> CompletionWriter::FirstChunk() const {
  if (endpoint_ != Endpoint::kChatCompletions) return std::nullopt;
  Json j = Envelope(true);
  j["choices"] = Json::array({{{"index", 0},
                               {"delta", {{"role", "assistant"}, {"content", ""}}},
                               {"logprobs", nullptr},
                               {"finish_reason", nullptr}}});
  return j;
}

std::optional<Json> CompletionWriter::StepChunk(const engine::GenerateStep& step) {
  Json entries = Json::array();
  if (logprobs_ && step.token != nullptr) entries.push_back(StepLogprobs(*step.token));
  text_offset_ += static_cast<int64_t>(step.text.size());
  if (step.text.empty() && entries.empty()) return std::nullopt;
  Json choice = {{"index", 0}, {"logprobs", LogprobsOf(entries)}, {"finish_reason", nullptr}};
  if (endpoint_ == Endpoint::kChatCompletions) {
    choice["delta"] = {{"content", std::string(step.text)}};
  } else {
    choice["text"] = std::string(step.text);
  }
  Json j = Envelope(true);
  j["choices"] = Json::array({choice});
  return j;
}

Json CompletionWriter::FinishChunk(engine::FinishReason finish) const {
  Json choice = {{"index", 0}, {"logprobs", nullptr}, {"finish_reason", FinishReasonText(finish)}};
  if (endpoint_ == Endpoint::kChatCompletions) {
    choice["delta"] = Json::object();
  } else {
    choice["text"] = "";
  }
  Json j = Envelope(true);
  j["choices"] = Json::array({choice});
  return j;
}

Json CompletionWriter::UsageChunk(const Usage& usage) const {
  Json j = Envelope(true);
  j["choices"] = Json::array();
  j["usage"] = usage.ToJson();
  return j;
}

void CompletionWriter::AddStep(const engine::GenerateStep& step) {
  if (logprobs_ && step.token != nullptr) entries_.push_back(StepLogprobs(*step.token));
  text_offset_ += static_cast<int64_t>(step.text.size());
}

Json CompletionWriter::Whole(const engine::GenerateResult& result, const Usage& usage) const {
  Json choice = {{"index", 0},
                 {"logprobs", LogprobsOf(entries_)},
                 {"finish_reason", FinishReasonText(result.finish)}};
  if (endpoint_ == Endpoint::kChatCompletions) {
    choice["message"] = {{"role", "assistant"}, {"content", result.text}};
  } else {
    choice["text"] = result.text;
  }
  Json j = Envelope(false);
  j["choices"] = Json::array({choice});
  j["usage"] = usage.ToJson();
  return j;
}

}  // namespace tf::serve
