// How `tensorfleet engine serve` runs generation requests: a queue in front of the engine.
//
// GenerationExecutor is the seam the continuous-batching scheduler will implement; this version,
// SerialExecutor, runs one sequence at a time on one engine thread, in arrival order. Neither
// knows about HTTP: a request reports through its GenerationSink.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "base/status.h"
#include "cli/engine_serve_metrics.h"
#include "engine/generate.h"
#include "engine/model.h"
#include "engine/tokenizer.h"

namespace tf::cli {

// Where a request's progress goes. Called on the engine thread.
class GenerationSink {
 public:
  virtual ~GenerationSink() = default;
  // A step of generation (see engine::GenerateStep); false cancels the request.
  virtual bool OnStep(const engine::GenerateStep& step) = 0;
  // Called once at the end: the result, or why there is none (a request cancelled before it
  // started ends with FinishReason::kCancelled and OK).
  virtual void OnDone(const Status& status, const engine::GenerateResult& result) = 0;
  // Whether the client has gone; checked before the request starts.
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
  // Queues `job`. Unavailable once Stop has been called.
  virtual Status Submit(GenerationJob job) = 0;
  // Refuses new jobs, cancels the waiting ones (OnDone with kCancelled), lets the running one
  // finish or be cancelled by its sink, and joins the engine thread.
  virtual void Stop() = 0;
};

// One engine thread, one sequence at a time. `model`, `tokenizer` and `metrics` must outlive
// the executor.
class SerialExecutor final : public GenerationExecutor {
 public:
  SerialExecutor(engine::Model& model, const engine::Tokenizer& tokenizer, ServeMetrics& metrics);
  ~SerialExecutor() override;

  Status Submit(GenerationJob job) override;
  void Stop() override;

 private:
  struct Queued {
    GenerationJob job;
    std::chrono::steady_clock::time_point arrived;
  };
  void Loop();
  void Run(Queued& queued);

  engine::Model& model_;
  const engine::Tokenizer& tokenizer_;
  ServeMetrics& metrics_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::deque<Queued> queue_;  // guarded by mu_
  bool stopping_ = false;     // guarded by mu_
  std::thread thread_;
};

}  // namespace tf::cli
