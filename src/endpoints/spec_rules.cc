#include "endpoints/spec_rules.h"

#include <string>

#include "base/utf8.h"
#include "jobs/quantities.h"
#include "jobs/spec_text.h"

namespace tf::endpoints {
namespace {

using jobs::IntRange;
using Problem = std::optional<jobs::SpecProblem>;

Problem Fail(std::string path, std::string message) {
  return jobs::SpecProblem{std::move(path), std::move(message)};
}

Problem CheckInt(const std::string& path, int64_t value, IntRange range) {
  if (value >= range.min && value <= range.max) return std::nullopt;
  return Fail(path, jobs::IntRangeMessage(range, std::to_string(value)));
}

Problem CheckDuration(const std::string& path, TimeMs value, IntRange range) {
  if (value >= range.min && value <= range.max) return std::nullopt;
  return Fail(path, "must be a duration from " + jobs::FormatDuration(range.min) + " to " +
                        jobs::FormatDuration(range.max) + ", got " +
                        (value < 0 ? std::to_string(value) + "ms" : jobs::FormatDuration(value)));
}

Problem CheckMemory(const std::string& path, int64_t value, int64_t min, int64_t max) {
  if (value >= min && value <= max) return std::nullopt;
  return Fail(path, "must be from " + jobs::FormatMemory(min) + " to " + jobs::FormatMemory(max) +
                        ", got " + (value < 0 ? std::to_string(value) : jobs::FormatMemory(value)));
}

Problem CheckText(const std::string& path, const std::string& value, size_t max_bytes) {
  if (value.empty()) return Fail(path, "must not be empty");
  if (value.size() > max_bytes) {
    return Fail(path, "must be at most " + std::to_string(max_bytes) + " bytes");
  }
  if (value.find('\0') != std::string::npos) return Fail(path, "must not contain a NUL byte");
  if (!IsValidUtf8(value)) return Fail(path, "must be valid UTF-8");
  return std::nullopt;
}

// A replica is a job of the service kind: the name, env, resources, node_selector and command
// follow the job's rules, checked by the jobs' own checker on the job a replica would be.
Problem CheckAsJob(const EndpointSpec& spec) {
  jobs::JobSpec job;
  job.name = spec.name;
  job.env = spec.env;
  job.resources = spec.resources;  // gpu_memory is checked as the endpoint's (CheckGpuShare)
  job.node_selector = spec.node_selector;
  job.command = spec.engine.kind == EngineKind::kCommand
                    ? spec.engine.command
                    : std::vector<std::string>{"tensorfleet", "engine", "serve"};
  if (spec.resources.gpu_memory_bytes != 0) {
    return Fail(
        "resources.gpu_memory",
        "an endpoint declares a replica's share of one GPU as gpu_memory, at the top level");
  }
  if (spec.env.count(std::string(jobs::kEngineApiKeyEnv))) {
    return Fail("env." + std::string(jobs::kEngineApiKeyEnv),
                "is set by the platform: each replica has a key of its own, which only the "
                "gateway sends");
  }
  auto problem = jobs::FindSpecProblem(job);
  if (problem && problem->path.starts_with("command")) {
    problem->path = "engine." + problem->path;
  }
  return problem;
}

Problem CheckModel(const ModelSource& model) {
  if (model.location.empty()) return Fail("model", "is required");
  if (auto p = CheckText("model", model.location, kMaxLocationBytes)) return p;
  switch (model.kind) {
    case ModelSourceKind::kPath:
      return std::nullopt;
    case ModelSourceKind::kObjects: {
      constexpr std::string_view kScheme = "tf://";
      std::string_view rest = std::string_view(model.location).substr(kScheme.size());
      if (!model.location.starts_with(kScheme) || rest.empty() || rest.front() == '/') {
        return Fail("model", "must be tf://BUCKET/PREFIX, got " + jobs::Quote(model.location));
      }
      return std::nullopt;
    }
    case ModelSourceKind::kJobOutput:
      return CheckText("model.job", model.location, 128);
  }
  return std::nullopt;
}

Problem CheckEngine(const EndpointSpec& spec) {
  const EngineSpec& e = spec.engine;
  if (e.kind == EngineKind::kBuiltin) {
    if (auto p = CheckInt("engine.builtin.threads", e.threads, kThreadsRange)) return p;
    if (e.threads > spec.resources.cpus) {
      // The worker holds a rank to its declared CPUs (a CPU quota): more threads than that
      // only take turns, and each decode step waits for the slowest of them.
      return Fail("engine.builtin.threads",
                  "is " + std::to_string(e.threads) + ", more than resources.cpus (" +
                      std::to_string(spec.resources.cpus) +
                      "): a replica is held to its declared CPUs, so the extra threads would "
                      "only take turns; raise resources.cpus, or leave threads out to use them "
                      "all");
    }
    if (e.quantize != "none" && e.quantize != "q8_0" && e.quantize != "q4_0") {
      return Fail("engine.builtin.quantize",
                  "must be one of none, q8_0, q4_0, got " + jobs::Quote(e.quantize));
    }
    if (auto p = CheckMemory("engine.builtin.kv_cache", e.kv_cache_bytes, kMinKvCacheBytes,
                             kMaxKvCacheBytes)) {
      return p;
    }
    if (auto p = CheckInt("engine.builtin.max_batch", e.max_batch, kMaxBatchRange)) return p;
    if (!e.command.empty()) return Fail("engine.command", "is for engines other than builtin");
  } else if (e.command.empty()) {
    return Fail("engine.command", "is required (the command that starts the server)");
  }
  const Readiness& r = e.readiness;
  if (auto p = CheckText("engine.readiness.path", r.path, 1024)) return p;
  if (r.path.front() != '/') {
    return Fail("engine.readiness.path", "must start with /, got " + jobs::Quote(r.path));
  }
  return CheckDuration("engine.readiness.timeout", r.timeout_ms, kReadinessTimeoutRange);
}

Problem CheckScaling(const EndpointSpec& spec) {
  if (auto p = CheckInt("replicas.min", spec.min_replicas, kReplicasRange)) return p;
  if (auto p = CheckInt("replicas.max", spec.max_replicas, {1, kReplicasRange.max})) return p;
  if (spec.max_replicas < spec.min_replicas) {
    return Fail("replicas.max", "must be at least replicas.min (" +
                                    std::to_string(spec.min_replicas) + "), got " +
                                    std::to_string(spec.max_replicas));
  }
  const Autoscaling& a = spec.autoscaling;
  std::string target_path = a.metric == ScalingMetric::kOngoingRequests
                                ? "autoscaling.target_ongoing_requests"
                                : "autoscaling.target_queue_depth";
  if (auto p = CheckInt(target_path, a.target, kTargetRange)) return p;
  if (auto p = CheckDuration("autoscaling.upscale_delay", a.upscale_delay_ms, kScaleDelayRange)) {
    return p;
  }
  if (auto p =
          CheckDuration("autoscaling.downscale_delay", a.downscale_delay_ms, kScaleDelayRange)) {
    return p;
  }
  if (auto p = CheckDuration("autoscaling.scale_to_zero_after", a.scale_to_zero_after_ms,
                             kScaleToZeroRange)) {
    return p;
  }
  if (auto p = CheckInt("warm_pool", spec.warm_pool, kWarmPoolRange)) return p;
  if (auto p = CheckInt("max_queue", spec.max_queue, kMaxQueueRange)) return p;
  return CheckDuration("queue_timeout", spec.queue_timeout_ms, kQueueTimeoutRange);
}

Problem CheckGpuShare(const EndpointSpec& spec) {
  if (spec.gpu_memory_bytes == 0) return std::nullopt;
  if (auto p =
          CheckMemory("gpu_memory", spec.gpu_memory_bytes, int64_t{1} << 20, kMaxGpuMemoryBytes)) {
    return p;
  }
  if (spec.resources.gpus != 0) {
    return Fail("gpu_memory",
                "is a share of one GPU, so resources.gpus must be 0 (a replica has either whole "
                "GPUs or a share of one), got resources.gpus " +
                    std::to_string(spec.resources.gpus));
  }
  return std::nullopt;
}

}  // namespace

std::optional<jobs::SpecProblem> FindEndpointProblem(const EndpointSpec& spec) {
  if (auto p = CheckAsJob(spec)) return p;
  if (auto p = CheckModel(spec.model)) return p;
  if (auto p = CheckEngine(spec)) return p;
  if (auto p = CheckGpuShare(spec)) return p;
  return CheckScaling(spec);
}

}  // namespace tf::endpoints
