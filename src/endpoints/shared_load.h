// Endpoints' load across the servers that share a store (docs/endpoints.md, "Several servers").
// Each server's gateway counts its own requests on its LoadBoard; the leader's controller scales
// on all of them:
//   - a server that does not lead publishes what its board saw (LoadPublisher), each time its
//     endpoint loop turns while it has load (every 100 ms, and at once when a request queues),
//     writing only what changed or has not been written for kLoadRepublishMs;
//   - the leader reads what the others published within kLoadFreshMs (RemoteLoad::Refresh) and
//     adds it to its own board's sample of each endpoint (RemoteLoad::Combine).
// A server that stops publishing (stopped, crashed, cut off from the store) stops counting after
// kLoadFreshMs; its rows are deleted after kLoadForgetMs.
#pragma once

#include <deque>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "endpoints/autoscaler.h"
#include "endpoints/load_board.h"
#include "store/store.h"

namespace tf::endpoints {

inline constexpr TimeMs kLoadRepublishMs = 1'000;   // a row with load is rewritten this often
inline constexpr TimeMs kLoadFreshMs = 3'000;       // older rows are not counted
inline constexpr TimeMs kLoadForgetMs = 3'600'000;  // older rows are deleted

// A new server id: "srv_<hex>".
std::string NewServerId();

// Publishes one server's board for the leader. Not thread-safe: one caller (the endpoint loop).
class LoadPublisher {
 public:
  LoadPublisher(store::EndpointStore& store, LoadBoard& board, const Clock& clock,
                std::string server_id)
      : store_(store), board_(board), clock_(clock), server_id_(std::move(server_id)) {}

  // Samples the board (which resets its peaks: only one of this and the controller may sample
  // it, so call this only while the server does not lead) and writes the load of each endpoint
  // that had any within kLoadRepublishMs (the peaks over that window, so that the leader, which
  // reads once per tick, misses no burst), replacing this server's previous rows. Writes nothing
  // when no endpoint has load and none had at the previous write, or when nothing changed within
  // kLoadRepublishMs.
  Status Publish();
  // Whether an endpoint had load within kLoadRepublishMs: then call Publish again soon.
  bool active() const { return !recent_.empty(); }

 private:
  store::EndpointStore& store_;
  LoadBoard& board_;
  const Clock& clock_;
  const std::string server_id_;
  std::map<std::string, int64_t> arrived_;  // by endpoint: arrivals since its row began
  std::map<std::string, std::deque<LoadSample>> recent_;  // by endpoint: the last samples
  std::vector<store::EndpointLoadRecord> written_;        // the last write's rows
  TimeMs written_at_ = 0;
  Status pending_;  // a failed write's status, until one succeeds
};

// The other servers' load, as the leader sees it. Not thread-safe: the controller's thread.
class RemoteLoad {
 public:
  RemoteLoad(store::EndpointStore& store, const Clock& clock, std::string own_server_id)
      : store_(store), clock_(clock), own_server_id_(std::move(own_server_id)) {}

  // Reads the rows other servers published within kLoadFreshMs. On failure the previous rows
  // are dropped (the load is then this server's alone) and the error returned.
  Status Refresh();

  // `local` (this server's sample of the endpoint) with the other servers' load added: their
  // arrivals since the previous call for this endpoint, the most waiting and in flight that
  // each saw since its previous publication, and the replicas busy through any server.
  // `local_in_flight`: this server's requests in flight by replica.
  LoadSample Combine(const std::string& endpoint_id, LoadSample local,
                     const std::map<std::string, int>& local_in_flight);

  // Requests in flight at a replica through the other servers.
  int InFlightOf(const std::string& endpoint_id, const std::string& replica_id) const;

 private:
  struct Row {
    std::string server_id;
    int64_t arrived = 0, queued = 0, in_flight = 0;
    std::map<std::string, int> replicas;  // in flight by replica
  };
  store::EndpointStore& store_;
  const Clock& clock_;
  const std::string own_server_id_;
  std::map<std::string, std::vector<Row>> rows_;  // by endpoint id, from the last Refresh
  // Arrivals counted already, by (server, endpoint): a row's count runs on while it lasts.
  std::map<std::pair<std::string, std::string>, int64_t> counted_;
};

}  // namespace tf::endpoints
