#include "cost/metering/metering.h"

#include <algorithm>
#include <ctime>
#include <nlohmann/json.hpp>

#include "fleet/node_info.h"
#include "jobs/lifecycle.h"

namespace tf::cost {
namespace {

bool MayStillRun(const jobs::RankState& r) {
  return r.state == "assigned" || r.state == "running" || r.state == "stopping";
}

double Seconds(TimeMs from, TimeMs to) {
  return to > from ? static_cast<double>(to - from) / kSecondMs : 0.0;
}

// When the rank stopped holding its node. A rank that ended without a recorded time (documents
// from before ended_at was kept) is taken to have ended with its attempt.
TimeMs RankEnd(const jobs::Attempt& a, const jobs::RankState& r, TimeMs now) {
  if (MayStillRun(r)) return now;
  if (r.ended_at > 0) return r.ended_at;
  return a.ended_at > 0 ? a.ended_at : a.created_at;
}

void MeterJob(const jobs::Job& job, Metering& m) {
  TimeMs cap = std::min(m.until, m.now);
  for (const jobs::Attempt& a : job.doc.attempts) {
    for (size_t i = 0; i < a.ranks.size(); ++i) {
      const jobs::RankState& r = a.ranks[i];
      bool running = MayStillRun(r);
      if (running) {
        double rate = r.price_per_hour * r.share;
        m.burn_rate_per_hour += rate;
        m.burn_rate_by_project[job.record.project_id] += rate;
      }
      TimeMs from = std::max(a.created_at, m.since);
      TimeMs to = std::min(RankEnd(a, r, m.now), cap);
      if (to <= from) continue;
      UsageLine line;
      line.project_id = job.record.project_id;
      line.job_id = job.record.id;
      line.job_name = job.record.name;
      line.attempt = a.number;
      line.node_rank = static_cast<int>(i);
      line.node_id = r.node_id;
      line.from = from;
      line.to = to;
      double seconds = Seconds(from, to);
      line.gpu_seconds = static_cast<double>(r.gpus.size()) * seconds;
      line.cpu_seconds = job.spec.resources.cpus * seconds;
      line.share = r.share;
      line.price_per_hour = r.price_per_hour;
      line.cost = r.price_per_hour * r.share * seconds / 3600.0;
      line.spot = r.spot;
      line.running = running;
      m.usage.push_back(std::move(line));
    }
  }
}

void MeterIdle(const std::vector<store::NodePeriod>& periods, Metering& m) {
  // The usage lines of each node, to subtract from the periods it was up.
  std::map<std::string, std::vector<const UsageLine*>> by_node;
  for (const UsageLine& u : m.usage) by_node[u.node_id].push_back(&u);
  TimeMs cap = std::min(m.until, m.now);
  for (const store::NodePeriod& p : periods) {
    auto info = fleet::NodeInfoFromJson(nlohmann::json::parse(p.info_json, nullptr, false));
    if (!info.ok()) {
      m.unreadable.push_back(
          {"node", p.node_id + "#" + std::to_string(p.epoch), info.status().message()});
      continue;
    }
    IdleLine line;
    line.node_id = p.node_id;
    if (auto label = info->labels.find("instance_id"); label != info->labels.end()) {
      line.instance_id = label->second;
    }
    line.epoch = p.epoch;
    line.from = std::max(p.started_at, m.since);
    line.to = std::min(p.last_seen_at, cap);
    if (line.to <= line.from) continue;
    line.price_per_hour = info->price_per_hour;
    line.spot = info->spot;
    line.up_seconds = Seconds(line.from, line.to);
    for (const UsageLine* u : by_node[p.node_id]) {
      line.used_share_seconds +=
          u->share * Seconds(std::max(u->from, line.from), std::min(u->to, line.to));
    }
    line.idle_seconds = std::max(0.0, line.up_seconds - line.used_share_seconds);
    line.cost = line.price_per_hour * line.idle_seconds / 3600.0;
    m.idle.push_back(std::move(line));
  }
}

void AddTo(SummaryRow& row, double fraction, const UsageLine& u) {
  row.seconds += u.seconds() * fraction;
  row.gpu_seconds += u.gpu_seconds * fraction;
  row.cpu_seconds += u.cpu_seconds * fraction;
  row.cost += u.cost * fraction;
  row.lines += 1;
}

TimeMs DayStart(TimeMs t) {
  TimeMs day = t / kDayMs;
  if (t % kDayMs < 0) --day;
  return day * kDayMs;
}

}  // namespace

Metering Meter(const std::vector<store::JobRecord>& jobs,
               const std::vector<store::NodePeriod>& periods, TimeMs since, TimeMs until,
               TimeMs now) {
  Metering m;
  m.since = since;
  m.until = until;
  m.now = now;
  for (const store::JobRecord& record : jobs) {
    auto job = jobs::DecodeJob(record);
    if (!job.ok()) {
      m.unreadable.push_back({"job", record.id, job.status().message()});
      continue;
    }
    MeterJob(*job, m);
  }
  MeterIdle(periods, m);
  return m;
}

Result<GroupBy> ParseGroupBy(std::string_view text) {
  if (text == "project") return GroupBy::kProject;
  if (text == "job") return GroupBy::kJob;
  if (text == "node") return GroupBy::kNode;
  if (text == "day") return GroupBy::kDay;
  return InvalidArgument("by: must be project, job, node or day, got \"" + std::string(text) +
                         "\"");
}

const char* GroupByName(GroupBy by) {
  switch (by) {
    case GroupBy::kProject:
      return "project";
    case GroupBy::kJob:
      return "job";
    case GroupBy::kNode:
      return "node";
    case GroupBy::kDay:
      return "day";
  }
  return "project";
}

std::string UtcDay(TimeMs t) {
  std::time_t secs = static_cast<std::time_t>(DayStart(t) / kSecondMs);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[16];
  std::strftime(buf, sizeof buf, "%Y-%m-%d", &tm);
  return buf;
}

Summary Summarize(const Metering& m, GroupBy by) {
  Summary s;
  s.by = by;
  std::map<std::string, SummaryRow> rows;
  auto row = [&rows](const std::string& key) -> SummaryRow& {
    SummaryRow& r = rows[key];
    r.key = key;
    return r;
  };
  for (const UsageLine& u : m.usage) {
    switch (by) {
      case GroupBy::kProject:
        AddTo(row(u.project_id), 1.0, u);
        break;
      case GroupBy::kJob: {
        SummaryRow& r = row(u.job_id);
        r.label = u.job_name;
        AddTo(r, 1.0, u);
        break;
      }
      case GroupBy::kNode:
        AddTo(row(u.node_id), 1.0, u);
        break;
      case GroupBy::kDay: {
        double total = static_cast<double>(u.to - u.from);
        for (TimeMs t = u.from; t < u.to;) {
          TimeMs next = std::min(DayStart(t) + kDayMs, u.to);
          AddTo(row(UtcDay(t)), static_cast<double>(next - t) / total, u);
          t = next;
        }
        break;
      }
    }
    s.usage_cost += u.cost;
    s.gpu_seconds += u.gpu_seconds;
    s.cpu_seconds += u.cpu_seconds;
  }
  for (auto& [key, r] : rows) s.rows.push_back(std::move(r));
  s.idle.key = "idle";
  for (const IdleLine& i : m.idle) {
    s.idle.seconds += i.idle_seconds;
    s.idle.cost += i.cost;
    s.idle.lines += 1;
  }
  s.idle_cost = s.idle.cost;
  s.total_cost = s.usage_cost + s.idle_cost;
  return s;
}

}  // namespace tf::cost
