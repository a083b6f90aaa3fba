#include "endpoints/load_board.h"

#include <algorithm>

namespace tf::endpoints {

void LoadBoard::Arrived(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  ++loads_[endpoint_id].arrived;
}

void LoadBoard::Queued(const std::string& endpoint_id, int delta) {
  MutexLock lock(mu_);
  Load& load = loads_[endpoint_id];
  load.queued += delta;
  load.peak_queued = std::max(load.peak_queued, load.queued);
}

void LoadBoard::InFlight(const std::string& endpoint_id, const std::string& replica_id, int delta) {
  MutexLock lock(mu_);
  Load& load = loads_[endpoint_id];
  if ((load.in_flight[replica_id] += delta) <= 0) load.in_flight.erase(replica_id);
  load.in_flight_total += delta;
  load.peak_in_flight = std::max(load.peak_in_flight, load.in_flight_total);
}

int LoadBoard::QueuedOf(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  return load == loads_.end() ? 0 : load->second.queued;
}

int LoadBoard::InFlightTotalOf(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  return load == loads_.end() ? 0 : load->second.in_flight_total;
}

int LoadBoard::InFlightOf(const std::string& endpoint_id, const std::string& replica_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  if (load == loads_.end()) return 0;
  auto n = load->second.in_flight.find(replica_id);
  return n == load->second.in_flight.end() ? 0 : n->second;
}

std::map<std::string, int> LoadBoard::InFlightByReplica(const std::string& endpoint_id) {
  MutexLock lock(mu_);
  auto load = loads_.find(endpoint_id);
  return load == loads_.end() ? std::map<std::string, int>{} : load->second.in_flight;
}

std::vector<std::string> LoadBoard::EndpointIds() {
  MutexLock lock(mu_);
  std::vector<std::string> out;
  out.reserve(loads_.size());
  for (const auto& [id, load] : loads_) out.push_back(id);
  return out;
}

LoadSample LoadBoard::Sample(const std::string& endpoint_id, TimeMs now) {
  MutexLock lock(mu_);
  Load& load = loads_[endpoint_id];
  LoadSample s;
  s.at = now;
  s.arrived = load.arrived;
  s.queued = std::max(load.queued, load.peak_queued);
  s.in_flight = std::max(load.in_flight_total, load.peak_in_flight);
  s.busy_replicas = static_cast<int>(load.in_flight.size());
  load.arrived = 0;
  load.peak_queued = load.queued;
  load.peak_in_flight = load.in_flight_total;
  return s;
}

}  // namespace tf::endpoints
