#include "endpoints/shared_load.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>

#include "base/crypto.h"

namespace tf::endpoints {
namespace {

bool SameLoad(const std::vector<store::EndpointLoadRecord>& a,
              const std::vector<store::EndpointLoadRecord>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].endpoint_id != b[i].endpoint_id || a[i].arrived != b[i].arrived ||
        a[i].queued != b[i].queued || a[i].in_flight != b[i].in_flight ||
        a[i].replicas_json != b[i].replicas_json) {
      return false;
    }
  }
  return true;
}

std::map<std::string, int> ReplicasFrom(const std::string& json) {
  std::map<std::string, int> out;
  auto parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return out;
  for (const auto& [id, n] : parsed.items()) {
    if (n.is_number_integer() && n.get<int>() > 0) out[id] = n.get<int>();
  }
  return out;
}

}  // namespace

std::string NewServerId() { return "srv_" + RandomHex(8); }

Status LoadPublisher::Publish() {
  const TimeMs now = clock_.Now();
  std::vector<store::EndpointLoadRecord> rows;
  for (const std::string& id : board_.EndpointIds()) {
    // The peaks over the last kLoadRepublishMs, not only since the previous call: the leader
    // samples once per tick, and a burst between two of its reads must still count.
    std::deque<LoadSample>& window = recent_[id];
    window.push_back(board_.Sample(id, now));
    while (window.front().at <= now - kLoadRepublishMs) window.pop_front();
    int arrived = 0, queued = 0, in_flight = 0;
    for (const LoadSample& s : window) {
      arrived += s.arrived;
      queued = std::max(queued, s.queued);
      in_flight = std::max(in_flight, s.in_flight);
    }
    if (arrived == 0 && queued == 0 && in_flight == 0) {
      arrived_.erase(id);  // its row ends; a new one counts from zero
      recent_.erase(id);
      continue;
    }
    nlohmann::json replicas = nlohmann::json::object();
    for (const auto& [replica, n] : board_.InFlightByReplica(id)) replicas[replica] = n;
    rows.push_back({server_id_, id, arrived_[id] += window.back().arrived, queued, in_flight,
                    replicas.dump(), now});
  }
  const bool due = now - written_at_ >= kLoadRepublishMs;
  if (pending_.ok() && SameLoad(rows, written_) && (rows.empty() || !due)) return OkStatus();
  Status s = store_.PublishEndpointLoads(server_id_, rows, now - kLoadForgetMs);
  pending_ = s;
  if (s.ok()) {
    written_ = std::move(rows);
    written_at_ = now;
  }
  return s;
}

Status RemoteLoad::Refresh() {
  rows_.clear();
  auto listed = store_.ListEndpointLoads(clock_.Now() - kLoadFreshMs);
  if (!listed.ok()) {
    counted_.clear();
    return listed.status();
  }
  std::set<std::pair<std::string, std::string>> present;
  for (store::EndpointLoadRecord& l : *listed) {
    if (l.server_id == own_server_id_) continue;
    present.emplace(l.server_id, l.endpoint_id);
    rows_[l.endpoint_id].push_back(
        {l.server_id, l.arrived, l.queued, l.in_flight, ReplicasFrom(l.replicas_json)});
  }
  std::erase_if(counted_, [&](const auto& entry) { return !present.count(entry.first); });
  return OkStatus();
}

LoadSample RemoteLoad::Combine(const std::string& endpoint_id, LoadSample local,
                               const std::map<std::string, int>& local_in_flight) {
  auto rows = rows_.find(endpoint_id);
  if (rows == rows_.end()) return local;
  std::set<std::string> busy;
  for (const auto& [replica, n] : local_in_flight) {
    if (n > 0) busy.insert(replica);
  }
  for (const Row& row : rows->second) {
    int64_t& counted = counted_[{row.server_id, endpoint_id}];
    // A count lower than what was counted began again (its row ended meanwhile).
    int64_t fresh = row.arrived >= counted ? row.arrived - counted : row.arrived;
    counted = row.arrived;
    local.arrived += static_cast<int>(fresh);
    local.queued += static_cast<int>(row.queued);
    local.in_flight += static_cast<int>(row.in_flight);
    for (const auto& [replica, n] : row.replicas) busy.insert(replica);
  }
  local.busy_replicas = std::max(local.busy_replicas, static_cast<int>(busy.size()));
  return local;
}

int RemoteLoad::InFlightOf(const std::string& endpoint_id, const std::string& replica_id) const {
  auto rows = rows_.find(endpoint_id);
  if (rows == rows_.end()) return 0;
  int total = 0;
  for (const Row& row : rows->second) {
    auto n = row.replicas.find(replica_id);
    if (n != row.replicas.end()) total += n->second;
  }
  return total;
}

}  // namespace tf::endpoints
