// The environment contract (docs/jobs.md): what every process of a job finds in its
// environment. A pure function of the assignment and the paths the worker chose, so that the
// contract is tested in one place (tests/worker_job_env_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "client/assignment.h"

namespace tf::worker {

using client::Assignment;

struct ProcessPaths {
  std::filesystem::path workdir;  // the unpacked code; the process's working directory
  std::filesystem::path checkpoint_dir;
  std::filesystem::path output_dir;
  std::filesystem::path metrics_file;
};

// How many processes this node starts: spec.processes_per_node ("gpu" = one per GPU, at least 1).
int ProcessesPerNode(const Assignment& a);

// The variables for local rank `local_rank` of this node: PATH, HOME and LANG from `base` (the
// worker's own environment; nothing else of it), the spec's `env`, then the contract.
std::map<std::string, std::string> JobEnvironment(const Assignment& a, int local_rank,
                                                  const ProcessPaths& paths,
                                                  const std::string& server_url,
                                                  const std::map<std::string, std::string>& base);

// The worker's environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace tf::worker
