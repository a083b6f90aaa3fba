#include "endpoints/load_board.h"

namespace tf::endpoints {

void LoadBoard::Arrived(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  ++loads_[endpoint_id].arrived;
}

void LoadBoard::Queued(const std::string& endpoint_id, int delta) {
  MutexLock lock(mu_);
  loads_[endpoint_id].queued += delta;
}

void LoadBoard::InFlight(const std::string& endpoint_id, const std::string& replica_id, int delta) {
  MutexLock lock(mu_);
  auto& counts = loads_[endpoint_id].in_flight;
  if ((counts[replica_id] += delta) <= 0) counts.erase(replica_id);
}

int LoadBoard::QueuedOf(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  return load == loads_.end() ? 0 : load->second.queued;
}

int LoadBoard::InFlightOf(const std::string& endpoint_id, const std::string& replica_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  if (load == loads_.end()) return 0;
  auto n = load->second.in_flight.find(replica_id);
  return n == load->second.in_flight.end() ? 0 : n->second;
}

LoadSample LoadBoard::Sample(const std::string& endpoint_id, TimeMs now) {
  MutexLock lock(mu_);
  Load& load = loads_[endpoint_id];
  LoadSample s;
  s.at = now;
  s.arrived = load.arrived;
  s.queued = load.queued;
  for (const auto& [replica, n] : load.in_flight) {
    s.in_flight += n;
    ++s.busy_replicas;
  }
  load.arrived = 0;
  return s;
}

}  // namespace tf::endpoints
