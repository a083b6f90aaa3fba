#include "cli/engine_serve_executor.h"

#include "base/log.h"

namespace tf::cli {

using SteadyClock = std::chrono::steady_clock;

SerialExecutor::SerialExecutor(engine::Model& model, const engine::Tokenizer& tokenizer,
                               ServeMetrics& metrics)
    : model_(model), tokenizer_(tokenizer), metrics_(metrics), thread_([this] { Loop(); }) {}

SerialExecutor::~SerialExecutor() { Stop(); }

Status SerialExecutor::Submit(GenerationJob job) {
  {
    std::lock_guard lock(mu_);
    if (stopping_) return Unavailable("the engine is shutting down");
    queue_.push_back({std::move(job), SteadyClock::now()});
    metrics_.Queued();
  }
  wake_.notify_one();
  return OkStatus();
}

void SerialExecutor::Stop() {
  std::deque<Queued> dropped;
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  wake_.notify_one();
  for (auto& q : dropped) {
    metrics_.Dropped();
    engine::GenerateResult result;
    result.finish = engine::FinishReason::kCancelled;
    q.job.sink->OnDone(OkStatus(), result);
  }
  if (thread_.joinable()) thread_.join();
}

void SerialExecutor::Loop() {
  for (;;) {
    Queued next;
    {
      std::unique_lock lock(mu_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping
      next = std::move(queue_.front());
      queue_.pop_front();
    }
    Run(next);
  }
}

void SerialExecutor::Run(Queued& queued) {
  GenerationJob& job = queued.job;
  engine::GenerateResult result;
  if (job.sink->cancelled()) {
    metrics_.Dropped();
    result.finish = engine::FinishReason::kCancelled;
    job.sink->OnDone(OkStatus(), result);
    return;
  }
  metrics_.Started();
  std::optional<SteadyClock::time_point> first_token;
  auto on_step = [&](const engine::GenerateStep& step) {
    if (step.token != nullptr && !first_token) first_token = SteadyClock::now();
    return job.sink->OnStep(step);
  };
  Status s =
      engine::Generate(model_, tokenizer_, job.prompt, job.options, job.sampling, on_step, &result);
  if (!s.ok()) spdlog::warn("engine: a request failed: {}", s.ToString());
  FinishedRequest done;
  done.prompt_tokens = result.stats.prompt_tokens;
  done.generated_tokens = result.stats.generated_tokens;
  if (first_token) {
    done.first_token_seconds = std::chrono::duration<double>(*first_token - queued.arrived).count();
  }
  done.decode_seconds = result.stats.decode_seconds;
  done.busy_seconds = result.stats.prefill_seconds + result.stats.decode_seconds;
  metrics_.Finished(done);
  job.sink->OnDone(s, result);
}

}  // namespace tf::cli
