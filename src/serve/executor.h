// How `tensorfleet engine serve` runs generation requests: continuous batching in front of the
// engine.
//
// GenerationExecutor is the seam between the routes and the engine. BatchExecutor runs an
// engine::BatchScheduler (engine/batch_scheduler.h: paged KV cache, admission, chunked
// prefill, preemption) on one engine thread: requests join the running batch at the next step
// and leave it, freeing their KV-cache blocks, as soon as they end. Neither knows about HTTP: a
// request reports through its GenerationSink.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "base/mutex.h"
#include "base/status.h"
#include "engine/batch_scheduler.h"
#include "engine/generate.h"
#include "engine/model.h"
#include "engine/tokenizers/tokenizer.h"
#include "serve/metrics.h"

namespace tf::serve {

// Where a request's progress goes. Called on the engine thread.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  // A step of generation (see engine::GenerateStep); false cancels the request.
  virtual bool OnStep(const engine::GenerateStep& step) = 0;
  // Called once at the end: the result, or why there is none (a request cancelled before it
  // started ends with FinishReason::kCancelled and OK).
  virtual void OnDone(const Status& status, const engine::GenerateResult& result) = 0;
  // Whether the client has gone; checked before every step while the request waits or runs.
  virtual bool cancelled() const = 0;
};

struct GenerationJob {
  std::vector<int32_t> prompt;
  engine::GenerateOptions options;
  engine::SamplingParams sampling;
  std::shared_ptr<GenerationSink> sink;
};

class GenerationExecutor {
 public:
  virtual ~GenerationExecutor() = default;
  // Queues `job`. Unavailable once Stop has been called; InvalidArgument for a job that could
  // never run (see engine::BatchScheduler::Submit), without calling its sink.
  virtual Status Submit(GenerationJob job) = 0;
  // Refuses new jobs, cancels those that have not produced a token yet (OnDone with
  // kCancelled), lets the others finish or be cancelled by their sinks, and joins the engine
  // thread.
  virtual void Stop() = 0;
};

// Continuous batching on one engine thread. `model`, `tokenizer` and `metrics` must outlive
// the executor.
class BatchExecutor final : public GenerationExecutor {
 public:
  // InvalidArgument for scheduler options out of range.
  static Result<std::unique_ptr<BatchExecutor>> Create(engine::Model& model,
                                                       const engine::Tokenizer& tokenizer,
                                                       ServeMetrics& metrics,
                                                       engine::BatchSchedulerOptions options);
  ~BatchExecutor() override;

  Status Submit(GenerationJob job) override;
  void Stop() override;

  // The longest prompt plus max_new_tokens a job may ask for.
  int64_t max_sequence_positions() const { return max_positions_; }

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Queued {
    GenerationJob job;
    SteadyClock::time_point arrived;
  };
  struct Active;  // a job in the scheduler (engine thread only)

  BatchExecutor(ServeMetrics& metrics, std::unique_ptr<engine::BatchScheduler> scheduler);
  void Loop();
  void Start(Queued queued);  // hands a job to the scheduler
  void CancelGone();          // cancels the jobs whose clients have gone
  void Report();              // the load gauges

  ServeMetrics& metrics_;
  std::unique_ptr<engine::BatchScheduler> scheduler_;  // engine thread only
  std::vector<std::shared_ptr<Active>> active_;        // engine thread only
  int64_t max_positions_;
  Mutex mu_;
  std::condition_variable wake_;
  std::deque<Queued> inbox_ GUARDED_BY(mu_);
  bool stopping_ GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace tf::serve
