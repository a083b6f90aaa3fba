#include "pools/pool_service.h"

#include <algorithm>

#include "base/log.h"
#include "base/time_format.h"
#include "jobs/spec_rules.h"
#include "pools/capacity_plan.h"

namespace tf::pools {
namespace {

Result<PoolView> ToView(store::PoolRecord record) {
  PoolView view;
  TF_ASSIGN_OR_RETURN(view.spec,
                      PoolSpecFromJson(nlohmann::json::parse(record.spec_json, nullptr, false)));
  view.status = nlohmann::json::parse(record.status_json, nullptr, false);
  if (!view.status.is_object()) view.status = nlohmann::json::object();
  view.record = std::move(record);
  return view;
}

}  // namespace

Result<PoolView> PoolService::Create(const std::string& spec_yaml, const std::string& source) {
  TF_ASSIGN_OR_RETURN(PoolSpec spec, ParsePoolSpec(spec_yaml, source));
  TimeMs now = clock_.Now();
  store::PoolRecord record{spec.name, PoolSpecToJson(spec).dump(), "{}", 1, now, now};
  TF_RETURN_IF_ERROR(store_.pools().CreatePool(record));
  return ToView(std::move(record));
}

Result<std::string> PoolService::Declare(const std::string& spec_yaml, const std::string& source) {
  TF_ASSIGN_OR_RETURN(PoolSpec spec, ParsePoolSpec(spec_yaml, source));
  std::string wanted = PoolSpecToJson(spec).dump();
  for (int attempt = 0; attempt < 5; ++attempt) {
    auto stored = store_.pools().GetPool(spec.name);
    if (!stored.ok() && stored.status().code() == StatusCode::kNotFound) {
      TimeMs now = clock_.Now();
      Status created = store_.pools().CreatePool({spec.name, wanted, "{}", 1, now, now});
      if (created.code() == StatusCode::kAlreadyExists) continue;  // another server's, just now
      TF_RETURN_IF_ERROR(created);
      return std::string("created");
    }
    TF_RETURN_IF_ERROR(stored.status());
    if (stored->spec_json == wanted) return std::string("unchanged");
    Status updated =
        store_.pools().UpdatePoolSpec(spec.name, wanted, clock_.Now(), stored->version);
    if (updated.code() == StatusCode::kAborted || updated.code() == StatusCode::kNotFound) {
      continue;  // changed meanwhile: look again
    }
    TF_RETURN_IF_ERROR(updated);
    return std::string("updated");
  }
  return Aborted("pool " + spec.name + " kept changing while it was declared; try again");
}

Result<PoolView> PoolService::Get(const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::PoolRecord record, store_.pools().GetPool(name));
  return ToView(std::move(record));
}

Result<std::vector<PoolView>> PoolService::List() {
  TF_ASSIGN_OR_RETURN(std::vector<store::PoolRecord> records, store_.pools().ListPools());
  std::vector<PoolView> out;
  for (store::PoolRecord& r : records) {
    TF_ASSIGN_OR_RETURN(PoolView view, ToView(std::move(r)));
    out.push_back(std::move(view));
  }
  return out;
}

Result<PoolView> PoolService::Scale(const std::string& name, std::optional<int> min,
                                    std::optional<int> max) {
  for (int attempt = 0; attempt < 5; ++attempt) {
    TF_ASSIGN_OR_RETURN(PoolView view, Get(name));
    PoolSpec spec = view.spec;
    if (min) spec.min = *min;
    if (max) spec.max = *max;
    for (auto [field, value] : {std::pair{"min", spec.min}, std::pair{"max", spec.max}}) {
      if (value < 0 || value > kMaxPoolNodes) {
        return InvalidArgument(std::string("'") + field + "': must be from 0 to " +
                               std::to_string(kMaxPoolNodes) + ", got " + std::to_string(value));
      }
    }
    if (spec.max < spec.min) {
      return InvalidArgument("'max': must be at least min (" + std::to_string(spec.min) +
                             "), got " + std::to_string(spec.max));
    }
    Status s = store_.pools().UpdatePoolSpec(name, PoolSpecToJson(spec).dump(), clock_.Now(),
                                             view.record.version);
    if (s.code() == StatusCode::kAborted) continue;
    TF_RETURN_IF_ERROR(s);
    return Get(name);
  }
  return Aborted("pool " + name + " is changing too often to scale; try again");
}

Status PoolService::Delete(const std::string& name) { return store_.pools().DeletePool(name); }

std::vector<fleet::NodeState> PoolService::PotentialNodes() {
  std::vector<fleet::NodeState> out;
  auto pools = List();
  if (!pools.ok()) {
    spdlog::warn("pools: reading them for a submission: {}", pools.status().ToString());
    return out;
  }
  for (const PoolView& p : *pools) {
    int count = std::min<int>(p.spec.max, static_cast<int>(jobs::kNodesRange.max));
    for (int i = 0; i < count; ++i) {
      out.push_back(ShapeNode(p.spec, p.spec.name + "/potential-" + std::to_string(i)));
    }
  }
  return out;
}

nlohmann::json PoolViewToJson(const PoolView& view) {
  nlohmann::json out = PoolSpecToJson(view.spec);
  // A command pool's env may hold a cloud's credentials: shown by name only.
  if (out.contains("provider") && out["provider"].contains("env")) {
    for (auto& [name, value] : out["provider"]["env"].items()) value = "(hidden)";
  }
  out["version"] = view.record.version;
  out["created_at"] = FormatTime(view.record.created_at);
  out["updated_at"] = FormatTime(view.record.updated_at);
  nlohmann::json machines = view.status.value("machines", nlohmann::json::array());
  for (nlohmann::json& m : machines) {
    if (m.contains("since") && m["since"].is_number()) {
      m["since"] = FormatTime(m["since"].get<TimeMs>());
    }
  }
  nlohmann::json decisions = view.status.value("decisions", nlohmann::json::array());
  for (nlohmann::json& d : decisions) {
    if (d.contains("at") && d["at"].is_number()) d["at"] = FormatTime(d["at"].get<TimeMs>());
  }
  out["machines"] = std::move(machines);
  out["decisions"] = std::move(decisions);
  return out;
}

}  // namespace tf::pools
