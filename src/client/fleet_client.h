// What a worker says to the server, and hears back: registration, heartbeats, assignments by
// long poll, rank reports and metric samples (the routes in src/api/node_routes.cc).
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "client/assignment.h"
#include "client/json_client.h"
#include "fleet/node_info.h"

namespace tf::client {

struct NodeAssignmentsView {
  std::string digest;  // pass back as `known` to wait for a change
  std::string state;   // ready, draining, lost
  int64_t epoch = 0;
  std::optional<int64_t> drain_deadline_ms;
  std::string drain_reason;
  std::vector<Assignment> ranks;
};

// What became of one rank, for the server.
struct RankOutcome {
  std::string state;  // running, succeeded, failed, interrupted, lost, stopped
  int exit_code = -1;
  int signal = 0;
  std::string log_tail;
  std::string message;
};

struct MetricSampleOut {
  std::string name;
  double value = 0;
  int64_t step = -1;
};

// Thread-compatible: each thread of the worker makes its own (Clone()).
class FleetClient {
 public:
  static Result<std::unique_ptr<FleetClient>> Create(const std::string& server_url,
                                                     const std::string& token,
                                                     const std::string& node_id);
  Result<std::unique_ptr<FleetClient>> Clone() const;

  // Returns the epoch of this registration.
  Result<int64_t> Register(const std::string& name, const fleet::NodeInfo& info);
  // kAborted: another registration of this node took over, or the node was declared lost.
  Status Heartbeat(int64_t epoch);
  Result<NodeAssignmentsView> Assignments(const std::string& known, int64_t wait_ms);
  // kAborted: the attempt's lease is stale; stop the rank.
  Status Report(const Assignment& a, const RankOutcome& outcome);
  Status AddSamples(const Assignment& a, const std::vector<MetricSampleOut>& samples);
  Status Drain(int64_t deadline_ms, const std::string& reason);

  // Safe from any thread: ends the call in progress (a long poll for assignments) and every
  // later one with kUnavailable.
  void Cancel() { client_->Cancel(); }

  const std::string& server_url() const { return server_url_; }
  const std::string& node_id() const { return node_id_; }

 private:
  FleetClient(std::string server_url, std::string token, std::string node_id,
              std::unique_ptr<client::JsonClient> client)
      : server_url_(std::move(server_url)),
        token_(std::move(token)),
        node_id_(std::move(node_id)),
        client_(std::move(client)) {}

  std::string server_url_;
  std::string token_;
  std::string node_id_;
  std::unique_ptr<client::JsonClient> client_;
};

}  // namespace tf::client
