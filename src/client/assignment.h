// One rank of an attempt as the server assigns it to a worker (the JSON of
// GET /v1/nodes/{id}/assignments), with the job's spec typed as it was submitted.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::client {

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
  jobs::JobSpec spec;  // read with jobs::JobSpecFromJson: the defaults are the spec's own
  std::string bucket;
  std::string code_key;
  std::string checkpoint_prefix;
  std::string output_prefix;
  std::string job_token;

  // "job_x/2/0": one rank of one attempt.
  std::string key() const;
};

// Reads one assignment. kInvalidArgument naming the field for a missing or mistyped field, or a
// spec that JobSpecFromJson refuses.
Result<Assignment> AssignmentFromJson(const nlohmann::json& json);

}  // namespace tf::client
