// The endpoint controller: run by the leading server once a second, it makes each endpoint's
// replicas what its spec and its load ask for (docs/endpoints.md, "How replicas run").
//
// For each endpoint, each tick:
//   1. Looks at every replica's job: an ended job's replica is gone (the autoscaler's count
//      then starts its replacement); a placed one has its address; one on a draining node
//      (its worker is stopping it) leaves the rotation at once and is replaced.
//   2. Checks the server of each started replica: GET the readiness path, every replica's at
//      once. A starting replica answers 200 -> ready (in rotation), or warm for the warm pool;
//      one not ready within the readiness timeout is stopped. A ready or warm one that fails
//      three checks in a row is taken out of rotation and stopped.
//   3. Samples the load (load_board.h, with what other servers' gateways published:
//      shared_load.h) into the endpoint's history and asks the autoscaler
//      (autoscaler.h) for a decision, which it applies: promotes, demotes, starts new replicas
//      (as jobs: replica_jobs.h), drains others.
//   4. Rolling update: the older generation's replicas keep serving, and are replaced one for
//      one: a single new replica starts ahead of them (surge one), and each new one that
//      becomes ready drains an old one. Its warm pool goes at once.
//   5. A draining replica's job is stopped; a deleting endpoint drains everything, and its
//      record goes when its last replica has.
//   6. Under `spot: prefer`, a replica that fell back to on-demand capacity moves back to spot
//      when spot capacity has room (checked every kSpotRecheckMs): a replica pinned to spot
//      starts beside it, and when that one is ready the on-demand one drains. One at a time, and
//      only while nothing else is changing (no rollout, no drain, no scaling).
// The document is written back naming the version read; a replica's job is started only after
// the replica is recorded, and found again by its name if a write was lost, so that no job
// runs without its replica.
#pragma once

#include <chrono>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "base/clock.h"
#include "base/status.h"
#include "endpoints/endpoint_doc.h"
#include "endpoints/endpoint_service.h"
#include "endpoints/load_board.h"
#include "endpoints/shared_load.h"
#include "jobs/job_service.h"
#include "store/store.h"

namespace tf::endpoints {

// What the controller sees of a replica's job.
struct ReplicaJob {
  bool ended = false;
  std::string state;           // the job's state
  std::string reason;          // why it is in it
  std::string node_id;         // "" until placed
  std::string address;         // "host:port" of its server once placed; "" before
  bool node_draining = false;  // its node is draining (or spot-interrupted): it is stopping
  bool on_spot = false;        // its node is spot capacity
};

// The jobs that run replicas (NewJobReplicaRunner: the job service).
class ReplicaRunner {
 public:
  virtual ~ReplicaRunner() = default;
  // Submits the job, or returns the active one already submitted under this name (a start
  // whose record was lost).
  virtual Result<std::string> Start(const std::string& project_id, const jobs::JobSpec& spec) = 0;
  virtual Result<ReplicaJob> Inspect(const std::string& project_id, const std::string& job_id) = 0;
  virtual Status Stop(const std::string& project_id, const std::string& job_id,
                      const std::string& reason) = 0;
  // Whether a job of `spec` (pinned to spot capacity by the caller) would be placed now, behind
  // every job that already waits: a replica that fell back to on-demand can move back.
  virtual Result<bool> WouldPlaceNow(const std::string& project_id, const jobs::JobSpec& spec) = 0;
  // Where `source`'s model is for a replica: a path or tf:// URL as written; a job's output
  // (by id, or the latest succeeded job of that name) as its tf:// URL.
  virtual Result<std::string> ModelUrl(const std::string& project_id,
                                       const ModelSource& source) = 0;
};

// Whether a replica's server answers GET `path` with 200 within `timeout`
// (NewHttpReplicaProbe: over HTTP). Called from several threads at once.
class ReplicaProbe {
 public:
  virtual ~ReplicaProbe() = default;
  virtual bool Healthy(const std::string& address, const std::string& path,
                       std::chrono::milliseconds timeout) = 0;
};

std::unique_ptr<ReplicaRunner> NewJobReplicaRunner(jobs::JobService& jobs, store::NodeStore& nodes);
std::unique_ptr<ReplicaProbe> NewHttpReplicaProbe();

inline constexpr int kLivenessFailures = 3;  // checks failed in a row that end a replica
// A serving replica's check may take its time (a busy server answers late, not never); a
// starting one's is retried at the next tick anyway, and a slow answer must not hold up the
// tick (a server loading its model on every core can answer late).
inline constexpr std::chrono::milliseconds kLivenessTimeout{1'000};
inline constexpr std::chrono::milliseconds kReadinessTimeout{200};
// How often an endpoint with an on-demand replica under `spot: prefer` asks whether spot
// capacity has room for it.
inline constexpr TimeMs kSpotRecheckMs = 30'000;

class EndpointController {
 public:
  // `rotation_changed` (optional) is called after a tick that put replicas into rotation or
  // took them out, so that this server's gateway routes by it at once.
  EndpointController(store::Store& store, ReplicaRunner& runner, ReplicaProbe& probe,
                     LoadBoard& load, const Clock& clock,
                     std::function<void()> rotation_changed = {})
      : store_(store),
        runner_(runner),
        probe_(probe),
        load_(load),
        clock_(clock),
        rotation_changed_(std::move(rotation_changed)) {}

  // One pass over every endpoint. A failure with one endpoint is logged and the others go on;
  // the first is returned.
  Status Tick();

  // Counts the load that other servers sharing the store publish (shared_load.h) too, read once
  // per tick. Set before the first Tick; without it, only this server's gateway counts.
  void CountRemoteLoad(std::unique_ptr<RemoteLoad> remote) { remote_ = std::move(remote); }

  // Whether the last tick left a replica starting (or warming): its caller then ticks sooner,
  // so that a replica enters rotation soon after its server is ready, not up to a tick later.
  bool starting() const { return starting_; }

 private:
  Status TickEndpoint(const store::EndpointRecord& record, TimeMs now);
  // The load history of an endpoint with this tick's sample added, trimmed to what the
  // longest of its windows needs.
  const std::deque<LoadSample>& Observe(const EndpointView& view, TimeMs now);
  // Step 6: under `spot: prefer`, starts a spot replica to take the place of one on on-demand
  // capacity when the scheduler would place it now (asked every kSpotRecheckMs).
  void StartSpotMove(const store::EndpointRecord& record, EndpointDoc& doc, TimeMs now,
                     std::vector<std::string>& notes);

  store::Store& store_;
  ReplicaRunner& runner_;
  ReplicaProbe& probe_;
  LoadBoard& load_;
  std::unique_ptr<RemoteLoad> remote_;  // optional
  const Clock& clock_;
  std::function<void()> rotation_changed_;
  std::map<std::string, std::deque<LoadSample>> history_;  // by endpoint id; Tick's thread only
  std::map<std::string, TimeMs> spot_checked_;             // by endpoint id; Tick's thread only
  bool starting_ = false;                                  // Tick's thread only
  bool rotation_changed_now_ = false;                      // during a Tick
};

}  // namespace tf::endpoints
