// Serving: load the model on a thread of its own while /health says 503, then serve until
// SIGINT or SIGTERM.
#include "serve/server.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <iostream>
#include <thread>
#include <vector>

#include "base/stop_signals.h"

namespace tf::serve {
namespace {

constexpr int kNetworkThreads = 2;
// A whole (not streamed) answer to a long generation takes its time; the request's max_tokens
// and the model's context bound it.
constexpr std::chrono::hours kCompletionTimeout{2};
// Tokens per engine step: every running sequence's decode token, then prompt chunks.
constexpr int64_t kStepTokens = 512;

Result<std::unique_ptr<LoadedModel>> Load(const ServeOptions& f, ServeMetrics& metrics) {
  auto loaded = std::make_unique<LoadedModel>();
  loaded->model_dir = f.model_dir;
  loaded->tokenizer_dir = f.tokenizer_dir.empty() ? f.model_dir : f.tokenizer_dir;
  engine::ModelOptions options;
  options.num_threads = f.threads;
  if (auto q = engine::ParseQuantize(f.quantize)) {
    options.quantize = *q;
  } else {
    return InvalidArgument("--quantize: '" + f.quantize + "' is not none, q8_0 or q4_0");
  }
  auto model = engine::Model::Load(f.model_dir, options);
  if (!model.ok()) return model.status();
  loaded->model = std::move(model).value();
  auto tokenizer = engine::LoadTokenizer(loaded->tokenizer_dir);
  if (!tokenizer.ok()) return tokenizer.status();
  loaded->tokenizer = std::move(tokenizer).value();
  LoadChat(loaded.get());
  auto generation = engine::LoadGenerationConfig(f.model_dir);
  if (!generation.ok()) return generation.status();
  loaded->generation = std::move(generation).value();
  engine::BatchSchedulerOptions batching;
  // A pool beyond the scheduler's limit could never be used.
  batching.kv_cache_blocks = std::clamp<int64_t>(
      (f.kv_cache_mb << 20) / loaded->model->KvBlockBytes(), 1, engine::kMaxKvCacheBlocks);
  batching.max_batch = f.max_batch;
  batching.step_tokens = kStepTokens;
  batching.prefix_caching = f.prefix_caching;
  auto executor =
      BatchExecutor::Create(*loaded->model, *loaded->tokenizer, metrics, std::move(batching));
  if (!executor.ok()) return executor.status();
  loaded->max_model_len = (*executor)->max_sequence_positions();
  loaded->executor = std::move(executor).value();
  return loaded;
}

std::string DefaultServedName(const std::string& dir) {
  std::filesystem::path p(dir);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // "models/x/" -> "x"
  std::string name = p.filename().string();
  if (p.extension() == ".gguf") name = p.stem().string();  // "x.q8_0.gguf" -> "x.q8_0"
  return name.empty() ? "model" : name;
}

}  // namespace

Status Serve(const ServeOptions& f) {
  ServeState st;
  st.served_name = f.served_name.empty() ? DefaultServedName(f.model_dir) : f.served_name;
  st.api_key = f.api_key;
  st.created = std::chrono::duration_cast<std::chrono::seconds>(
                   std::chrono::system_clock::now().time_since_epoch())
                   .count();
  BlockStopSignals();  // before any thread starts, so that WaitForStopSignal receives them

  asio::io_context io;
  auto work = asio::make_work_guard(io);
  http::ServerOptions options;
  options.address = f.host;
  options.port = f.port;
  options.handler_timeout = kCompletionTimeout;
  options.error_response = [](const http::Request&, int status,
                              std::string_view message) -> std::optional<http::Response> {
    http::Response r;
    r.status = status;
    r.body = Dump(ServerRefusal(status, std::string(message)).ToJson());
    return r;
  };
  auto server = http::Server::Start(io, options, MakeServeHandler(st));
  if (!server.ok()) return server.status();
  std::vector<std::thread> network;
  for (int i = 0; i < kNetworkThreads; ++i) network.emplace_back([&io] { io.run(); });
  std::cerr << "engine serve: listening on http://" << (*server)->address() << ":"
            << (*server)->port() << " (loading " << f.model_dir << " as '" << st.served_name << "')"
            << std::endl;

  std::unique_ptr<LoadedModel> loaded;
  Status load_status;
  std::thread loader([&] {
    auto result = Load(f, st.metrics);
    if (!result.ok()) {
      load_status = result.status();
      RaiseStopSignal();  // wakes WaitForStopSignal below
      return;
    }
    loaded = std::move(result).value();
    st.loaded.store(loaded.get());
    std::cerr << "engine serve: ready: " << st.served_name << " (" << loaded->model->kernels().name
              << " kernels, " << loaded->model->num_threads() << " threads, context "
              << loaded->max_model_len << ", KV cache " << f.kv_cache_mb << " MiB, batch "
              << f.max_batch << ", "
              << (loaded->chat_template ? "chat template" : "no chat template") << ")" << std::endl;
  });
  int sig = WaitForStopSignal();
  loader.join();
  if (load_status.ok()) std::cerr << "engine serve: signal " << sig << ", stopping" << std::endl;

  std::promise<void> stopped;
  asio::co_spawn(io, (*server)->Shutdown(f.shutdown_grace),
                 [&stopped](const std::exception_ptr&) { stopped.set_value(); });
  stopped.get_future().wait();
  if (loaded) loaded->executor->Stop();
  work.reset();
  io.stop();
  for (auto& t : network) t.join();
  if (!load_status.ok()) return load_status;
  std::cerr << "engine serve: stopped" << std::endl;
  return Status();
}

}  // namespace tf::serve
