// The built-in engine behind an OpenAI-compatible HTTP API (`tensorfleet engine serve`).
//
// The server is a thin client of the engine: routes.cc parses (with protocol.cc) and hands a
// GenerationJob to the GenerationExecutor (executor.h), whose engine thread reports back through
// a ChannelSink (channel.h). The engine library knows nothing of HTTP, and this folder nothing
// of the command line.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"
#include "engine/chat/chat_template.h"
#include "engine/config.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "http/http.h"
#include "serve/executor.h"
#include "serve/metrics.h"
#include "serve/protocol.h"

namespace tf::serve {

struct ServeOptions {
  std::string model_dir;      // a checkpoint directory or a GGUF file
  std::string tokenizer_dir;  // optional: the tokenizer and chat template from here instead
  std::string host = "127.0.0.1";
  uint16_t port = 8000;
  int threads = 0;
  std::string quantize = "none";  // none, q8_0, q4_0 (checked by the flag parser)
  std::string served_name;        // default: the directory's (or file's stem's) last component
  int64_t kv_cache_mb = 1024;     // the paged KV cache's pool
  int64_t max_batch = 16;         // sequences running at once
  bool prefix_caching = true;     // reuse the KV-cache blocks of prompts' shared prefixes
  // Requests must bear it (Authorization: Bearer KEY), /health's excepted; "" takes any.
  std::string api_key;
  // After SIGTERM: how long requests in flight have to finish before they are cut.
  std::chrono::milliseconds shutdown_grace{5'000};
};

// A model ready to serve: set once, after loading.
struct LoadedModel {
  std::unique_ptr<engine::Model> model;
  std::unique_ptr<engine::Tokenizer> tokenizer;
  std::unique_ptr<GenerationExecutor> executor;
  // The longest prompt + max_tokens served: the model's context, or less when the KV cache
  // holds fewer positions.
  int64_t max_model_len = 0;
  std::string model_dir;
  std::string tokenizer_dir;  // where the tokenizer and chat template came from
  // The chat template (tokenizer_config.json's, or a GGUF file's tokenizer.chat_template),
  // parsed, with its BOS and EOS tokens; when there is none (or it does not parse),
  // chat_problem says why.
  std::shared_ptr<const engine::ChatTemplate> chat_template;
  std::string bos_token;
  std::string eos_token;
  std::string chat_problem;
  // generation_config.json's defaults, applied under each request's own values.
  engine::GenerationConfig generation;
};

struct ServeState {
  std::string served_name;
  int64_t created = 0;  // unix seconds, for /v1/models
  ServeMetrics metrics;
  std::atomic<LoadedModel*> loaded{nullptr};  // null while loading
  std::string api_key;                        // ServeOptions::api_key
};

// The HTTP handler for every route. `state` must outlive the server.
http::Handler MakeServeHandler(ServeState& state);

// Reads and parses the chat template of model->tokenizer_dir (see LoadedModel); needs the model
// and tokenizer loaded.
void LoadChat(LoadedModel* model);

// The prompt text of a chat request: the model's chat template (tokenizer_config.json) applied
// to its messages, with its add_generation_prompt, and cut after the last message's text for
// continue_final_message; ready to encode without adding special tokens. InvalidArgument when
// the model has no chat template the engine can render, the template refuses the messages, or
// the last message's text is not in what it rendered (nothing to continue).
Result<std::string> RenderChatPrompt(const LoadedModel& model, const CompletionRequest& request);

// Listens, loads the model (answering /health with 503 meanwhile), and serves until SIGINT or
// SIGTERM. The caller must not have started any thread yet (see BlockStopSignals). Returns OK
// after a clean stop, or why the server could not listen or the model could not be loaded.
Status Serve(const ServeOptions& options);

}  // namespace tf::serve
