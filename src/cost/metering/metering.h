// Metering: what the work on the fleet cost, as a pure function of what the store keeps.
//
// A rank of a managed job holds a share of one node from the moment it is placed (its attempt's
// created_at) until it ends (its ended_at), or until `now` while it may still run. It is priced
// at what was recorded when it was placed (jobs::RankState: the node's price per hour, the
// share, spot), so a node that changes its price later does not rewrite history:
//
//   cost = price_per_hour × share × hours
//
// Idle capacity is the rest of what the nodes were up for (store::NodePeriod): per period,
// price × (up-seconds − Σ share × seconds of the ranks on it), never negative.
//
// Everything is clipped to a window [since, until) and to `now`. Documents that cannot be read
// are counted in `unreadable` with the reason, never dropped silently. docs/cost.md, "Metering".
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "store/records.h"

namespace tf::cost {

// One rank of one attempt, clipped to the window.
struct UsageLine {
  std::string project_id;
  std::string job_id;
  std::string job_name;
  int attempt = 0;
  int node_rank = 0;
  std::string node_id;
  TimeMs from = 0;            // clipped to the window
  TimeMs to = 0;              // clipped to the window and to now
  double gpu_seconds = 0;     // the rank's GPUs × seconds
  double cpu_seconds = 0;     // the CPUs the job asks per node × seconds
  double share = 0;           // of the node, 0..1
  double price_per_hour = 0;  // the node's, when the rank was placed
  double cost = 0;            // price_per_hour × share × hours, in dollars
  bool spot = false;
  bool running = false;  // the rank may still run: counted until now

  double seconds() const { return static_cast<double>(to - from) / kSecondMs; }
};

// One period a node was up, clipped to the window, less what ranks used of it.
struct IdleLine {
  std::string node_id;
  std::string instance_id;  // the node's `instance_id` label (its EC2 instance), if any
  int64_t epoch = 0;
  TimeMs from = 0;
  TimeMs to = 0;
  double price_per_hour = 0;
  bool spot = false;
  double up_seconds = 0;
  double used_share_seconds = 0;  // Σ share × seconds of the ranks on the node in this period
  double idle_seconds = 0;        // max(0, up_seconds − used_share_seconds)
  double cost = 0;                // price_per_hour × idle_seconds / 3600
};

// A job or node document that metering could not read.
struct Unreadable {
  std::string kind;  // "job" or "node"
  std::string id;    // job id, or node id and epoch ("node_1#3")
  std::string error;
};

struct Metering {
  TimeMs since = 0;
  TimeMs until = 0;
  TimeMs now = 0;
  std::vector<UsageLine> usage;  // by job, attempt, node rank
  std::vector<IdleLine> idle;    // by node, epoch; empty when no node periods were given
  std::vector<Unreadable> unreadable;
  // Dollars per hour of the ranks that may still run at `now` (whatever the window), and the
  // same by project id.
  double burn_rate_per_hour = 0;
  std::map<std::string, double> burn_rate_by_project;
};

// Meters `jobs` (store::JobRecord with their doc_json) and, for idle capacity, `periods`, over
// [since, until) as seen at `now`. Pass no periods to leave idle capacity out (a report for one
// project: idle capacity belongs to no project).
Metering Meter(const std::vector<store::JobRecord>& jobs,
               const std::vector<store::NodePeriod>& periods, TimeMs since, TimeMs until,
               TimeMs now);

// ---- Summaries ------------------------------------------------------------------------------

enum class GroupBy { kProject, kJob, kNode, kDay };

// "project", "job", "node" or "day"; kInvalidArgument naming the choices otherwise.
Result<GroupBy> ParseGroupBy(std::string_view text);
const char* GroupByName(GroupBy by);

struct SummaryRow {
  std::string key;     // project id, job id, node id, or the UTC day "2026-11-30"; "idle"
  std::string label;   // the job's name for by=job; empty otherwise
  double seconds = 0;  // rank-seconds (idle: idle seconds)
  double gpu_seconds = 0;
  double cpu_seconds = 0;
  double cost = 0;
  int lines = 0;  // usage (or idle) lines that contributed
};

struct Summary {
  GroupBy by = GroupBy::kProject;
  std::vector<SummaryRow> rows;  // by key
  SummaryRow idle;               // key "idle": every idle line together
  double usage_cost = 0;         // Σ rows
  double idle_cost = 0;
  double total_cost = 0;  // usage + idle
  double gpu_seconds = 0;
  double cpu_seconds = 0;
};

// Groups the usage lines. By day, a line spanning UTC midnight is split across the days in
// proportion to its time there.
Summary Summarize(const Metering& metering, GroupBy by);

// "2026-11-30": the UTC day of t.
std::string UtcDay(TimeMs t);

}  // namespace tf::cost
