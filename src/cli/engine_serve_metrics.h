// What `tensorfleet engine serve` reports at /metrics (Prometheus text). Thread-safe.
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace tf::cli {

struct FinishedRequest {
  int64_t prompt_tokens = 0;
  int64_t generated_tokens = 0;
  double first_token_seconds = 0;  // from arrival (queueing included) to the first token
  double decode_seconds = 0;       // from the first token to the last
  double busy_seconds = 0;         // prefill and decode: the engine's time on this request
};

class ServeMetrics {
 public:
  void Queued() { ++waiting_; }
  void Started() {
    --waiting_;
    ++running_;
  }
  void Dropped() { --waiting_; }  // cancelled before it started
  void Finished(const FinishedRequest& r);

  int64_t running() const { return running_.load(); }
  int64_t waiting() const { return waiting_.load(); }

  // Appends the metrics in Prometheus text exposition format.
  void Render(std::string& out) const;

 private:
  std::atomic<int64_t> running_{0};
  std::atomic<int64_t> waiting_{0};
  mutable std::mutex mu_;
  int64_t finished_ = 0;           // guarded by mu_
  int64_t prompt_tokens_ = 0;      // guarded by mu_
  int64_t generated_tokens_ = 0;   // guarded by mu_
  int64_t first_token_count_ = 0;  // guarded by mu_
  double first_token_sum_ = 0;     // guarded by mu_
  int64_t per_token_count_ = 0;    // guarded by mu_: output tokens after each request's first
  double per_token_sum_ = 0;       // guarded by mu_: decode seconds over those tokens
  double busy_seconds_ = 0;        // guarded by mu_
};

}  // namespace tf::cli
