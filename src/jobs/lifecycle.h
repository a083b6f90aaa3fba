// The life of a managed job as pure functions: each takes the job as it is, what happened and
// the time, changes the job, and appends the events that explain the change. Nothing here
// touches the store, a clock or the network (jobs/job_service.h does), so every transition is
// tested by tables (tests/job_lifecycle_test.cc).
//
//   queued ──place──> starting ──all ranks running──> running ──all ranks exit 0──> succeeded
//                         │                              │
//                         └──── a rank fails, is interrupted, its node is lost, the
//                               max runtime passes ─────> retrying (the policy allows another
//                               attempt: placed again once every rank of the last one has
//                               stopped and the backoff has passed) or failed
//   cancel: any state that is not terminal ──> cancelled
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "fleet/scheduler.h"
#include "jobs/job_doc.h"
#include "jobs/job_spec.h"
#include "store/records.h"

namespace tf::jobs {

// A job read from the store, with its document and spec decoded.
struct Job {
  store::JobRecord record;
  JobDoc doc;
  JobSpec spec;

  const std::string& id() const { return record.id; }
  const std::string& state() const { return record.state; }
};

Result<Job> DecodeJob(const store::JobRecord& record);
// The record to write back: the document encoded, version and updated_at left to the caller.
store::JobRecord EncodeJob(const Job& job);

using Events = std::vector<store::JobEvent>;

// What a worker says about one rank of an attempt.
struct RankReport {
  int attempt = 0;
  uint64_t token = 0;
  int node_rank = 0;
  // "running", or how it ended: "succeeded", "failed", "interrupted", "lost" (the worker
  // restarted and cannot vouch for it), "stopped" (stopped because its attempt ended).
  std::string state;
  int exit_code = -1;
  int signal = 0;
  std::string log_tail;
  std::string message;  // the worker's words, e.g. "drained: spot interruption notice"
  // The node the report comes from, when a node's own credential sent it: the rank must be
  // placed there. "" for an admin, who may report for any node.
  std::string from_node;
};

// Starts attempt N+1 on `placement` (one address per rank, in rank order).
void StartAttempt(Job& job, const fleet::Placement& placement,
                  const std::vector<std::string>& addresses, uint64_t token, int master_port,
                  TimeMs now, Events& events);

// Applies a report. kAborted if its attempt or token is not the one it claims to be (a stale
// lease: the report changes nothing); kInvalidArgument for an unknown state or rank. A repeated
// report of a rank that already ended is accepted and changes nothing.
Status ApplyRankReport(Job& job, const RankReport& report, TimeMs now, Events& events);

// The node stopped heartbeating: its live ranks are lost, and so is their attempt.
void MarkNodeLost(Job& job, const std::string& node_id, TimeMs now, Events& events);

// kFailedPrecondition if the job already ended.
Status CancelJob(Job& job, const std::string& why, TimeMs now, Events& events);

// Ends the attempt if it has run longer than the spec's max_runtime.
void EnforceMaxRuntime(Job& job, TimeMs now, Events& events);

// Ends the attempt as failed once a gang's failed rank has waited `wait_ms` for its verdict
// (Attempt::failure_seen_at) without a node being lost meanwhile.
void ResolveGangFailure(Job& job, TimeMs now, TimeMs wait_ms, Events& events);

// Ranks of ended attempts still "stopping" after the limit are taken as stopped: one whose
// worker never started it (no report will come) after `unstarted_after_ms`, one that ran after
// `started_after_ms` (longer than the grace period a worker gives a process).
void ForgetSilentRanks(Job& job, TimeMs now, TimeMs unstarted_after_ms, TimeMs started_after_ms);

// Whether the scheduler may place the job now: queued, or retrying with every rank of its last
// attempt stopped (ranks on a node that is gone count as stopped: see MarkNodeLost).
bool WantsPlacement(const Job& job);

// The scheduler's view of the job's needs.
fleet::WorkRequest ToWorkRequest(const Job& job);

// How long before the attempt after `failed_attempts` attempts that failed with an error.
TimeMs RetryBackoff(const RetryPolicy& policy, int failed_attempts);

}  // namespace tf::jobs
