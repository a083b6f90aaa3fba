#include "api/job_json.h"

#include "base/time_format.h"

namespace tf::api {

using nlohmann::json;

json TimeOrNull(TimeMs t) { return t > 0 ? json(FormatTime(t)) : json(nullptr); }

namespace {

json RankToJson(const jobs::RankState& r, size_t rank) {
  json out = {{"node_rank", rank},
              {"node", r.node_id},
              {"address", r.address},
              {"gpus", r.gpus},
              {"state", r.state},
              {"started_at", TimeOrNull(r.started_at)},
              {"ended_at", TimeOrNull(r.ended_at)}};
  if (r.exit_code >= 0) out["exit_code"] = r.exit_code;
  if (r.signal != 0) out["signal"] = r.signal;
  if (!r.log_tail.empty()) out["log_tail"] = r.log_tail;
  return out;
}

json AttemptToJson(const jobs::Attempt& a) {
  json ranks = json::array();
  for (size_t i = 0; i < a.ranks.size(); ++i) ranks.push_back(RankToJson(a.ranks[i], i));
  json out = {{"attempt", a.number},
              {"state", a.state},
              {"reason", a.reason},
              {"created_at", TimeOrNull(a.created_at)},
              {"started_at", TimeOrNull(a.started_at)},
              {"ended_at", TimeOrNull(a.ended_at)},
              {"master_port", a.master_port},
              {"ranks", std::move(ranks)}};
  if (a.exit_code >= 0) out["exit_code"] = a.exit_code;
  return out;
}

}  // namespace

json JobToJson(const jobs::Job& job) {
  json attempts = json::array();
  for (const jobs::Attempt& a : job.doc.attempts) attempts.push_back(AttemptToJson(a));
  json out = {
      {"id", job.id()},
      {"name", job.record.name},
      {"state", job.state()},
      {"reason", job.doc.reason},
      {"priority", job.record.priority},
      {"created_at", FormatTime(job.record.created_at)},
      {"updated_at", FormatTime(job.record.updated_at)},
      {"attempts", std::move(attempts)},
      {"recoveries", job.doc.recoveries},
      {"spec", job.doc.spec},
      {"source", job.doc.source},
      {"code", job.doc.code_key.empty()
                   ? json(nullptr)
                   : json{{"bucket", jobs::kJobsBucket}, {"key", job.doc.code_key}}},
      {"checkpoints",
       {{"bucket", jobs::kJobsBucket}, {"prefix", jobs::CheckpointPrefixOf(job.id(), job.doc)}}},
      {"output", {{"bucket", jobs::kJobsBucket}, {"prefix", jobs::OutputPrefix(job.id())}}}};
  if (job.doc.exit_code >= 0) out["exit_code"] = job.doc.exit_code;
  // Why the scheduler has not placed it, while it waits to be placed.
  bool waits = job.state() == jobs::kQueued || job.state() == jobs::kRetrying;
  if (waits && !job.doc.waiting_reason.empty()) {
    out["waiting_reason"] = job.doc.waiting_reason;
    out["waiting_since"] = TimeOrNull(job.doc.waiting_since);
  }
  if (job.doc.not_before > 0 && job.state() == jobs::kRetrying) {
    out["next_attempt_after"] = FormatTime(job.doc.not_before);
  }
  return out;
}

json JobEventToJson(const store::JobEvent& e) {
  return {{"seq", e.seq}, {"at", FormatTime(e.at)}, {"kind", e.kind}, {"message", e.message}};
}

json MetricPointToJson(const store::MetricPoint& p) {
  json out = {
      {"name", p.name}, {"value", p.value}, {"attempt", p.attempt}, {"at", FormatTime(p.at)}};
  if (p.step >= 0) out["step"] = p.step;
  return out;
}

json NodeViewToJson(const jobs::NodeView& n, const std::string& project_id) {
  json out = fleet::NodeInfoToJson(n.info);
  out["id"] = n.record.id;
  out["name"] = n.record.name;
  out["state"] = n.record.state;
  out["epoch"] = n.record.epoch;
  out["registered_at"] = FormatTime(n.record.registered_at);
  out["heartbeat_at"] = FormatTime(n.record.heartbeat_at);
  json running = json::array();
  for (const jobs::NodeView::Rank& rank : n.running) {
    if (project_id.empty() || rank.project_id == project_id) running.push_back(rank.name);
  }
  out["running"] = std::move(running);
  out["gpus_in_use"] = n.gpus_in_use;
  if (!n.record.drain_json.empty()) out["drain"] = json::parse(n.record.drain_json, nullptr, false);
  return out;
}

json AssignmentsToJson(const jobs::NodeAssignments& a) {
  json ranks = json::array();
  for (const jobs::RankAssignment& r : a.ranks) {
    ranks.push_back({{"job_id", r.job_id},
                     {"job_name", r.job_name},
                     {"project_id", r.project_id},
                     {"attempt", r.attempt},
                     {"token", std::to_string(r.token)},
                     {"node_rank", r.node_rank},
                     {"gpus", r.gpus},
                     {"addresses", r.addresses},
                     {"master_port", r.master_port},
                     {"spec", r.spec},
                     {"bucket", jobs::kJobsBucket},
                     {"code_key", r.code_key},
                     {"checkpoint_prefix", r.checkpoint_prefix},
                     {"output_prefix", jobs::OutputPrefix(r.job_id)},
                     {"job_token", r.job_token}});
  }
  json out = {{"state", a.node_state}, {"epoch", a.epoch}, {"ranks", std::move(ranks)}};
  out["drain"] = a.drain ? *a.drain : json(nullptr);
  return out;
}

}  // namespace tf::api
