// `tensorfleet worker`: registers this machine with the server, heartbeats, takes its
// assignments by long poll and runs each rank (worker/rank_runner.h); drains on request or on
// a spot interruption notice. `tensorfleet up` runs one inside the server's process.
#pragma once

#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "base/status.h"

namespace tf::worker {

struct WorkerOptions {
  std::string server_url;
  // What registers the node: a join token (auth/), or an admin token. Once registered, the
  // worker acts with its node's own credential, kept in data_dir/node-credential.
  std::string token;
  std::filesystem::path data_dir;  // node id, local state, attempts' working directories
  std::string name;                // default: the host name
  std::string address;             // default: the address this machine reaches the server from
  std::optional<int> gpus;         // simulated GPUs instead of what NVML finds
  int64_t simulated_gpu_memory_bytes = 0;  // each simulated GPU's memory
  int cpus = 0;                            // 0: what the machine has
  int64_t memory_bytes = 0;                // 0: what the machine has
  std::map<std::string, std::string> labels;
  double price_per_hour = 0;
  bool spot = false;
  std::chrono::milliseconds heartbeat_interval{2000};
  std::chrono::milliseconds stop_grace{120'000};  // for ranks withdrawn by the server
  // The EC2 instance-metadata spot notice (a 200 from this URL means "interrupted soon").
  // Empty: not polled.
  std::string spot_notice_url;
  std::chrono::milliseconds spot_notice_interval{5000};
  std::chrono::milliseconds spot_notice_deadline{120'000};
  // Run jobs as users of their own (worker/job_user.h) when the worker is root; false: as the
  // worker's user, always.
  bool job_users = true;
  // Limit each rank to its spec's resources.cpus and resources.memory (and kRankPidsMax
  // processes) through cgroups where this worker may make them (worker/cgroups.h); false: no
  // limits. `cgroup_root` is "/" except in tests.
  bool resource_limits = true;
  std::filesystem::path cgroup_root = "/";
  // Keep each rank's directory (work, output, logs) after it ends; false: removed once its
  // outcome is reported, so that finished attempts do not fill the disk.
  bool keep_attempt_dirs = false;
};

class Worker {
 public:
  virtual ~Worker() = default;
  // Kills what a previous worker on this data directory left running (and reports those
  // attempts lost), registers, and starts working. kUnavailable if the server cannot be
  // reached.
  static Result<std::unique_ptr<Worker>> Start(const WorkerOptions& options);
  virtual const std::string& node_id() const = 0;
  // Stops taking work and interrupts every rank within `grace` (they are reported interrupted,
  // so their jobs resume elsewhere), then returns.
  virtual void Shutdown(std::chrono::milliseconds grace) = 0;
  // Blocks until Shutdown() has finished.
  virtual void Wait() = 0;
};

// The node id kept in data_dir/node-id, created on first use.
Result<std::string> LoadOrCreateNodeId(const std::filesystem::path& data_dir);

}  // namespace tf::worker
