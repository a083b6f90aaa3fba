// The environment contract (docs/jobs.md): what every process of a job finds in its
// environment. A pure function of the assignment and the paths the worker chose, so that the
// contract is tested in one place (tests/worker_job_env_test.cc).
#pragma once

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace tf::worker {

// One rank of an attempt as the server assigned it (the JSON of GET /v1/nodes/{id}/assignments).
struct Assignment {
  std::string job_id;
  std::string job_name;
  std::string project_id;
  int attempt = 0;
  std::string token;  // the attempt's fencing token, as the server wrote it
  int node_rank = 0;
  std::vector<int> gpus;
  std::vector<std::string> addresses;  // every node of the gang, in rank order
  int master_port = 0;
  nlohmann::json spec;  // jobs::JobSpecToJson
  std::string bucket;
  std::string code_key;
  std::string checkpoint_prefix;
  std::string output_prefix;
  std::string job_token;

  // "job_x/2/0": one rank of one attempt.
  std::string key() const;
};

// kInvalidArgument-free parse: a malformed assignment throws nlohmann::json::exception, which
// the caller turns into an error.
Assignment AssignmentFromJson(const nlohmann::json& json);

struct ProcessPaths {
  std::filesystem::path workdir;  // the unpacked code; the process's working directory
  std::filesystem::path checkpoint_dir;
  std::filesystem::path output_dir;
  std::filesystem::path metrics_file;
};

// How many processes this node starts: spec.processes_per_node ("gpu" = one per GPU, at least 1).
int ProcessesPerNode(const Assignment& a);

// The variables for local rank `local_rank` of this node, on top of `base` (the worker's own
// environment with TENSORFLEET_*, torchrun's and CUDA_VISIBLE_DEVICES removed).
std::map<std::string, std::string> JobEnvironment(const Assignment& a, int local_rank,
                                                  const ProcessPaths& paths,
                                                  const std::string& server_url,
                                                  const std::map<std::string, std::string>& base);

// The worker's environment as a map.
std::map<std::string, std::string> CurrentEnvironment();

}  // namespace tf::worker
