// What the gateway needs to route a request, read from the store and kept for a moment: each
// endpoint by project and name, with its replicas in rotation. Refreshed at most every
// `max_age` (a request finds a fresh table without touching the store), and at once on
// demand, so that a replica the controller (on this server or another) has made ready is
// routed to within that moment. Thread-safe.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/clock.h"
#include "base/mutex.h"
#include "base/status.h"
#include "store/store.h"

namespace tf::endpoints {

// Requests a command engine's replica takes at once before more wait in the gateway's queue
// (a built-in engine's replica takes its max_batch).
inline constexpr int kCommandReplicaConcurrency = 64;

struct RouteReplica {
  std::string id;
  std::string address;  // host:port
  std::string key;      // its server's API key ("" for none)
};

struct Route {
  std::string endpoint_id;
  std::string project_id;
  std::string name;
  bool deleting = false;
  int max_queue = 0;
  TimeMs queue_timeout_ms = 0;
  int replica_concurrency = 1;      // requests one replica takes at once
  std::vector<RouteReplica> ready;  // in rotation
  std::map<std::string, int> replicas_by_state;
};

class RoutingTable {
 public:
  RoutingTable(store::Store& store, const Clock& clock, TimeMs max_age_ms = 200)
      : store_(store), clock_(clock), max_age_ms_(max_age_ms) {}

  // Whether the table was read from the store less than max_age ago.
  bool Fresh() const;
  // The endpoint `name` of the project, as last read.
  std::optional<Route> Lookup(const std::string& project_id, const std::string& name) const;
  // Every endpoint, as last read.
  std::vector<Route> All() const;
  // The next request reads the store again (after a change made through this server).
  void Invalidate();
  // Reads every endpoint from the store (blocking: call it on the pool).
  Status Refresh();

 private:
  using Table = std::map<std::pair<std::string, std::string>, Route>;  // (project, name)
  store::Store& store_;
  const Clock& clock_;
  const TimeMs max_age_ms_;
  Mutex refresh_mu_;
  mutable Mutex mu_;
  std::shared_ptr<const Table> table_ GUARDED_BY(mu_);
  TimeMs read_at_ GUARDED_BY(mu_) = -1;
};

}  // namespace tf::endpoints
