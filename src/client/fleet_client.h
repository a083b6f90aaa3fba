// What a worker says to the server, and hears back: registration, heartbeats, assignments by
// long poll, rank reports and metric samples (the routes in src/api/node_routes.cc), with the
// node's own credential once registered.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/mutex.h"
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

// What a worker's calls carry, shared by a FleetClient and its clones: the node's credential
// once the server has issued one, and the token it registers with (a join token or an admin
// token) before that, or after the node's credential stopped being valid. Thread-safe.
class WorkerSecret {
 public:
  WorkerSecret(std::string registration_token, std::string credential)
      : registration_token_(std::move(registration_token)), credential_(std::move(credential)) {}

  const std::string& registration_token() const { return registration_token_; }
  std::string credential() const;
  void set_credential(std::string credential);
  // The credential, or the registration token while there is none.
  std::string Current() const;

 private:
  const std::string registration_token_;
  mutable Mutex mu_;
  std::string credential_ GUARDED_BY(mu_);
};

// Thread-compatible: each thread of the worker makes its own (Clone()).
class FleetClient {
 public:
  // `credential`: the node's, kept from an earlier registration ("" for none yet).
  static Result<std::unique_ptr<FleetClient>> Create(const std::string& server_url,
                                                     const std::string& registration_token,
                                                     const std::string& node_id,
                                                     const std::string& credential = "");
  Result<std::unique_ptr<FleetClient>> Clone() const;

  // Registers the node with its credential, or with the registration token where it has none or
  // the server no longer knows it (the node was forgotten); a credential the server issues is
  // kept for every clone (credential()). Returns the epoch of this registration.
  Result<int64_t> Register(const std::string& name, const fleet::NodeInfo& info);
  // The node's credential ("" before the first registration).
  std::string credential() const { return secret_->credential(); }
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
  FleetClient(std::string server_url, std::shared_ptr<WorkerSecret> secret, std::string node_id,
              std::unique_ptr<client::JsonClient> client)
      : server_url_(std::move(server_url)),
        secret_(std::move(secret)),
        node_id_(std::move(node_id)),
        client_(std::move(client)) {}
  static Result<std::unique_ptr<FleetClient>> WithSecret(const std::string& server_url,
                                                         std::shared_ptr<WorkerSecret> secret,
                                                         const std::string& node_id);
  // The client, carrying the secret as it is now (another clone may have registered again).
  JsonClient& Calls();

  std::string server_url_;
  std::shared_ptr<WorkerSecret> secret_;
  std::string node_id_;
  std::unique_ptr<client::JsonClient> client_;
};

}  // namespace tf::client
