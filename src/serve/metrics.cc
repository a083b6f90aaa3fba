#include "serve/metrics.h"

#include <cstdio>

#include "base/mutex.h"

namespace tf::serve {
namespace {

void Line(std::string& out, const char* name, const char* type, const char* help, double value) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", value);
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n" +
         name + " " + buf + "\n";
}

void Summary(std::string& out, const char* name, const char* help, double sum, int64_t count) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", sum);
  out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " summary\n" + name +
         "_sum " + buf + "\n" + name + "_count " + std::to_string(count) + "\n";
}

}  // namespace

void ServeMetrics::SetLoad(const EngineLoad& load) {
  running_.store(load.running);
  waiting_.store(load.waiting);
  kv_used_.store(load.kv_blocks_used);
  kv_total_.store(load.kv_blocks_total);
  MutexLock lock(mu_);
  prefix_ = load.prefix;
}

void ServeMetrics::AddBusy(double seconds) {
  MutexLock lock(mu_);
  busy_seconds_ += seconds;
}

void ServeMetrics::Finished(const FinishedRequest& r) {
  MutexLock lock(mu_);
  ++finished_;
  prompt_tokens_ += r.prompt_tokens;
  generated_tokens_ += r.generated_tokens;
  if (r.generated_tokens > 0) {
    ++first_token_count_;
    first_token_sum_ += r.first_token_seconds;
  }
  if (r.generated_tokens > 1) {
    per_token_count_ += r.generated_tokens - 1;
    per_token_sum_ += r.decode_seconds;
  }
}

void ServeMetrics::Render(std::string& out) const {
  Line(out, "tensorfleet_engine_requests_running", "gauge", "Requests in the running batch.",
       static_cast<double>(running()));
  Line(out, "tensorfleet_engine_requests_waiting", "gauge",
       "Requests queued for admission (waiting for KV-cache blocks or a batch slot).",
       static_cast<double>(waiting()));
  const int64_t used = kv_used_.load(), total = kv_total_.load();
  Line(out, "tensorfleet_engine_kv_cache_blocks_used", "gauge",
       "KV-cache blocks held by running sequences.", static_cast<double>(used));
  Line(out, "tensorfleet_engine_kv_cache_blocks_total", "gauge", "KV-cache blocks in the pool.",
       static_cast<double>(total));
  Line(out, "tensorfleet_engine_kv_cache_usage_ratio", "gauge",
       "Fraction of the KV-cache blocks in use.",
       total > 0 ? static_cast<double>(used) / static_cast<double>(total) : 0.0);
  MutexLock lock(mu_);
  Line(out, "tensorfleet_engine_requests_finished_total", "counter",
       "Requests that ran to their end (cancelled ones included).", static_cast<double>(finished_));
  Line(out, "tensorfleet_engine_prompt_tokens_total", "counter", "Prompt tokens processed.",
       static_cast<double>(prompt_tokens_));
  Line(out, "tensorfleet_engine_generated_tokens_total", "counter", "Tokens generated.",
       static_cast<double>(generated_tokens_));
  Line(out, "tensorfleet_engine_busy_seconds_total", "counter",
       "Seconds the engine spent on forward steps (a step's sequences together).", busy_seconds_);
  Line(out, "tensorfleet_engine_generated_tokens_per_second", "gauge",
       "Generated tokens over busy seconds, since the start.",
       busy_seconds_ > 0 ? static_cast<double>(generated_tokens_) / busy_seconds_ : 0.0);
  const engine::PrefixCacheStats& p = prefix_;
  Line(out, "tensorfleet_engine_prefix_cache_queries_total", "counter",
       "Requests whose prompt was looked up in the prefix cache (at their first admission).",
       static_cast<double>(p.sequences));
  Line(out, "tensorfleet_engine_prefix_cache_hits_total", "counter",
       "Of those, requests that took at least one block from the cache.",
       static_cast<double>(p.hits));
  Line(out, "tensorfleet_engine_prefix_cache_cached_tokens_total", "counter",
       "Prompt tokens whose keys and values came from the cache instead of being computed.",
       static_cast<double>(p.cached_tokens));
  Line(out, "tensorfleet_engine_prefix_cache_hit_ratio", "gauge",
       "Prompt tokens taken from the cache over prompt tokens looked up, since the start.",
       p.prompt_tokens > 0
           ? static_cast<double>(p.cached_tokens) / static_cast<double>(p.prompt_tokens)
           : 0.0);
  Line(out, "tensorfleet_engine_prefix_cache_blocks_reused_total", "counter",
       "KV-cache blocks taken from the cache (re-admissions after a preemption included).",
       static_cast<double>(p.blocks_reused));
  Line(out, "tensorfleet_engine_prefix_cache_blocks", "gauge",
       "KV-cache blocks that hold a cached prefix, in use or idle.",
       static_cast<double>(p.cached_blocks));
  Line(out, "tensorfleet_engine_prefix_cache_evictions_total", "counter",
       "Idle cached blocks taken for other work.", static_cast<double>(p.evictions));
  Summary(out, "tensorfleet_engine_time_to_first_token_seconds",
          "From a request's arrival (queueing included) to its first token.", first_token_sum_,
          first_token_count_);
  Summary(out, "tensorfleet_engine_time_per_output_token_seconds",
          "Time per output token after the first, over all such tokens.", per_token_sum_,
          per_token_count_);
}

}  // namespace tf::serve
