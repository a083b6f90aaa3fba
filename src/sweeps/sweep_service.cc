#include "sweeps/sweep_service.h"

#include "base/crypto.h"

namespace tf::sweeps {
namespace {

Result<SweepView> ViewOf(const store::DocumentRecord& record) {
  TF_ASSIGN_OR_RETURN(SweepDoc doc, SweepDocFromJson(record.doc_json));
  return SweepView{record, std::move(doc)};
}

}  // namespace

Result<SweepView> SweepService::Start(const std::string& project_id, const std::string& spec_yaml,
                                      const std::string& source, const nlohmann::json& files,
                                      const std::string& code_key) {
  SweepDoc doc;
  doc.spec_yaml = spec_yaml;
  doc.source = source;
  doc.files = files.is_object() ? files : nlohmann::json::object();
  doc.code_key = code_key;
  TF_ASSIGN_OR_RETURN(SweepSpec spec, SpecOf(doc));
  if (check_template_) {
    TF_RETURN_IF_ERROR(check_template_(spec.job, source + ": job: a trial cannot be placed"));
  }
  const TimeMs now = clock_.Now();
  doc.reason = "started";
  doc.events.push_back(SweepEvent{now, spec.name + " started: " + spec.strategy + ", " +
                                           std::to_string(spec.max_trials) + " trials, " +
                                           std::to_string(spec.max_parallel) + " at a time"});
  store::DocumentRecord record;
  record.kind = kSweepKind;
  record.id = "sw_" + RandomHex(8);
  record.project_id = project_id;
  record.name = spec.name;
  record.state = kSweepRunning;
  record.version = 1;
  record.created_at = record.updated_at = now;
  record.doc_json = SweepDocToJson(doc).dump();
  Status created = documents_.CreateDocument(record);
  if (created.code() == StatusCode::kAlreadyExists) {
    auto existing = documents_.GetDocument(kSweepKind, project_id, spec.name);
    std::string state = existing.ok() ? existing->state : "?";
    return AlreadyExists("sweep '" + spec.name + "' exists (" + state +
                         "): give this one another name");
  }
  TF_RETURN_IF_ERROR(created);
  return SweepView{std::move(record), std::move(doc)};
}

Result<std::vector<SweepView>> SweepService::List(const std::string& project_id) {
  TF_ASSIGN_OR_RETURN(auto records, documents_.ListDocuments(kSweepKind, project_id));
  std::vector<SweepView> out;
  for (const store::DocumentRecord& r : records) {
    TF_ASSIGN_OR_RETURN(SweepView v, ViewOf(r));
    out.push_back(std::move(v));
  }
  return out;
}

Result<SweepView> SweepService::Get(const std::string& project_id, const std::string& name) {
  TF_ASSIGN_OR_RETURN(store::DocumentRecord r,
                      documents_.GetDocument(kSweepKind, project_id, name));
  return ViewOf(r);
}

Result<SweepView> SweepService::Stop(const std::string& project_id, const std::string& name) {
  for (;;) {
    TF_ASSIGN_OR_RETURN(SweepView v, Get(project_id, name));
    if (v.record.state == kSweepStopping) return v;
    if (v.record.state != kSweepRunning) {
      return FailedPrecondition("sweep '" + name + "' already " + v.record.state);
    }
    const TimeMs now = clock_.Now();
    v.doc.reason = "stopped by request";
    v.doc.events.push_back(SweepEvent{now, name + " asked to stop"});
    store::DocumentRecord record = v.record;
    record.state = kSweepStopping;
    record.updated_at = now;
    record.doc_json = SweepDocToJson(v.doc).dump();
    Status s = documents_.UpdateDocument(record, v.record.version);
    if (s.code() == StatusCode::kAborted) continue;  // the controller wrote meanwhile
    TF_RETURN_IF_ERROR(s);
    ++record.version;
    return SweepView{std::move(record), std::move(v.doc)};
  }
}

}  // namespace tf::sweeps
