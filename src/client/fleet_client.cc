#include "client/fleet_client.h"

namespace tf::client {

using nlohmann::json;

Result<std::unique_ptr<FleetClient>> FleetClient::Create(const std::string& server_url,
                                                         const std::string& token,
                                                         const std::string& node_id) {
  TF_ASSIGN_OR_RETURN(std::unique_ptr<client::JsonClient> client,
                      client::JsonClient::Create(server_url, token));
  return std::unique_ptr<FleetClient>(
      new FleetClient(server_url, token, node_id, std::move(client)));
}

Result<std::unique_ptr<FleetClient>> FleetClient::Clone() const {
  return Create(server_url_, token_, node_id_);
}

Result<int64_t> FleetClient::Register(const std::string& name, const fleet::NodeInfo& info) {
  TF_ASSIGN_OR_RETURN(
      json answer,
      client_->Call("POST", "/v1/nodes",
                    json{{"id", node_id_}, {"name", name}, {"info", fleet::NodeInfoToJson(info)}}));
  return answer.value("epoch", int64_t{0});
}

Status FleetClient::Heartbeat(int64_t epoch) {
  return client_
      ->Call("POST", "/v1/nodes/" + node_id_ + "/heartbeat", json{{"epoch", epoch}},
             std::chrono::seconds(10))
      .status();
}

Result<NodeAssignmentsView> FleetClient::Assignments(const std::string& known, int64_t wait_ms) {
  std::string target = "/v1/nodes/" + node_id_ + "/assignments?wait_ms=" + std::to_string(wait_ms);
  if (!known.empty()) target += "&known=" + known;
  TF_ASSIGN_OR_RETURN(json answer, client_->Call("GET", target, nullptr,
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
  return client_->Call("POST", "/v1/jobs/" + a.job_id + "/reports", body, std::chrono::seconds(30))
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
  return client_->Call("POST", "/v1/jobs/" + a.job_id + "/samples", body, std::chrono::seconds(30))
      .status();
}

Status FleetClient::Drain(int64_t deadline_ms, const std::string& reason) {
  return client_
      ->Call("POST", "/v1/nodes/" + node_id_ + "/drain",
             json{{"deadline_ms", deadline_ms}, {"reason", reason}})
      .status();
}

}  // namespace tf::client
