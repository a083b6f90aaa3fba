// What `tensorfleet engine serve` reports at /metrics (Prometheus text). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>

#include "base/mutex.h"
#include "engine/batch_scheduler.h"

namespace tf::serve {

struct FinishedRequest {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double first_token_seconds = 0;  // from arrival (queueing included) to the first token
  double decode_seconds = 0;       // from the first token to the last
};

// The engine's load after a step.
struct EngineLoad {
  int64_t running = 0;          // sequences in the running batch
  int64_t waiting = 0;          // sequences queued for admission (preempted ones included)
  int64_t kv_blocks_used = 0;   // KV-cache blocks held by sequences
  int64_t kv_blocks_total = 0;  // blocks in the pool
  engine::PrefixCacheStats prefix;
};

class ServeMetrics {
 public:
  void SetLoad(const EngineLoad& load);
  // Seconds of engine time spent on forward steps (all sequences of a step together).
  void AddBusy(double seconds);
  void Finished(const FinishedRequest& r);

  int64_t running() const { return running_.load(); }
  int64_t waiting() const { return waiting_.load(); }

  // Appends the metrics in Prometheus text exposition format.
  void Render(std::string& out) const;

 private:
  std::atomic<int64_t> running_{0};
  std::atomic<int64_t> waiting_{0};
  std::atomic<int64_t> kv_used_{0};
  std::atomic<int64_t> kv_total_{0};
  mutable Mutex mu_;
  engine::PrefixCacheStats prefix_ GUARDED_BY(mu_);
  int64_t finished_ GUARDED_BY(mu_) = 0;
  int64_t prompt_tokens_ GUARDED_BY(mu_) = 0;
  int64_t generated_tokens_ GUARDED_BY(mu_) = 0;
  int64_t first_token_count_ GUARDED_BY(mu_) = 0;
  double first_token_sum_ GUARDED_BY(mu_) = 0;
  int64_t per_token_count_ GUARDED_BY(mu_) = 0;  // output tokens after each request's first
  double per_token_sum_ GUARDED_BY(mu_) = 0;     // decode seconds over those tokens
  double busy_seconds_ GUARDED_BY(mu_) = 0;
};

}  // namespace tf::serve
