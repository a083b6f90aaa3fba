// What the store keeps of a managed job beyond its indexed columns (store::JobRecord.doc_json):
// the spec, where its code is, and every attempt with the node and GPUs of each rank.
//
// An attempt is the job's command started on a gang of nodes; each node runs one rank (node
// rank 0..N-1). An attempt carries a fencing token: a worker's report names it, and a report
// with another token is stale and refused. An attempt ends once (succeeded, failed,
// interrupted, lost, cancelled, timed-out); ranks still running on their nodes then stop
// ("stopping" until their worker reports them gone), and the next attempt waits for that.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/status.h"
#include "jobs/job_spec.h"

namespace tf::jobs {

// Job states (store::JobRecord.state).
inline constexpr const char* kQueued = "queued";
inline constexpr const char* kStarting = "starting";
inline constexpr const char* kRunning = "running";
inline constexpr const char* kRetrying = "retrying";
inline constexpr const char* kSucceeded = "succeeded";
inline constexpr const char* kFailed = "failed";
inline constexpr const char* kCancelled = "cancelled";
// The attempt-only state between a spot notice and the next attempt.
inline constexpr const char* kInterrupted = "interrupted";

bool IsTerminalJobState(std::string_view state);

// One node's part of an attempt.
struct RankState {
  std::string node_id;
  std::string address;  // the node's address when placed
  std::vector<int> gpus;
  // "assigned" (the worker has not started it yet), "running", and the ends: "succeeded",
  // "failed", "interrupted", "lost", "stopped" (ended because its attempt did); "stopping"
  // while a rank of an ended attempt may still run.
  std::string state = "assigned";
  int exit_code = -1;    // when it exited
  int signal = 0;        // when a signal ended it
  std::string log_tail;  // the last lines of its output, for `describe`
  TimeMs started_at = 0;
  TimeMs ended_at = 0;
  // Set when the rank is placed, for metering (cost/metering.h), so that a later price change
  // does not rewrite history: the node's price per hour then, the share of the node the rank
  // holds (0..1), and whether the node is spot. 0 / false in documents written before.
  double price_per_hour = 0;
  double share = 0;
  bool spot = false;
};

// The share of a node a rank holds: its GPUs / the node's GPUs when both have GPUs, else the
// CPUs it asks / the node's CPUs; capped at 1, 0 when the node declares neither.
double RankShare(int rank_gpus, int rank_cpus, int node_gpus, int node_cpus);

struct Attempt {
  int number = 0;      // 1, 2, ...
  uint64_t token = 0;  // fencing token
  // The attempt's API token, of the job's project: its processes' TENSORFLEET_TOKEN, and what
  // its workers ship logs and checkpoints with. Made when the attempt is placed and revoked when
  // a newer attempt is placed (so a stale rank, on a node declared lost, can write nothing) or
  // when the job has ended and its last process is gone. "" in documents written before.
  std::string api_token_id;
  std::string api_token;
  std::string state = kStarting;  // starting, running, then an end (see above)
  std::string reason;             // why it ended
  int master_port = 0;
  std::vector<RankState> ranks;
  TimeMs created_at = 0;
  TimeMs started_at = 0;  // when the last rank started running
  TimeMs ended_at = 0;
  int exit_code = -1;
  // A rank of a gang failed while its peers still ran: when a node dies, the survivors fail at
  // once (their collective breaks) before the dead node is declared lost. The verdict waits:
  // a lost node meanwhile makes the attempt lost, otherwise it fails (see lifecycle.h).
  TimeMs failure_seen_at = 0;
  std::string failure_reason;
  int failure_exit_code = -1;

  bool ended() const;
  // True while some rank may still be running on its node.
  bool has_live_ranks() const;
};

struct JobDoc {
  nlohmann::json spec;   // JobSpecToJson
  std::string source;    // the spec's file name, for messages
  std::string code_key;  // object key of the code bundle in the job bucket; "" = none
  // The job whose checkpoint prefix this one restores and syncs: "" for its own. A sweep's trial
  // resumed after a pause names its first job, so that it goes on from where that one stopped.
  std::string checkpoint_job;
  // The job-wide API token of documents written before attempts had their own (Attempt's
  // api_token): used by their attempts placed before, revoked at the next placement or the end.
  std::string token_id;
  std::string token_secret;
  std::vector<Attempt> attempts;
  TimeMs not_before = 0;  // retry backoff
  int recoveries = 0;     // attempts started after an interruption or a lost node
  int exit_code = -1;     // of the attempt that decided the job
  std::string reason;     // why the job is in its state
  // Why the scheduler did not place the job at its latest try, in words for a person
  // (fleet::Waiting, e.g. "needs 8 GPUs on one node; the largest free is 4"), and when it first
  // gave that reason. Written only when the reason changes; "" and 0 once the job is placed or
  // cancelled, and in documents written before.
  std::string waiting_reason;
  TimeMs waiting_since = 0;

  Attempt* current() { return attempts.empty() ? nullptr : &attempts.back(); }
  const Attempt* current() const { return attempts.empty() ? nullptr : &attempts.back(); }
};

nlohmann::json JobDocToJson(const JobDoc& doc);
Result<JobDoc> JobDocFromJson(std::string_view text);

// The bucket of every project that holds its jobs' code, checkpoints, logs and outputs.
inline constexpr const char* kJobsBucket = "tensorfleet-jobs";
// Object keys inside kJobsBucket.
std::string CheckpointPrefix(const std::string& job_id);  // "<job>/checkpoints"
// The checkpoint prefix of a job of this id and document (its checkpoint_job's when set).
std::string CheckpointPrefixOf(const std::string& job_id, const JobDoc& doc);
std::string OutputPrefix(const std::string& job_id);  // "<job>/output"
// "<job>/logs/attempt-<n>/node-<rank>/rank-<local>"
std::string LogPrefix(const std::string& job_id, int attempt, int node_rank, int local_rank);

}  // namespace tf::jobs
