#include "endpoints/routing_table.h"

#include "endpoints/endpoint_service.h"

namespace tf::endpoints {

bool RoutingTable::Fresh() const {
  MutexLock lock(mu_);
  return read_at_ >= 0 && clock_.Now() - read_at_ < max_age_ms_;
}

std::optional<Route> RoutingTable::Lookup(const std::string& project_id,
                                          const std::string& name) const {
  std::shared_ptr<const Table> table;
  {
    MutexLock lock(mu_);
    table = table_;
  }
  if (!table) return std::nullopt;
  auto it = table->find({project_id, name});
  if (it == table->end()) return std::nullopt;
  return it->second;
}

std::vector<Route> RoutingTable::All() const {
  std::shared_ptr<const Table> table;
  {
    MutexLock lock(mu_);
    table = table_;
  }
  std::vector<Route> out;
  if (table) {
    for (const auto& [key, route] : *table) out.push_back(route);
  }
  return out;
}

void RoutingTable::Invalidate() {
  MutexLock lock(mu_);
  read_at_ = -1;
}

Status RoutingTable::Refresh() {
  // One read at a time: requests that found the table stale together share the next read.
  MutexLock refreshing(refresh_mu_);
  if (Fresh()) return OkStatus();
  TimeMs now = clock_.Now();
  TF_ASSIGN_OR_RETURN(auto records, store_.endpoints().ListEndpoints(""));
  auto table = std::make_shared<Table>();
  for (const store::EndpointRecord& record : records) {
    auto view = ViewOf(record);
    if (!view.ok()) continue;  // unreadable: not routable (the controller logs it)
    const EndpointSpec& spec = view->doc.spec;
    Route route;
    route.endpoint_id = record.id;
    route.project_id = record.project_id;
    route.name = record.name;
    route.deleting = record.state == "deleting";
    route.max_queue = spec.max_queue;
    route.queue_timeout_ms = spec.queue_timeout_ms;
    route.replica_concurrency = spec.engine.kind == EngineKind::kBuiltin
                                    ? spec.engine.max_batch
                                    : kCommandReplicaConcurrency;
    for (const Replica& r : view->doc.replicas) {
      if (r.state == "ready" && !r.address.empty()) route.ready.push_back({r.id, r.address, r.key});
      ++route.replicas_by_state[r.state];
    }
    (*table)[{record.project_id, record.name}] = std::move(route);
  }
  MutexLock lock(mu_);
  table_ = std::move(table);
  read_at_ = now;
  return OkStatus();
}

}  // namespace tf::endpoints
