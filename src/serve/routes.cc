// The routes of `tensorfleet engine serve`: short handlers that parse, hand the work to the
// executor, and turn what comes back into OpenAI's bodies and stream chunks.
#include <chrono>

#include "base/async.h"  // first: see the note on <utility> there
#include "base/crypto.h"
#include "base/json_parse.h"
#include "serve/channel.h"
#include "serve/server.h"

namespace tf::serve {
namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// How long a non-streamed request is awaited before its answer becomes a body that is sent
// later, and how often a waiting answer writes to find out whether its client has gone.
constexpr milliseconds kProbeInterval{1000};

http::Response JsonResponse(int status, const Json& body) {
  http::Response r;
  r.status = status;
  r.body = Dump(body);
  return r;
}

http::Response ErrorResponse(const ApiError& e) { return JsonResponse(e.http_status, e.ToJson()); }

ApiError Error(int status, std::string message, std::string type, std::string param = "",
               std::string code = "") {
  ApiError e;
  e.http_status = status;
  e.message = std::move(message);
  e.type = std::move(type);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}

ApiError Loading() {
  return Error(503, "the model is still loading; /health answers 200 once it is ready",
               "service_unavailable");
}

Json ModelCard(const ServeState& st, const LoadedModel& m) {
  return {{"id", st.served_name},      {"object", "model"},   {"created", st.created},
          {"owned_by", "tensorfleet"}, {"root", m.model_dir}, {"max_model_len", m.max_model_len}};
}

// The prompt's token ids, or the error naming the field that holds the problem.
std::optional<ApiError> PromptIds(const LoadedModel& m, const CompletionRequest& cr,
                                  std::vector<int32_t>* ids) {
  const bool chat = cr.endpoint == Endpoint::kChatCompletions;
  const char* field = chat ? "messages" : "prompt";
  std::string text;
  if (chat) {
    auto rendered = RenderChatPrompt(m, cr);
    if (!rendered.ok())
      return Error(400, rendered.status().message(), "invalid_request_error", field);
    text = std::move(rendered).value();
  } else if (cr.prompt_text) {
    text = *cr.prompt_text;
  } else {
    for (int32_t id : cr.prompt_ids) {
      if (id >= m.model->config().vocab_size) {
        return Error(400,
                     "token id " + std::to_string(id) + " is outside the vocabulary of " +
                         std::to_string(m.model->config().vocab_size),
                     "invalid_request_error", field);
      }
    }
    *ids = cr.prompt_ids;
    return std::nullopt;
  }
  // A chat template writes the special tokens itself.
  auto encoded = m.tokenizer->Encode(text, /*add_special_tokens=*/!chat);
  if (!encoded.ok()) return Error(400, encoded.status().message(), "invalid_request_error", field);
  *ids = std::move(encoded).value();
  return std::nullopt;
}

// Fills job.options from the request and the context, or names what does not fit.
std::optional<ApiError> SizeJob(const LoadedModel& m, const CompletionRequest& cr,
                                GenerationJob* job) {
  const bool chat = cr.endpoint == Endpoint::kChatCompletions;
  const int64_t context = m.max_model_len;
  const int64_t n = static_cast<int64_t>(job->prompt.size());
  if (n == 0) {
    return Error(400, "the prompt has no tokens", "invalid_request_error",
                 chat ? "messages" : "prompt");
  }
  if (n >= context) {
    return Error(400,
                 "this model's maximum context length is " + std::to_string(context) +
                     " tokens, and the prompt alone has " + std::to_string(n),
                 "invalid_request_error", chat ? "messages" : "prompt", "context_length_exceeded");
  }
  // Without max_tokens: generation_config.json's max_new_tokens, else OpenAI's defaults; either
  // is cut to what the context leaves.
  int64_t max_new =
      cr.max_tokens.value_or(m.generation.max_new_tokens.value_or(chat ? context - n : 16));
  if (n + max_new > context) {
    if (cr.max_tokens) {
      return Error(400,
                   "this model's maximum context length is " + std::to_string(context) +
                       " tokens; the prompt has " + std::to_string(n) +
                       " and max_tokens asks for " + std::to_string(max_new) + " more",
                   "invalid_request_error", "max_tokens", "context_length_exceeded");
    }
    max_new = context - n;
  }
  for (const auto& [id, bias] : cr.sampling.logit_bias) {
    if (id >= m.model->config().vocab_size) {
      return Error(400,
                   "logit_bias names token " + std::to_string(id) + ", outside the vocabulary of " +
                       std::to_string(m.model->config().vocab_size),
                   "invalid_request_error", "logit_bias");
    }
  }
  job->options.max_new_tokens = max_new;
  job->options.stop_at_eos = !cr.ignore_eos;
  job->options.stop = cr.stop;
  job->sampling = cr.sampling;
  return std::nullopt;
}

engine::GenerateStep View(const ChannelSink::Step& s) {
  return {s.token ? &*s.token : nullptr, s.text};
}

struct Answer {
  std::shared_ptr<ChannelSink> sink;
  std::shared_ptr<CompletionWriter> writer;
  Usage usage;
  bool include_usage = false;
};

// `a` is the stream lambda's capture, which outlives this coroutine.
awaitable<void> StreamChunks(const Answer& a, http::StreamWriter& out) {
  Usage usage = a.usage;
  auto send = [&out](const Json& j) -> awaitable<bool> {
    std::string data = SseData(j);
    co_return co_await out.Write(std::move(data));
  };
  if (auto first = a.writer->FirstChunk()) {
    if (!co_await send(*first)) {
      a.sink->Cancel();
      co_return;
    }
  }
  for (;;) {
    ChannelSink::Batch batch = co_await a.sink->Next(kProbeInterval);
    for (const auto& step : batch.steps) {
      auto chunk = a.writer->StepChunk(View(step));
      if (chunk && !co_await send(*chunk)) {
        a.sink->Cancel();
        co_return;
      }
    }
    if (batch.done) {
      if (batch.result.finish == engine::FinishReason::kCancelled) co_return;
      if (!batch.status.ok()) {
        Json error = Error(500, batch.status.message(), "internal_error").ToJson();
        co_await send(error);
      } else {
        Json finish = a.writer->FinishChunk(batch.result.finish);
        co_await send(finish);
        usage.completion_tokens = batch.result.stats.generated_tokens;
        usage.cached_tokens = batch.result.stats.cached_prompt_tokens;
        Json usage_chunk = a.writer->UsageChunk(usage);
        if (a.include_usage) co_await send(usage_chunk);
      }
      std::string done = "data: [DONE]\n\n";
      co_await out.Write(std::move(done));
      co_return;
    }
    if (batch.timed_out && batch.steps.empty()) {  // queued behind others: still there?
      std::string comment = ": waiting\n\n";
      if (!co_await out.Write(std::move(comment))) {
        a.sink->Cancel();
        co_return;
      }
    }
  }
}

// The whole answer as JSON, or the error it became.
http::Response WholeAnswer(const Answer& a, const ChannelSink::Batch& end) {
  if (!end.status.ok()) {
    return ErrorResponse(Error(500, end.status.message(), "internal_error"));
  }
  Usage usage = a.usage;
  usage.completion_tokens = end.result.stats.generated_tokens;
  usage.cached_tokens = end.result.stats.cached_prompt_tokens;
  return JsonResponse(200, a.writer->Whole(end.result, usage));
}

// A non-streamed answer that took longer than kProbeInterval: the body is sent when it is
// ready, preceded by a space (JSON allows leading whitespace) each interval, whose write tells
// whether the client is still there.
awaitable<void> LateBody(const Answer& a, http::StreamWriter& out) {
  auto last_write = SteadyClock::now() - kProbeInterval;
  for (;;) {
    ChannelSink::Batch batch = co_await a.sink->Next(kProbeInterval);
    for (const auto& step : batch.steps) a.writer->AddStep(View(step));
    if (batch.done) {
      if (batch.result.finish == engine::FinishReason::kCancelled) co_return;
      std::string body = WholeAnswer(a, batch).body;
      co_await out.Write(std::move(body));
      co_return;
    }
    if (SteadyClock::now() - last_write >= kProbeInterval) {
      last_write = SteadyClock::now();
      std::string space = " ";
      if (!co_await out.Write(std::move(space))) {
        a.sink->Cancel();
        co_return;
      }
    }
  }
}

awaitable<http::Response> Complete(ServeState& st, http::Request& req, Endpoint endpoint) {
  LoadedModel* m = st.loaded.load();
  if (m == nullptr) co_return ErrorResponse(Loading());
  auto parsed = ParseJsonStrict(req.body, "the request body");
  if (!parsed.ok()) {
    co_return ErrorResponse(Error(400, parsed.status().message(), "invalid_request_error"));
  }
  Json body = std::move(parsed).value();
  CompletionRequest cr;
  ApplyGenerationDefaults(m->generation, &cr.sampling);  // the request's own values win
  if (auto e = ParseCompletionRequest(body, endpoint, &cr)) co_return ErrorResponse(*e);
  if (!cr.model.empty() && cr.model != st.served_name) {
    co_return ErrorResponse(Error(
        404,
        "the model '" + cr.model + "' does not exist; this server serves '" + st.served_name + "'",
        "invalid_request_error", "model", "model_not_found"));
  }
  GenerationJob job;
  if (auto e = PromptIds(*m, cr, &job.prompt)) co_return ErrorResponse(*e);
  if (auto e = SizeJob(*m, cr, &job)) co_return ErrorResponse(*e);

  Answer a;
  auto executor = co_await asio::this_coro::executor;
  a.sink = std::make_shared<ChannelSink>(executor);
  const bool chat = endpoint == Endpoint::kChatCompletions;
  a.writer = std::make_shared<CompletionWriter>(
      endpoint, (chat ? "chatcmpl-" : "cmpl-") + RandomHex(12),
      std::chrono::duration_cast<std::chrono::seconds>(
          std::chrono::system_clock::now().time_since_epoch())
          .count(),
      st.served_name, *m->tokenizer, cr.sampling.top_logprobs.has_value());
  a.usage.prompt_tokens = static_cast<int64_t>(job.prompt.size());
  a.include_usage = cr.include_usage;
  job.sink = a.sink;
  if (Status s = m->executor->Submit(std::move(job)); !s.ok()) {
    co_return ErrorResponse(Error(503, s.message(), "service_unavailable"));
  }

  http::Response response;
  if (cr.stream) {
    response.content_type = "text/event-stream";
    response.headers.emplace_back("Cache-Control", "no-cache");
    response.stream = [a](http::StreamWriter& out) -> awaitable<void> {
      co_await StreamChunks(a, out);
    };
    co_return response;
  }
  // Most answers come within the first interval: those are sent whole, with their status.
  const auto deadline = SteadyClock::now() + kProbeInterval;
  while (SteadyClock::now() < deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - SteadyClock::now());
    ChannelSink::Batch batch = co_await a.sink->Next(std::max(left, milliseconds(1)));
    for (const auto& step : batch.steps) a.writer->AddStep(View(step));
    if (batch.done) co_return WholeAnswer(a, batch);
  }
  response.stream = [a](http::StreamWriter& out) -> awaitable<void> { co_await LateBody(a, out); };
  co_return response;
}

// The secret of "Authorization: Bearer SECRET"; "" without one.
std::string_view BearerSecret(const http::Request& req) {
  return http::BearerCredentials(req.Header("Authorization"));
}

awaitable<http::Response> Route(ServeState& st, http::Request& req) {
  const std::string& path = req.path;
  const bool get = req.method == "GET" || req.method == "HEAD";
  if (path == "/health" && get) {
    const bool ready = st.loaded.load() != nullptr;
    Json status = {{"status", ready ? "ok" : "loading"}};
    co_return JsonResponse(ready ? 200 : 503, status);
  }
  if (!st.api_key.empty() && !SecretsEqual(BearerSecret(req), st.api_key)) {
    co_return ErrorResponse(Error(401,
                                  "this server needs its API key (Authorization: Bearer KEY); "
                                  "the one given is missing or wrong",
                                  "invalid_request_error", "", "invalid_api_key"));
  }
  if (path == "/metrics" && get) {
    http::Response r;
    r.content_type = "text/plain; version=0.0.4";
    st.metrics.Render(r.body);
    co_return r;
  }
  if ((path == "/v1/models" || path.rfind("/v1/models/", 0) == 0) && get) {
    LoadedModel* m = st.loaded.load();
    if (m == nullptr) co_return ErrorResponse(Loading());
    if (path == "/v1/models") {
      Json list = {{"object", "list"}, {"data", Json::array({ModelCard(st, *m)})}};
      co_return JsonResponse(200, list);
    }
    std::string name = path.substr(std::string("/v1/models/").size());
    if (name != st.served_name) {
      co_return ErrorResponse(Error(404, "the model '" + name + "' does not exist",
                                    "invalid_request_error", "model", "model_not_found"));
    }
    co_return JsonResponse(200, ModelCard(st, *m));
  }
  if (path == "/v1/completions" || path == "/v1/chat/completions") {
    if (req.method != "POST") {
      co_return ErrorResponse(Error(405, path + " takes POST", "invalid_request_error"));
    }
    co_return co_await Complete(
        st, req, path == "/v1/completions" ? Endpoint::kCompletions : Endpoint::kChatCompletions);
  }
  co_return ErrorResponse(
      Error(404, "no route for " + req.method + " " + path, "invalid_request_error"));
}

}  // namespace

http::Handler MakeServeHandler(ServeState& state) {
  return [&state](http::Request& req) -> awaitable<http::Response> {
    co_return co_await Route(state, req);
  };
}

}  // namespace tf::serve
