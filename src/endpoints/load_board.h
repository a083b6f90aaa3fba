// The load of each endpoint as this server's gateway sees it: requests waiting, in flight and
// arrived, which the gateway updates as requests come and go and the controller samples once
// per decision interval (autoscaler.h's LoadSample). Thread-safe.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/mutex.h"
#include "endpoints/autoscaler.h"

namespace tf::endpoints {

class LoadBoard {
 public:
  void Arrived(const std::string& endpoint_id);
  void Queued(const std::string& endpoint_id, int delta);  // +1 when it waits, -1 when it stops
  // A request sent to (+1) or answered by (-1) a replica.
  void InFlight(const std::string& endpoint_id, const std::string& replica_id, int delta);

  // Requests waiting for a replica.
  int QueuedOf(const std::string& endpoint_id);
  // Requests in flight at all of its replicas.
  int InFlightTotalOf(const std::string& endpoint_id);
  // Requests in flight at one replica.
  int InFlightOf(const std::string& endpoint_id, const std::string& replica_id);
  // Requests in flight at each replica that has any.
  std::map<std::string, int> InFlightByReplica(const std::string& endpoint_id);
  // The endpoints that requests have come for since this board began.
  std::vector<std::string> EndpointIds();

  // The load since the previous sample of this endpoint: the most requests waiting and in
  // flight at any moment of it (so that a burst shorter than the interval between samples
  // still counts), the replicas busy now, and the arrivals.
  LoadSample Sample(const std::string& endpoint_id, TimeMs now);

 private:
  struct Load {
    int arrived = 0;
    int queued = 0;
    int in_flight_total = 0;
    std::map<std::string, int> in_flight;  // by replica; entries at 0 are removed
    int peak_queued = 0;                   // since the last sample
    int peak_in_flight = 0;
  };
  Mutex mu_;
  std::map<std::string, Load> loads_ GUARDED_BY(mu_);
};

}  // namespace tf::endpoints
