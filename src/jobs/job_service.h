// Managed jobs and the fleet they run on, over the store: what the API routes call, and the
// controller's Tick() that the leader server runs (node failure detection, time limits,
// scheduling). Every change to a job is a read, a pure transition (jobs/lifecycle.h) and a
// write that names the version it read; a lost race is retried from a fresh read.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "auth/auth_service.h"
#include "base/clock.h"
#include "base/mutex.h"
#include "fleet/node_info.h"
#include "fleet/scheduler.h"
#include "jobs/lifecycle.h"
#include "store/store.h"

namespace tf::jobs {

struct JobServiceOptions {
  // A node whose last heartbeat is older than this is lost, and its ranks with it.
  TimeMs heartbeat_timeout_ms = 10 * kSecondMs;
  // Ports handed to rank 0 of each attempt for the process group's rendezvous.
  // How long a worker gives a process between SIGTERM and SIGKILL (its --grace): a stopping
  // rank silent for longer than this (and a heartbeat timeout) is taken as stopped.
  TimeMs stop_grace_ms = 120 * kSecondMs;
  // A lost node is forgotten this long after its last heartbeat (its periods stay, for
  // metering); a worker that comes back registers again.
  TimeMs lost_node_retention_ms = 24 * kHourMs;
  int master_port_base = 29500;
  int master_port_count = 2000;
};

// How a job is submitted beyond its spec.
struct SubmitOptions {
  // Restore and sync the checkpoints of this job of the same project rather than its own
  // (JobDoc::checkpoint_job): a paused sweep trial resumed. kInvalidArgument if the project has
  // no such job.
  std::string checkpoint_of;
};

// One rank for a worker to run (or keep running).
struct RankAssignment {
  std::string job_id;
  std::string job_name;
  std::string project_id;
  int attempt = 0;
  uint64_t token = 0;
  int node_rank = 0;
  std::vector<int> gpus;
  std::vector<std::string> addresses;  // every node of the gang, in rank order
  int master_port = 0;
  nlohmann::json spec;            // JobSpecToJson
  std::string code_key;           // in kJobsBucket; "" = no code bundle
  std::string checkpoint_prefix;  // in kJobsBucket (CheckpointPrefixOf)
  std::string job_token;          // the job-scoped API token's secret
};

struct NodeAssignments {
  std::string node_state;  // ready, draining, lost
  int64_t epoch = 0;
  std::optional<nlohmann::json> drain;  // {"deadline_ms": ..., "reason": ...} while draining
  std::vector<RankAssignment> ranks;
};

// A node as `tensorfleet nodes` shows it.
struct NodeView {
  struct Rank {
    std::string project_id;  // whose job it is
    std::string name;        // "job_x/attempt-2/rank-0"
  };
  store::NodeRecord record;
  fleet::NodeInfo info;
  std::vector<Rank> running;
  int gpus_in_use = 0;
};

// The fleet as the scheduler sees it now, for the pool autoscaler (pools/pool_controller.h).
struct CapacityView {
  std::vector<store::NodeRecord> records;   // every node, lost ones too
  std::vector<fleet::NodeState> nodes;      // the live ones, with what is in use taken off
  std::vector<fleet::WorkRequest> pending;  // jobs that want placement
  std::set<std::string> busy;               // nodes where a rank lives
};

struct TickStats {
  int nodes_lost = 0;
  int nodes_forgotten = 0;  // lost for longer than lost_node_retention_ms
  int placed = 0;
  int waiting = 0;
};

class JobService {
 public:
  JobService(store::Store& store, auth::AuthService& auth, const Clock& clock,
             JobServiceOptions options = {});

  // Called after a commit changed what `node_id` should run (to wake its long poll), and after
  // anything that may let more work start (to run the scheduler soon). Set before use.
  void SetListeners(std::function<void(const std::string& node_id)> on_node_change,
                    std::function<void()> on_work);

  // Asked by Submit before anything is stored: a non-OK status refuses the submission with
  // it (cost/budget_service.h: exhausted refuse-submissions budgets). Set before use.
  void SetAdmission(std::function<Status(const std::string& project_id)> admission) {
    admission_ = std::move(admission);
  }

  // Nodes that could still be added (one per machine a pool may start, pools/): a job that
  // fits only those is accepted and waits. Called at each submission, from any thread.
  void SetPotentialNodes(std::function<std::vector<fleet::NodeState>()> potential) {
    potential_nodes_ = std::move(potential);
  }
  // Why jobs wait for capacity that is being added ("pool gpu is starting 1 node for it"),
  // by job id: each replaces the scheduler's reason for its job until the next call.
  void SetCapacityNotes(std::map<std::string, std::string> notes);
  Result<CapacityView> Capacity();
  // Whether a job of `spec` submitted now would be placed at the next scheduling pass, behind
  // every job that already waits (it takes no capacity reserved for them).
  Result<bool> WouldPlaceNow(const JobSpec& spec);

  // Jobs. `spec_yaml` is the spec file as written; `source` its name in messages.
  // `settings`: hyperparameter values that replace or add to the spec's (`run --set`).
  Result<Job> Submit(const std::string& project_id, const std::string& spec_yaml,
                     const std::string& source, const std::string& code_key,
                     const nlohmann::json& settings = nullptr);
  // A spec already read (and checked again here): what other services submit, such as an
  // endpoint's replicas.
  Result<Job> SubmitSpec(const std::string& project_id, const JobSpec& spec,
                         const std::string& source, const std::string& code_key,
                         const SubmitOptions& options = {});
  // kInvalidArgument, naming `source` and the reason, when no node of the fleet could ever run
  // `spec` (too many GPUs, a label no node has, ...); OK with no node registered yet.
  Status CheckPlaceable(const JobSpec& spec, const std::string& source);
  Result<Job> Get(const std::string& project_id, const std::string& job_id);  // kNotFound
  Result<std::vector<Job>> List(const std::string& project_id, bool include_finished, int limit);
  // `reason` is kept as the job's reason ("stopped by budget 'x': ...").
  Result<Job> Cancel(const std::string& project_id, const std::string& job_id,
                     const std::string& reason = "cancelled by request");
  Result<std::vector<store::JobEvent>> EventsOf(const std::string& project_id,
                                                const std::string& job_id);
  Result<std::vector<store::MetricPoint>> Metrics(const std::string& project_id,
                                                  const std::string& job_id, int limit);

  // From workers. kAborted for a stale token or epoch (the caller must stop what it runs).
  Status Report(const std::string& job_id, const RankReport& report);
  // `from_node` as RankReport::from_node: kPermissionDenied unless a rank of the attempt is
  // placed on it.
  Status AddMetrics(const std::string& job_id, int attempt, uint64_t token,
                    std::vector<store::MetricPoint> points, const std::string& from_node = "");

  // The fleet. `admission`: what let the registration in (store::NodeStore::AdmitNode).
  Result<store::NodeRecord> RegisterNode(const std::string& node_id, const std::string& name,
                                         const fleet::NodeInfo& info,
                                         const store::NodeAdmission& admission = {});
  Status Heartbeat(const std::string& node_id, int64_t epoch);
  Result<NodeAssignments> Assignments(const std::string& node_id);
  // Asks the node's worker to interrupt everything it runs within `deadline_ms` and places
  // nothing new on it until it registers again.
  Status Drain(const std::string& node_id, TimeMs deadline_ms, const std::string& reason);
  // Returns a draining node to service: it takes new work again (what the drain already
  // stopped stays stopped). kFailedPrecondition if it is not draining.
  Status Undrain(const std::string& node_id);
  // Forgets a lost node. kFailedPrecondition if it is not lost (a live one must be drained and
  // its worker stopped first: it is lost after the heartbeat timeout).
  Status RemoveNode(const std::string& node_id);
  // Forgets a drained node whose machine was stopped on purpose (a pool's idle node) at once,
  // rather than after the heartbeat timeout. kFailedPrecondition if a rank still lives on it
  // or it is not draining.
  Status RetireNode(const std::string& node_id);
  Result<std::vector<NodeView>> ListNodes();

  // The controller: lost nodes, time limits, then scheduling. Runs on the leader only.
  Result<TickStats> Tick();

 private:
  // Reads the job, applies `change`, writes it back naming the version read; retries lost
  // races. `change` returns kAborted/other errors to stop without writing.
  Result<Job> Mutate(const std::string& job_id, const std::function<Status(Job&, Events&)>& change);
  void AfterChange(const Job& before_nodes_of, const Job& after);
  Result<std::vector<Job>> ActiveJobs();
  // Revokes an API token ("" is none); a failure is logged, naming `whose`.
  void RevokeQuietly(const std::string& token_id, const std::string& whose);
  Result<int> DetectLostNodes(std::vector<store::NodeRecord>& nodes, TimeMs now);
  // Deletes (and drops from `nodes`) those lost for longer than lost_node_retention_ms.
  int ForgetLostNodes(std::vector<store::NodeRecord>& nodes, TimeMs now);
  Result<TickStats> Schedule(const std::vector<store::NodeRecord>& nodes, TimeMs now);
  // The live nodes of `records` with what the live ranks of `jobs` hold taken off; `infos` gets
  // each one's NodeInfo when given.
  static std::vector<fleet::NodeState> FleetInUse(const std::vector<store::NodeRecord>& records,
                                                  const std::vector<Job>& jobs,
                                                  std::map<std::string, fleet::NodeInfo>* infos);

  store::Store& store_;
  auth::AuthService& auth_;
  const Clock& clock_;
  JobServiceOptions options_;
  std::function<void(const std::string&)> on_node_change_;
  std::function<void()> on_work_;
  std::function<Status(const std::string&)> admission_;
  std::function<std::vector<fleet::NodeState>()> potential_nodes_;
  Mutex notes_mu_;
  std::map<std::string, std::string> capacity_notes_ GUARDED_BY(notes_mu_);
};

}  // namespace tf::jobs
