#include "client/assignment.h"

namespace tf::client {

std::string Assignment::key() const {
  return job_id + "/" + std::to_string(attempt) + "/" + std::to_string(node_rank);
}

Result<Assignment> AssignmentFromJson(const nlohmann::json& j) {
  Assignment a;
  try {
    a.job_id = j.at("job_id").get<std::string>();
    a.job_name = j.value("job_name", "");
    a.project_id = j.value("project_id", "");
    a.attempt = j.at("attempt").get<int>();
    a.token = j.at("token").get<std::string>();
    a.node_rank = j.at("node_rank").get<int>();
    a.gpus = j.value("gpus", std::vector<int>{});
    a.addresses = j.value("addresses", std::vector<std::string>{});
    a.master_port = j.value("master_port", 0);
    a.bucket = j.value("bucket", "");
    a.code_key = j.value("code_key", "");
    a.checkpoint_prefix = j.value("checkpoint_prefix", "");
    a.output_prefix = j.value("output_prefix", "");
    a.job_token = j.value("job_token", "");
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgument(std::string("assignment: ") + e.what());
  }
  if (!j.contains("spec")) return InvalidArgument("assignment " + a.key() + ": no spec");
  auto spec = jobs::JobSpecFromJson(j["spec"]);
  if (!spec.ok()) return spec.status().WithContext("assignment " + a.key() + ": spec");
  a.spec = std::move(spec).value();
  return a;
}

}  // namespace tf::client
