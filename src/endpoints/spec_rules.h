// The rules an endpoint spec's values follow, whichever form they came in (YAML or the store's
// JSON). docs/endpoints.md lists the same limits for users; keep them together.
#pragma once

#include <optional>

#include "endpoints/endpoint_spec.h"
#include "jobs/spec_rules.h"

namespace tf::endpoints {

inline constexpr jobs::IntRange kReplicasRange{0, 100};  // min; max is from 1
inline constexpr jobs::IntRange kWarmPoolRange{0, 100};
inline constexpr jobs::IntRange kTargetRange{1, 10'000};
inline constexpr jobs::IntRange kMaxQueueRange{0, 100'000};
inline constexpr jobs::IntRange kThreadsRange{0, 1024};
inline constexpr jobs::IntRange kMaxBatchRange{1, 1024};
inline constexpr jobs::IntRange kScaleDelayRange{0, kDayMs};
inline constexpr jobs::IntRange kScaleToZeroRange{10 * kSecondMs, 30 * kDayMs};
inline constexpr jobs::IntRange kQueueTimeoutRange{kSecondMs, kHourMs};
inline constexpr jobs::IntRange kReadinessTimeoutRange{kSecondMs, kDayMs};
inline constexpr int64_t kMinKvCacheBytes = int64_t{16} << 20;
inline constexpr int64_t kMaxKvCacheBytes = int64_t{1} << 40;
inline constexpr int64_t kMaxGpuMemoryBytes = int64_t{1} << 40;
inline constexpr size_t kMaxLocationBytes = 1024;

// The first value of `spec` that breaks a rule, with its path as the YAML spells it
// ("replicas.max", "engine.builtin.quantize", "env.HOME").
std::optional<jobs::SpecProblem> FindEndpointProblem(const EndpointSpec& spec);

}  // namespace tf::endpoints
