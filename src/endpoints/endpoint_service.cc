#include "endpoints/endpoint_service.h"

#include "base/crypto.h"
#include "endpoints/spec_rules.h"

namespace tf::endpoints {
namespace {

constexpr int kMaxWriteAttempts = 8;  // versioned writes retried after a concurrent change

std::string DocText(const EndpointDoc& doc) { return EndpointDocToJson(doc).dump(); }

}  // namespace

bool NeedsNewReplicas(const EndpointSpec& before, const EndpointSpec& after) {
  return before.model != after.model || before.engine != after.engine || before.env != after.env ||
         before.resources != after.resources || before.gpu_memory_bytes != after.gpu_memory_bytes ||
         before.spot != after.spot || before.node_selector != after.node_selector;
}

Result<EndpointView> ViewOf(const store::EndpointRecord& record) {
  auto json = nlohmann::json::parse(record.doc_json, nullptr, /*allow_exceptions=*/false);
  auto doc = EndpointDocFromJson(json);
  if (!doc.ok()) {
    return Internal("endpoint '" + record.name + "' has a stored document this server cannot " +
                    "read: " + doc.status().message());
  }
  return EndpointView{record, std::move(doc).value()};
}

Result<EndpointView> EndpointService::Apply(const std::string& project_id, const EndpointSpec& spec,
                                            ApplyOutcome* outcome) {
  TF_RETURN_IF_ERROR(ValidateEndpointSpec(spec));
  if (placeable_) TF_RETURN_IF_ERROR(placeable_(spec));
  for (int attempt = 0; attempt < kMaxWriteAttempts; ++attempt) {
    auto existing = store_.endpoints().GetEndpoint(project_id, spec.name);
    if (!existing.ok() && existing.status().code() != StatusCode::kNotFound) {
      return existing.status();
    }
    const TimeMs now = clock_.Now();
    if (!existing.ok()) {
      EndpointView view;
      store::EndpointRecord& r = view.record;
      r.id = "ep_" + RandomHex(8);
      r.project_id = project_id;
      r.name = spec.name;
      r.state = "active";
      r.version = 1;
      r.created_at = r.updated_at = now;
      view.doc.spec = spec;
      r.doc_json = DocText(view.doc);
      Status created = store_.endpoints().CreateEndpoint(r);
      if (created.code() == StatusCode::kAlreadyExists) continue;  // made meanwhile: update it
      TF_RETURN_IF_ERROR(created);
      if (outcome != nullptr) *outcome = ApplyOutcome::kCreated;
      return view;
    }
    TF_ASSIGN_OR_RETURN(EndpointView view, ViewOf(*existing));
    if (view.record.state == "deleting") {
      return FailedPrecondition("endpoint '" + spec.name +
                                "' is being deleted; create it again once it is gone");
    }
    ApplyOutcome how = ApplyOutcome::kUnchanged;
    if (NeedsNewReplicas(view.doc.spec, spec)) {
      how = ApplyOutcome::kUpdated;
      ++view.doc.generation;
    } else if (view.doc.spec != spec) {
      how = ApplyOutcome::kRescaled;
    }
    if (outcome != nullptr) *outcome = how;
    if (how == ApplyOutcome::kUnchanged) return view;
    view.doc.spec = spec;
    int64_t read_version = view.record.version;
    view.record.version = read_version + 1;
    view.record.updated_at = now;
    view.record.doc_json = DocText(view.doc);
    Status written = store_.endpoints().UpdateEndpoint(view.record, read_version);
    if (written.code() == StatusCode::kAborted) continue;
    TF_RETURN_IF_ERROR(written);
    return view;
  }
  return Aborted("endpoint '" + spec.name + "' kept changing while it was being updated; retry");
}

Result<EndpointView> EndpointService::Get(const std::string& project_id, const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::EndpointRecord record,
                      store_.endpoints().GetEndpoint(project_id, name));
  return ViewOf(record);
}

Result<std::vector<EndpointView>> EndpointService::List(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(auto records, store_.endpoints().ListEndpoints(project_id));
  std::vector<EndpointView> out;
  for (const auto& record : records) {
    TF_ASSIGN_OR_RETURN(EndpointView view, ViewOf(record));
    out.push_back(std::move(view));
  }
  return out;
}

Result<EndpointView> EndpointService::Modify(const std::string& project_id, const std::string& name,
                                             const std::function<Status(EndpointView&)>& change) {
  for (int attempt = 0; attempt < kMaxWriteAttempts; ++attempt) {
    TF_ASSIGN_OR_RETURN(EndpointView view, Get(project_id, name));
    int64_t read_version = view.record.version;
    TF_RETURN_IF_ERROR(change(view));
    view.record.version = read_version + 1;
    view.record.updated_at = clock_.Now();
    view.record.doc_json = DocText(view.doc);
    Status written = store_.endpoints().UpdateEndpoint(view.record, read_version);
    if (written.code() == StatusCode::kAborted) continue;
    TF_RETURN_IF_ERROR(written);
    return view;
  }
  return Aborted("endpoint '" + name + "' kept changing while it was being updated; retry");
}

Result<EndpointView> EndpointService::Scale(const std::string& project_id, const std::string& name,
                                            std::optional<int> min, std::optional<int> max) {
  if (!min && !max) return InvalidArgument("give --min, --max or both");
  return Modify(project_id, name, [&](EndpointView& view) -> Status {
    if (view.record.state == "deleting") {
      return FailedPrecondition("endpoint '" + name + "' is being deleted");
    }
    EndpointSpec& spec = view.doc.spec;
    if (min) spec.min_replicas = *min;
    if (max) spec.max_replicas = *max;
    if (min && max && *max < *min) {
      return InvalidArgument("--max: must be at least --min (" + std::to_string(*min) + "), got " +
                             std::to_string(*max));
    }
    if (min && !max && *min > spec.max_replicas && *min <= kReplicasRange.max) {
      return InvalidArgument("--min: must be at most replicas.max (" +
                             std::to_string(spec.max_replicas) + "), got " + std::to_string(*min));
    }
    if (auto problem = FindEndpointProblem(spec)) {
      std::string flag = problem->path == "replicas.min"   ? "--min"
                         : problem->path == "replicas.max" ? "--max"
                                                           : problem->path;
      return InvalidArgument(flag + ": " + problem->message);
    }
    return OkStatus();
  });
}

Result<EndpointView> EndpointService::Delete(const std::string& project_id, const std::string& name,
                                             bool* removed) {
  TF_ASSIGN_OR_RETURN(EndpointView view, Modify(project_id, name, [](EndpointView& v) -> Status {
                        v.record.state = "deleting";
                        return OkStatus();
                      }));
  bool gone = false;
  if (view.doc.replicas.empty()) {
    Status deleted = store_.endpoints().DeleteEndpoint(view.record.id, view.record.version);
    // A replica recorded meanwhile (kAborted) leaves the removal to the controller.
    if (!deleted.ok() && deleted.code() != StatusCode::kAborted &&
        deleted.code() != StatusCode::kNotFound) {
      return deleted;
    }
    gone = deleted.ok() || deleted.code() == StatusCode::kNotFound;
  }
  if (removed != nullptr) *removed = gone;
  return view;
}

}  // namespace tf::endpoints
