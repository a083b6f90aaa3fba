#include "serve/executor.h"

#include <algorithm>
#include <optional>

#include "base/log.h"

namespace tf::serve {

struct BatchExecutor::Active {
  engine::BatchScheduler::SequenceId id = 0;
  std::shared_ptr<GenerationSink> sink;
  SteadyClock::time_point arrived;
  std::optional<SteadyClock::time_point> first_token;
  bool done = false;
};

Result<std::unique_ptr<BatchExecutor>> BatchExecutor::Create(
    engine::Model& model, const engine::Tokenizer& tokenizer, ServeMetrics& metrics,
    engine::BatchSchedulerOptions options) {
  TF_ASSIGN_OR_RETURN(auto scheduler,
                      engine::BatchScheduler::Create(model, &tokenizer, std::move(options)));
  return std::unique_ptr<BatchExecutor>(new BatchExecutor(metrics, std::move(scheduler)));
}

BatchExecutor::BatchExecutor(ServeMetrics& metrics,
                             std::unique_ptr<engine::BatchScheduler> scheduler)
    : metrics_(metrics),
      scheduler_(std::move(scheduler)),
      max_positions_(scheduler_->max_sequence_positions()) {
  Report();
  thread_ = std::thread([this] { Loop(); });
}

BatchExecutor::~BatchExecutor() { Stop(); }

Status BatchExecutor::Submit(GenerationJob job) {
  const int64_t positions =
      static_cast<int64_t>(job.prompt.size()) + std::max<int64_t>(0, job.options.max_new_tokens);
  if (positions > max_positions_) {
    return InvalidArgument("the prompt and max_tokens need " + std::to_string(positions) +
                           " positions; this server runs sequences of up to " +
                           std::to_string(max_positions_));
  }
  {
    MutexLock lock(mu_);
    if (stopping_) return Unavailable("the engine is shutting down");
    inbox_.push_back({std::move(job), SteadyClock::now()});
  }
  wake_.notify_one();
  return OkStatus();
}

void BatchExecutor::Stop() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void BatchExecutor::Start(Queued queued) {
  GenerationJob& job = queued.job;
  if (job.sink->cancelled()) {  // its client went while it was in the inbox
    engine::GenerateResult result;
    result.finish = engine::FinishReason::kCancelled;
    job.sink->OnDone(OkStatus(), result);
    return;
  }
  auto active = std::make_shared<Active>();
  active->sink = job.sink;
  active->arrived = queued.arrived;
  engine::SequenceRequest request;
  request.prompt = std::move(job.prompt);
  request.options = std::move(job.options);
  request.sampling = std::move(job.sampling);
  std::shared_ptr<Active> a = active;
  request.on_step = [a](const engine::GenerateStep& step) {
    if (step.token != nullptr && !a->first_token) a->first_token = SteadyClock::now();
    return a->sink->OnStep(step);
  };
  request.on_done = [this, a](const Status& s, engine::GenerateResult&& result) {
    a->done = true;
    if (!s.ok()) spdlog::warn("engine: a request failed: {}", s.ToString());
    FinishedRequest done;
    done.prompt_tokens = result.stats.prompt_tokens;
    done.generated_tokens = result.stats.generated_tokens;
    if (a->first_token) {
      done.first_token_seconds =
          std::chrono::duration<double>(*a->first_token - a->arrived).count();
    }
    done.decode_seconds = result.stats.decode_seconds;
    metrics_.Finished(done);
    Report();  // the scheduler has let go of it already
    a->sink->OnDone(s, result);
  };
  auto id = scheduler_->Submit(std::move(request));
  if (!id.ok()) {  // checked at Submit; kept for what only the scheduler knows
    engine::GenerateResult result;
    job.sink->OnDone(id.status(), result);
    return;
  }
  active->id = *id;
  active_.push_back(std::move(active));
}

void BatchExecutor::CancelGone() {
  for (const auto& a : active_) {
    if (!a->done && a->sink->cancelled()) scheduler_->Cancel(a->id);
  }
  std::erase_if(active_, [](const std::shared_ptr<Active>& a) { return a->done; });
}

void BatchExecutor::Report() {
  EngineLoad load;
  load.running = scheduler_->running();
  load.waiting = scheduler_->waiting();
  load.kv_blocks_used = scheduler_->used_blocks();
  load.kv_blocks_total = scheduler_->total_blocks();
  load.prefix = scheduler_->prefix_cache_stats();
  metrics_.SetLoad(load);
}

void BatchExecutor::Loop() {
  for (;;) {
    std::deque<Queued> arrived;
    bool stopping;
    {
      MutexLock lock(mu_);
      const bool busy = !scheduler_->idle();
      lock.Wait(wake_, [&]() REQUIRES(mu_) { return stopping_ || busy || !inbox_.empty(); });
      arrived.swap(inbox_);
      stopping = stopping_;
    }
    for (auto& q : arrived) {
      if (stopping) {
        engine::GenerateResult result;
        result.finish = engine::FinishReason::kCancelled;
        q.job.sink->OnDone(OkStatus(), result);
      } else {
        Start(std::move(q));
      }
    }
    if (stopping) {  // what has not produced a token yet is cancelled; the rest may finish
      for (const auto& a : active_) {
        if (!a->done && !a->first_token) scheduler_->Cancel(a->id);
      }
    }
    CancelGone();
    if (scheduler_->idle()) {
      Report();
      if (stopping) return;
      continue;
    }
    auto start = SteadyClock::now();
    engine::StepReport step = scheduler_->Step();
    if (step.sequences > 0) {
      metrics_.AddBusy(std::chrono::duration<double>(SteadyClock::now() - start).count());
    }
    Report();
  }
}

}  // namespace tf::serve
