// The flags that describe a worker's machine, shared by `tensorfleet worker` and `up`.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "worker/worker.h"

namespace tf::cli {

struct WorkerFlags {
  int gpus = -1;           // -1: what NVML finds
  std::string gpu_memory;  // each simulated GPU's
  int cpus = 0;
  std::string memory;
  std::vector<std::string> labels;  // key=value
  std::string zone;
  std::string placement_group;
  double price = 0;
  bool spot = false;
  std::string address;
  std::string name;
  std::string heartbeat = "2s";
  std::string grace = "120s";
  std::string spot_notice_url;
  std::string worker_dir;
  bool jobs_as_worker_user = false;
  bool no_resource_limits = false;
  bool keep_attempt_dirs = false;
};

// `all`: every flag (tensorfleet worker); otherwise only the ones `up` offers.
void AddWorkerFlags(CLI::App* cmd, WorkerFlags& f, bool all);
// Fills everything but the server URL and token. kInvalidArgument naming the flag.
Result<worker::WorkerOptions> ToWorkerOptions(const WorkerFlags& f, const std::string& default_dir);

}  // namespace tf::cli
