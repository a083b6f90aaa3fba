#include "client/fleet_client.h"

namespace tf::client {

using nlohmann::json;

std::string WorkerSecret::credential() const {
  MutexLock lock(mu_);
  return credential_;
}

void WorkerSecret::set_credential(std::string credential) {
  MutexLock lock(mu_);
  credential_ = std::move(credential);
}

std::string WorkerSecret::Current() const {
  MutexLock lock(mu_);
  return credential_.empty() ? registration_token_ : credential_;
}

Result<std::unique_ptr<FleetClient>> FleetClient::Create(const std::string& server_url,
                                                         const std::string& registration_token,
                                                         const std::string& node_id,
                                                         const std::string& credential) {
  return WithSecret(server_url, std::make_shared<WorkerSecret>(registration_token, credential),
                    node_id);
}

Result<std::unique_ptr<FleetClient>> FleetClient::WithSecret(const std::string& server_url,
                                                             std::shared_ptr<WorkerSecret> secret,
                                                             const std::string& node_id) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<client::JsonClient> client,
                      client::JsonClient::Create(server_url, secret->Current()));
  return std::unique_ptr<FleetClient>(
      new FleetClient(server_url, std::move(secret), node_id, std::move(client)));
}

Result<std::unique_ptr<FleetClient>> FleetClient::Clone() const {
  return WithSecret(server_url_, secret_, node_id_);
}

JsonClient& FleetClient::Calls() {
  client_->set_token(secret_->Current());
  return *client_;
}

Result<int64_t> FleetClient::Register(const std::string& name, const fleet::NodeInfo& info) {
  json body = {{"id", node_id_}, {"name", name}, {"info", fleet::NodeInfoToJson(info)}};
  std::string credential = secret_->credential();
  Result<json> answer = Unauthenticated("no credential yet");
  if (!credential.empty()) {
    client_->set_token(credential);
    answer = client_->Call("POST", "/v1/nodes", body);
  }
  if (!answer.ok() && answer.status().code() == StatusCode::kUnauthenticated) {
    if (secret_->registration_token().empty()) {
      return Unauthenticated("cannot register node " + node_id_ +
                             ": no join token or admin token to register with" +
                             (credential.empty() ? "" : " (" + answer.status().message() + ")"));
    }
    client_->set_token(secret_->registration_token());
    answer = client_->Call("POST", "/v1/nodes", body);
  }
  TF_RETURN_IF_ERROR(answer.status());
  std::string issued = answer->value("credential", "");
  if (!issued.empty()) secret_->set_credential(issued);
  return answer->value("epoch", int64_t{0});
}

Status FleetClient::Heartbeat(int64_t epoch) {
  return Calls()
      .Call("POST", "/v1/nodes/" + node_id_ + "/heartbeat", json{{"epoch", epoch}},
            std::chrono::seconds(10))
      .status();
}

Result<NodeAssignmentsView> FleetClient::Assignments(const std::string& known, int64_t wait_ms) {
  std::string target = "/v1/nodes/" + node_id_ + "/assignments?wait_ms=" + std::to_string(wait_ms);
  if (!known.empty()) target += "&known=" + known;
  TF_ASSIGN_OR_RETURN(json answer, Calls().Call("GET", target, nullptr,
                                                std::chrono::milliseconds(wait_ms + 15'000)));
  NodeAssignmentsView out;
  try {
    out.digest = answer.value("digest", "");
    out.state = answer.value("state", "");
    out.epoch = answer.value("epoch", int64_t{0});
    if (answer.contains("drain") && answer["drain"].is_object()) {
      out.drain_deadline_ms = answer["drain"].value("deadline_ms", int64_t{120'000});
      out.drain_reason = answer["drain"].value("reason", "");
    }
    for (const json& r : answer.value("ranks", json::array())) {
      auto assignment = AssignmentFromJson(r);
      if (!assignment.ok()) {
        return Internal("the server's assignments do not read: " + assignment.status().message());
      }
      out.ranks.push_back(std::move(assignment).value());
    }
  } catch (const json::exception& e) {
    return Internal(std::string("the server's assignments do not read: ") + e.what());
  }
  return out;
}

Status FleetClient::Report(const Assignment& a, const RankOutcome& o) {
  json body = {{"attempt", a.attempt},   {"token", a.token},         {"node_rank", a.node_rank},
               {"state", o.state},       {"exit_code", o.exit_code}, {"signal", o.signal},
               {"log_tail", o.log_tail}, {"message", o.message}};
  return Calls()
      .Call("POST", "/v1/jobs/" + a.job_id + "/reports", body, std::chrono::seconds(30))
      .status();
}

Status FleetClient::AddSamples(const Assignment& a, const std::vector<MetricSampleOut>& samples) {
  json list = json::array();
  for (const MetricSampleOut& s : samples) {
    json x = {{"name", s.name}, {"value", s.value}};
    if (s.step >= 0) x["step"] = s.step;
    list.push_back(std::move(x));
  }
  json body = {{"attempt", a.attempt}, {"token", a.token}, {"samples", std::move(list)}};
  return Calls()
      .Call("POST", "/v1/jobs/" + a.job_id + "/samples", body, std::chrono::seconds(30))
      .status();
}

Status FleetClient::Drain(int64_t deadline_ms, const std::string& reason) {
  return Calls()
      .Call("POST", "/v1/nodes/" + node_id_ + "/drain",
            json{{"deadline_ms", deadline_ms}, {"reason", reason}})
      .status();
}

}  // namespace tf::client
