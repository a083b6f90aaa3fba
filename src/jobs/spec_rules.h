// The rules a job spec's values follow, whichever form they came in (YAML or the store's
// JSON). docs/jobs-spec.md lists the same limits for users; keep them together.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/clock.h"
#include "jobs/job_spec.h"

namespace tf::jobs {

inline constexpr size_t kMaxSpecBytes = 256 * 1024;  // the YAML text

struct IntRange {
  int64_t min;
  int64_t max;
};
inline constexpr IntRange kGpusRange{0, 64};
inline constexpr IntRange kCpusRange{1, 1024};
inline constexpr IntRange kNodesRange{1, 64};
inline constexpr IntRange kProcessesPerNodeRange{1, 64};
inline constexpr IntRange kPriorityRange{-1000, 1000};
inline constexpr IntRange kMaxAttemptsRange{1, 100};

inline constexpr int64_t kMinMemoryBytes = int64_t{1} << 20;     // 1Mi, unless 0
inline constexpr int64_t kMaxMemoryBytes = int64_t{64} << 40;    // 64Ti
inline constexpr int64_t kMaxGpuMemoryBytes = int64_t{1} << 40;  // 1Ti: more than any GPU has
inline constexpr IntRange kSyncIntervalRange{10 * kSecondMs, kDayMs};
inline constexpr IntRange kBackoffRange{0, kHourMs};
inline constexpr IntRange kMaxBackoffRange{0, kDayMs};
inline constexpr IntRange kMaxRuntimeRange{0, 365 * kDayMs};
inline constexpr IntRange kDrainGraceRange{0, kHourMs};

inline constexpr size_t kMaxNameBytes = 63;
inline constexpr size_t kMaxCommandArgs = 1024;
inline constexpr size_t kMaxCommandBytes = 128 * 1024;  // all arguments together
inline constexpr size_t kMaxPathBytes = 1024;           // code and checkpoint.dir
inline constexpr size_t kMaxEnvVars = 256;
inline constexpr size_t kMaxEnvBytes = 256 * 1024;  // names and values together
inline constexpr size_t kMaxKeyBytes = 128;         // env, hyperparameter and node_selector names
inline constexpr size_t kMaxHyperparameters = 256;
inline constexpr size_t kMaxHyperparameterBytes = 4096;  // one string value
inline constexpr size_t kMaxNodeSelectorLabels = 32;
inline constexpr size_t kMaxLabelValueBytes = 63;
inline constexpr size_t kMaxMetricDefinitions = 32;

// "must be an integer from 0 to 64, got <got>".
std::string IntRangeMessage(IntRange range, std::string_view got);

// Whether the platform sets this variable in every job's environment itself (the
// TENSORFLEET_ prefix and torchrun's RANK, WORLD_SIZE, MASTER_ADDR, ...), so a spec may not.
// kEngineApiKeyEnv is the one TENSORFLEET_ name a spec may set.
bool IsPlatformEnvName(std::string_view name);

// The key that `tensorfleet engine serve` asks its clients for (Authorization: Bearer), when
// set: endpoints give each replica's job its own, so that only the gateway reaches it.
inline constexpr std::string_view kEngineApiKeyEnv = "TENSORFLEET_ENGINE_API_KEY";

// The first value of `spec` that breaks a rule: the field's path as the YAML spells it
// ("resources.gpus", "env.HOME", "metrics[1].regex") and what is wrong with it.
struct SpecProblem {
  std::string path;
  std::string message;
};
std::optional<SpecProblem> FindSpecProblem(const JobSpec& spec);

}  // namespace tf::jobs
