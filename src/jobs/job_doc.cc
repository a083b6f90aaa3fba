#include "jobs/job_doc.h"

#include <algorithm>

namespace tf::jobs {
namespace {

using nlohmann::json;

bool IsLiveRankState(std::string_view s) {
  return s == "assigned" || s == "running" || s == "stopping";
}

json RankToJson(const RankState& r) {
  return json{{"node_id", r.node_id},     {"address", r.address},
              {"gpus", r.gpus},           {"state", r.state},
              {"exit_code", r.exit_code}, {"signal", r.signal},
              {"log_tail", r.log_tail},   {"started_at", r.started_at},
              {"ended_at", r.ended_at},   {"price_per_hour", r.price_per_hour},
              {"share", r.share},         {"spot", r.spot}};
}

RankState RankFromJson(const json& j) {
  RankState r;
  r.node_id = j.value("node_id", "");
  r.address = j.value("address", "");
  r.gpus = j.value("gpus", std::vector<int>{});
  r.state = j.value("state", "assigned");
  r.exit_code = j.value("exit_code", -1);
  r.signal = j.value("signal", 0);
  r.log_tail = j.value("log_tail", "");
  r.started_at = j.value("started_at", TimeMs{0});
  r.ended_at = j.value("ended_at", TimeMs{0});
  r.price_per_hour = j.value("price_per_hour", 0.0);
  r.share = j.value("share", 0.0);
  r.spot = j.value("spot", false);
  return r;
}

json AttemptToJson(const Attempt& a) {
  json ranks = json::array();
  for (const RankState& r : a.ranks) ranks.push_back(RankToJson(r));
  // The token is written as a string: JSON readers elsewhere may hold numbers as doubles.
  return json{{"number", a.number},
              {"token", std::to_string(a.token)},
              {"api_token_id", a.api_token_id},
              {"api_token", a.api_token},
              {"state", a.state},
              {"reason", a.reason},
              {"master_port", a.master_port},
              {"ranks", std::move(ranks)},
              {"created_at", a.created_at},
              {"started_at", a.started_at},
              {"ended_at", a.ended_at},
              {"exit_code", a.exit_code},
              {"failure_seen_at", a.failure_seen_at},
              {"failure_reason", a.failure_reason},
              {"failure_exit_code", a.failure_exit_code}};
}

Attempt AttemptFromJson(const json& j) {
  Attempt a;
  a.number = j.value("number", 0);
  a.token = std::stoull(j.value("token", "0"));
  a.api_token_id = j.value("api_token_id", "");
  a.api_token = j.value("api_token", "");
  a.state = j.value("state", kStarting);
  a.reason = j.value("reason", "");
  a.master_port = j.value("master_port", 0);
  for (const json& r : j.value("ranks", json::array())) a.ranks.push_back(RankFromJson(r));
  a.created_at = j.value("created_at", TimeMs{0});
  a.started_at = j.value("started_at", TimeMs{0});
  a.ended_at = j.value("ended_at", TimeMs{0});
  a.exit_code = j.value("exit_code", -1);
  a.failure_seen_at = j.value("failure_seen_at", TimeMs{0});
  a.failure_reason = j.value("failure_reason", "");
  a.failure_exit_code = j.value("failure_exit_code", -1);
  return a;
}

}  // namespace

bool IsTerminalJobState(std::string_view s) {
  return s == kSucceeded || s == kFailed || s == kCancelled;
}

double RankShare(int rank_gpus, int rank_cpus, int node_gpus, int node_cpus) {
  double share = 0;
  if (rank_gpus > 0 && node_gpus > 0) {
    share = static_cast<double>(rank_gpus) / node_gpus;
  } else if (node_cpus > 0) {
    share = static_cast<double>(std::max(rank_cpus, 0)) / node_cpus;
  }
  return std::min(share, 1.0);
}

bool Attempt::ended() const { return state != kStarting && state != kRunning; }

bool Attempt::has_live_ranks() const {
  for (const RankState& r : ranks) {
    if (IsLiveRankState(r.state)) return true;
  }
  return false;
}

json JobDocToJson(const JobDoc& d) {
  json attempts = json::array();
  for (const Attempt& a : d.attempts) attempts.push_back(AttemptToJson(a));
  return json{{"spec", d.spec},
              {"source", d.source},
              {"code_key", d.code_key},
              {"checkpoint_job", d.checkpoint_job},
              {"token_id", d.token_id},
              {"token_secret", d.token_secret},
              {"attempts", std::move(attempts)},
              {"not_before", d.not_before},
              {"recoveries", d.recoveries},
              {"exit_code", d.exit_code},
              {"reason", d.reason},
              {"waiting_reason", d.waiting_reason},
              {"waiting_since", d.waiting_since}};
}

Result<JobDoc> JobDocFromJson(std::string_view text) {
  try {
    json j = json::parse(text);
    JobDoc d;
    d.spec = j.at("spec");
    d.source = j.value("source", "");
    d.code_key = j.value("code_key", "");
    d.checkpoint_job = j.value("checkpoint_job", "");
    d.token_id = j.value("token_id", "");
    d.token_secret = j.value("token_secret", "");
    for (const json& a : j.value("attempts", json::array()))
      d.attempts.push_back(AttemptFromJson(a));
    d.not_before = j.value("not_before", TimeMs{0});
    d.recoveries = j.value("recoveries", 0);
    d.exit_code = j.value("exit_code", -1);
    d.reason = j.value("reason", "");
    d.waiting_reason = j.value("waiting_reason", "");
    d.waiting_since = j.value("waiting_since", TimeMs{0});
    return d;
  } catch (const std::exception& e) {
    return Internal(std::string("a stored job document does not parse: ") + e.what());
  }
}

std::string CheckpointPrefix(const std::string& job_id) { return job_id + "/checkpoints"; }
std::string CheckpointPrefixOf(const std::string& job_id, const JobDoc& doc) {
  return CheckpointPrefix(doc.checkpoint_job.empty() ? job_id : doc.checkpoint_job);
}
std::string OutputPrefix(const std::string& job_id) { return job_id + "/output"; }
std::string LogPrefix(const std::string& job_id, int attempt, int node_rank, int local_rank) {
  return job_id + "/logs/attempt-" + std::to_string(attempt) + "/node-" +
         std::to_string(node_rank) + "/rank-" + std::to_string(local_rank);
}

}  // namespace tf::jobs
