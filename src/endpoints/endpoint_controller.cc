#include "endpoints/endpoint_controller.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <future>
#include <map>
#include <set>

#include "base/crypto.h"
#include "endpoints/endpoint_service.h"
#include "endpoints/replica_jobs.h"
#include "jobs/quantities.h"

namespace tf::endpoints {
namespace {

// A draining replica's job is stopped once its last request has been answered, or after this.
constexpr TimeMs kDrainGraceMs = 2 * kMinuteMs;
constexpr size_t kReplicaKeyBytes = 16;
constexpr size_t kParallelChecks = 16;  // health checks of one tick made at once

constexpr const char* kStarting = "starting";
constexpr const char* kWarming = "warming";
constexpr const char* kReady = "ready";
constexpr const char* kWarm = "warm";
constexpr const char* kDraining = "draining";

void SetState(Replica& r, const char* state, TimeMs now) {
  r.state = state;
  r.since = now;
  r.failed_checks = 0;
}

// Adds to the endpoint's log of decisions and events; the same reason twice in a row (a
// replica that keeps waiting for its model) is kept once.
void Note(EndpointDoc& doc, TimeMs now, int serving, int warm, std::string reason) {
  if (!doc.scaling.empty() && doc.scaling.back().reason == reason) return;
  doc.scaling.push_back(ScalingEvent{now, serving, warm, std::move(reason)});
  while (doc.scaling.size() > kMaxScalingEvents) doc.scaling.pop_front();
}

// The longest window any rule of the autoscaler looks back over.
TimeMs LongestWindow(const Autoscaling& a) {
  return std::max({a.upscale_delay_ms, a.downscale_delay_ms, a.scale_to_zero_after_ms});
}

enum class Generation { kCurrent, kPrevious };

bool Of(const EndpointDoc& doc, const Replica& r, Generation g) {
  return (r.generation == doc.generation) == (g == Generation::kCurrent);
}

// Changes up to `n` replicas of generation `g` in the states `from` (in that order) to `to`;
// returns how many. Replicas leaving a draining node are not among them (Leave's).
int Move(EndpointDoc& doc, Generation g, const std::vector<std::string>& from, const char* to,
         int n, TimeMs now) {
  int moved = 0;
  for (const std::string& state : from) {
    for (Replica& r : doc.replicas) {
      if (moved == n) return moved;
      if (Of(doc, r, g) && r.state == state && !r.leaving) {
        SetState(r, to, now);
        ++moved;
      }
    }
  }
  return moved;
}

// One health check: GET `path` at `address` within `timeout`.
struct ProbeCall {
  std::string address;
  std::string path;
  std::chrono::milliseconds timeout;
};

// Whether each call's server answered 200, the calls made at once (a few at a time): on threads
// of their own when there are several, on this one when there is one.
std::vector<bool> CheckAll(ReplicaProbe& probe, const std::vector<ProbeCall>& calls) {
  std::vector<bool> out(calls.size());
  if (calls.size() == 1) {
    out[0] = probe.Healthy(calls[0].address, calls[0].path, calls[0].timeout);
    return out;
  }
  for (size_t start = 0; start < calls.size(); start += kParallelChecks) {
    const size_t end = std::min(calls.size(), start + kParallelChecks);
    std::vector<std::future<bool>> running;
    for (size_t i = start; i < end; ++i) {
      running.push_back(std::async(std::launch::async, [&probe, &call = calls[i]] {
        return probe.Healthy(call.address, call.path, call.timeout);
      }));
    }
    for (size_t i = start; i < end; ++i) out[i] = running[i - start].get();
  }
  return out;
}

int Count(const EndpointDoc& doc, Generation g, const char* state) {
  return static_cast<int>(std::count_if(doc.replicas.begin(), doc.replicas.end(), [&](auto& r) {
    return Of(doc, r, g) && r.state == state && !r.leaving;
  }));
}

// Replicas that serve from a draining node until their replacements are ready.
int CountLeaving(const EndpointDoc& doc) {
  return static_cast<int>(std::count_if(doc.replicas.begin(), doc.replicas.end(),
                                        [](auto& r) { return r.leaving && r.state == kReady; }));
}

// A replica of this generation in rotation on on-demand capacity, that could move to spot.
Replica* OnDemandReplica(EndpointDoc& doc) {
  for (Replica& r : doc.replicas) {
    if (Of(doc, r, Generation::kCurrent) && r.state == kReady && !r.leaving && !r.on_spot &&
        !r.to_spot && !r.node_id.empty()) {
      return &r;
    }
  }
  return nullptr;
}

// Replicas started on spot to take the place of on-demand ones, not ready yet.
int CountToSpot(const EndpointDoc& doc) {
  return static_cast<int>(std::count_if(doc.replicas.begin(), doc.replicas.end(), [&](auto& r) {
    return r.to_spot && r.state == kStarting && Of(doc, r, Generation::kCurrent);
  }));
}

Replica NewReplica(const EndpointDoc& doc, const char* state, TimeMs now) {
  Replica r;
  r.id = "rep_" + RandomHex(4);
  r.key = RandomHex(kReplicaKeyBytes);
  r.generation = doc.generation;
  SetState(r, state, now);
  return r;
}

// Drains up to `n` replicas that serve from a draining node; returns how many.
int Leave(EndpointDoc& doc, int n, TimeMs now) {
  int moved = 0;
  for (Replica& r : doc.replicas) {
    if (moved == n) break;
    if (r.leaving && r.state == kReady) {
      SetState(r, kDraining, now);
      ++moved;
    }
  }
  return moved;
}

}  // namespace

Status EndpointController::Tick() {
  const TimeMs now = clock_.Now();
  TF_ASSIGN_OR_RETURN(auto records, store_.endpoints().ListEndpoints(""));
  if (remote_) {
    Status read = remote_->Refresh();
    if (!read.ok()) spdlog::warn("endpoints: other servers' load not counted: {}", read.ToString());
  }
  starting_ = false;
  rotation_changed_now_ = false;
  Status first;
  std::set<std::string> seen;
  for (const store::EndpointRecord& record : records) {
    seen.insert(record.id);
    Status s = TickEndpoint(record, now);
    if (!s.ok()) {
      spdlog::warn("endpoint {}: {}", record.name, s.ToString());
      if (first.ok()) first = s;
    }
  }
  std::erase_if(history_, [&](const auto& entry) { return !seen.count(entry.first); });
  if (rotation_changed_now_ && rotation_changed_) rotation_changed_();
  return first;
}

const std::deque<LoadSample>& EndpointController::Observe(const EndpointView& view, TimeMs now) {
  std::deque<LoadSample>& h = history_[view.record.id];
  const std::string& id = view.record.id;
  LoadSample sample = load_.Sample(id, now);
  if (remote_) sample = remote_->Combine(id, sample, load_.InFlightByReplica(id));
  h.push_back(sample);
  // Keep one sample at or before the longest window's start, so that the window is covered.
  TimeMs start = now - LongestWindow(view.doc.spec.autoscaling);
  while (h.size() > 2 && h[1].at <= start) h.pop_front();
  return h;
}

Status EndpointController::TickEndpoint(const store::EndpointRecord& record, TimeMs now) {
  TF_ASSIGN_OR_RETURN(EndpointView view, ViewOf(record));
  EndpointDoc& doc = view.doc;
  const EndpointSpec& spec = doc.spec;
  const std::string& project = record.project_id;
  const bool deleting = record.state == "deleting";
  const std::string& health = spec.engine.readiness.path;
  std::vector<std::string> notes;
  int became_ready = 0;  // replicas of this generation that joined the rotation this tick
  std::set<std::string> in_rotation_before;
  for (const Replica& r : doc.replicas) {
    if (r.state == kReady) in_rotation_before.insert(r.id);
  }

  // 1: each replica's job (and whether its node drains).
  std::vector<Replica> kept;
  for (Replica& r : doc.replicas) {
    if (!r.job_id.empty()) {
      auto job = runner_.Inspect(project, r.job_id);
      if (!job.ok() && job.status().code() != StatusCode::kNotFound) return job.status();
      if (!job.ok() || job->ended) {
        if (r.state != kDraining) {
          notes.push_back("replica " + r.id +
                          " ended: " + (job.ok() ? job->reason : std::string("its job is gone")));
        }
        continue;
      }
      r.node_id = job->node_id;
      if (!job->address.empty()) r.address = job->address;
      if (!job->node_id.empty()) r.on_spot = job->on_spot;
      if (job->node_draining && !r.leaving && r.state != kDraining) {
        // A serving replica serves on until a replacement is ready (its worker stops it a
        // grace period before the drain's deadline); any other goes now.
        r.leaving = true;
        if (r.state == kReady && !deleting) {
          notes.push_back("replica " + r.id + ": its node " + r.node_id +
                          " is draining: replaced, serving until the replacement is ready");
        } else {
          notes.push_back("replica " + r.id + ": its node " + r.node_id +
                          " is draining: stopped, replaced");
          SetState(r, kDraining, now);
        }
      }
    }
    if (deleting && r.state != kDraining) SetState(r, kDraining, now);
    kept.push_back(std::move(r));
  }
  doc.replicas = std::move(kept);

  // 2: the checks, all at once (a server that answers late holds the tick for one timeout,
  // not one per replica), then what they say.
  std::vector<ProbeCall> calls;
  std::vector<Replica*> checked;
  for (Replica& r : doc.replicas) {
    const bool starting = r.state == kStarting || r.state == kWarming;
    if (starting && !r.address.empty()) {
      calls.push_back({r.address, health, kReadinessTimeout});
    } else if (r.state == kReady || r.state == kWarm) {
      calls.push_back({r.address, health, kLivenessTimeout});
    } else {
      continue;
    }
    checked.push_back(&r);
  }
  std::vector<bool> healthy = CheckAll(probe_, calls);
  std::map<const Replica*, bool> answered;
  for (size_t i = 0; i < checked.size(); ++i) answered[checked[i]] = healthy[i];
  for (Replica& r : doc.replicas) {
    auto it = answered.find(&r);
    const bool ok = it != answered.end() && it->second;
    if (r.state == kStarting || r.state == kWarming) {
      if (ok) {
        became_ready += r.state == kStarting && r.generation == doc.generation && !r.to_spot;
        SetState(r, r.state == kStarting ? kReady : kWarm, now);
      } else if (now - r.since > spec.engine.readiness.timeout_ms) {
        notes.push_back("replica " + r.id + " was not ready within " +
                        jobs::FormatDuration(spec.engine.readiness.timeout_ms) + ": stopped");
        SetState(r, kDraining, now);
      }
    } else if (r.state == kReady || r.state == kWarm) {
      if (ok) {
        r.failed_checks = 0;
      } else if (++r.failed_checks >= kLivenessFailures) {
        notes.push_back("replica " + r.id + " failed " + std::to_string(kLivenessFailures) +
                        " health checks in a row: out of rotation, stopped");
        SetState(r, kDraining, now);
      }
    }
  }

  if (!deleting) {
    // 6, first: a spot replica that joined the rotation takes the place of an on-demand one.
    for (Replica& r : doc.replicas) {
      if (!r.to_spot || r.state == kStarting) continue;
      r.to_spot = false;
      if (r.state != kReady) continue;
      if (Replica* on_demand = OnDemandReplica(doc)) {
        notes.push_back("replica " + on_demand->id +
                        " on on-demand capacity drained: spot replica " + r.id + " took its place");
        SetState(*on_demand, kDraining, now);
      }
    }
    // 4: a rolling update replaces the previous generation's replicas one for one. Its
    // warm pool and the replicas it was still starting go at once; each replica of this
    // generation that joins the rotation drains one that serves.
    Move(doc, Generation::kPrevious, {kWarming, kWarm, kStarting}, kDraining,
         static_cast<int>(doc.replicas.size()), now);
    // A replica of this generation that joins the rotation takes the place of one leaving a
    // draining node first, then of one of the previous generation.
    int taking_over = became_ready - Leave(doc, became_ready, now);
    // A warm replica takes one's place at once (the autoscaler refills the pool behind it).
    Leave(doc, Move(doc, Generation::kCurrent, {kWarm}, kReady, CountLeaving(doc), now), now);
    int leaving = CountLeaving(doc);
    int old_ready = Count(doc, Generation::kPrevious, kReady);
    old_ready -= Move(doc, Generation::kPrevious, {kReady}, kDraining,
                      std::min(old_ready, taking_over), now);

    // 3: the autoscaler, over this generation's replicas and those of the previous one that
    // still serve (those leaving a draining node included: they serve until replaced). The
    // replicas starting ahead of others, to take their places, are not counted: one for each
    // leaving a draining node, and while a rollout goes on, one ahead of the old generation
    // (surge one). They add nothing.
    ReplicaCounts counts;
    counts.ready = Count(doc, Generation::kCurrent, kReady) + old_ready + leaving;
    counts.starting = Count(doc, Generation::kCurrent, kStarting) - CountToSpot(doc);
    counts.warm = Count(doc, Generation::kCurrent, kWarm);
    counts.warming = Count(doc, Generation::kCurrent, kWarming);
    const int replacing = std::min(counts.starting, leaving);
    counts.starting -= replacing;
    const bool surging = old_ready > 0 && counts.starting > 0;
    counts.starting -= surging;
    const auto& history = Observe(view, now);
    std::vector<LoadSample> samples(history.begin(), history.end());
    ScalingDecision d = DecideScale(spec, samples, counts, now);
    Move(doc, Generation::kCurrent, {kWarm}, kReady, d.promote, now);
    Move(doc, Generation::kCurrent, {kReady}, kWarm, d.demote, now);
    // A scale-in takes the replicas leaving a draining node first, then the previous
    // generation's.
    int stopped = Leave(doc, d.stop_serving, now);
    leaving -= stopped;
    int stopped_old =
        Move(doc, Generation::kPrevious, {kReady}, kDraining, d.stop_serving - stopped, now);
    old_ready -= stopped_old;
    stopped += stopped_old;
    Move(doc, Generation::kCurrent, {kStarting, kReady}, kDraining, d.stop_serving - stopped, now);
    Move(doc, Generation::kCurrent, {kWarming, kWarm}, kDraining, d.stop_warm, now);
    const int surge = old_ready > 0 && !surging && d.start_serving == 0 ? 1 : 0;
    const int replacements = std::max(0, leaving - replacing);
    const int start_serving = d.start_serving + surge + replacements;
    for (int i = 0; i < start_serving + d.start_warm; ++i) {
      doc.replicas.push_back(NewReplica(doc, i < start_serving ? kStarting : kWarming, now));
    }
    const bool steady = !d.Changes() && start_serving == 0 && old_ready == 0 && leaving == 0;
    if (spec.spot == SpotPolicy::kPrefer && steady) StartSpotMove(record, doc, now, notes);
    if (d.Changes()) Note(doc, now, d.serving, d.warm, d.reason);
    if (surge > 0) {
      notes.push_back("rolling update to generation " + std::to_string(doc.generation) + ": " +
                      std::to_string(old_ready) +
                      " replica(s) of the previous one to replace, one at a time");
    }
  }
  // 5: what drains stops once its requests are answered; one never started just goes.
  std::erase_if(doc.replicas,
                [](const Replica& r) { return r.state == kDraining && r.job_id.empty(); });
  for (Replica& r : doc.replicas) {
    if (r.state != kDraining || r.stop_sent) continue;
    int in_flight = load_.InFlightOf(record.id, r.id);
    if (remote_) in_flight += remote_->InFlightOf(record.id, r.id);
    if (in_flight > 0 && now - r.since <= kDrainGraceMs) continue;
    Status stopped = runner_.Stop(project, r.job_id, "endpoint " + spec.name + ": drained");
    if (stopped.ok() || stopped.code() == StatusCode::kNotFound ||
        stopped.code() == StatusCode::kFailedPrecondition) {
      r.stop_sent = true;
    }
  }
  if (deleting && doc.replicas.empty()) {
    Status deleted = store_.endpoints().DeleteEndpoint(record.id, record.version);
    if (deleted.code() == StatusCode::kAborted) return OkStatus();  // changed: next tick
    history_.erase(record.id);
    return deleted;
  }

  int serving = 0, warm = 0;
  for (const Replica& r : doc.replicas) {
    serving += r.state == kReady || r.state == kStarting;
    warm += r.state == kWarm || r.state == kWarming;
  }
  for (std::string& note : notes) Note(doc, now, serving, warm, std::move(note));

  // The record first, then the jobs of new replicas (found again by name if a write is lost).
  // (A tick that changed nothing writes nothing: one that ticks every 100 ms while a replica
  // starts costs the store no writes while it waits.)
  auto write = [&]() -> Status {
    std::string text = EndpointDocToJson(doc).dump();
    if (text == view.record.doc_json) return OkStatus();
    int64_t read_version = view.record.version;
    view.record.version = read_version + 1;
    view.record.updated_at = now;
    view.record.doc_json = std::move(text);
    return store_.endpoints().UpdateEndpoint(view.record, read_version);
  };
  Status written = write();
  if (written.code() == StatusCode::kAborted) return OkStatus();  // changed meanwhile: next tick
  TF_RETURN_IF_ERROR(written);
  std::set<std::string> in_rotation_after;
  for (const Replica& r : doc.replicas) {
    if (r.state == kReady) in_rotation_after.insert(r.id);
    starting_ = starting_ || r.state == kStarting || r.state == kWarming;
  }
  rotation_changed_now_ = rotation_changed_now_ || in_rotation_after != in_rotation_before;
  bool changed = false;  // since the write
  std::string model_url;
  for (Replica& r : doc.replicas) {
    if (!r.job_id.empty() || r.state == kDraining) continue;
    changed = true;
    if (model_url.empty()) {
      auto url = runner_.ModelUrl(project, spec.model);
      if (!url.ok()) {
        Note(doc, now, serving, warm, "cannot start replicas: " + url.status().message());
        break;
      }
      model_url = *url;
    }
    jobs::JobSpec job_spec = ReplicaJobSpec(spec, r.id, model_url, r.key);
    if (r.to_spot) job_spec.capacity = jobs::CapacityType::kSpot;
    auto job = runner_.Start(project, job_spec);
    if (!job.ok()) {
      Note(doc, now, serving, warm, "cannot start replica " + r.id + ": " + job.status().message());
      break;
    }
    r.job_id = *job;
  }
  if (!changed) return OkStatus();
  written = write();
  return written.code() == StatusCode::kAborted ? OkStatus() : written;
}

void EndpointController::StartSpotMove(const store::EndpointRecord& record, EndpointDoc& doc,
                                       TimeMs now, std::vector<std::string>& notes) {
  const bool moving = std::any_of(doc.replicas.begin(), doc.replicas.end(),
                                  [](const Replica& r) { return r.to_spot; });
  const Replica* on_demand = OnDemandReplica(doc);
  if (on_demand == nullptr) {
    spot_checked_.erase(record.id);
    return;
  }
  if (moving) return;
  auto checked = spot_checked_.find(record.id);
  if (checked != spot_checked_.end() && now - checked->second < kSpotRecheckMs) return;
  spot_checked_[record.id] = now;
  const std::string on_demand_id = on_demand->id;
  jobs::JobSpec probe = ReplicaJobSpec(doc.spec, on_demand_id, doc.spec.model.location, "");
  probe.capacity = jobs::CapacityType::kSpot;
  auto room = runner_.WouldPlaceNow(record.project_id, probe);
  if (!room.ok()) {
    spdlog::warn("endpoint {}: is there spot capacity for a replica? {}", doc.spec.name,
                 room.status().ToString());
    return;
  }
  if (!*room) return;
  Replica r = NewReplica(doc, kStarting, now);
  r.to_spot = true;
  notes.push_back("replica " + on_demand_id +
                  " runs on on-demand capacity and spot capacity has room: spot replica " + r.id +
                  " starts to take its place");
  doc.replicas.push_back(std::move(r));
}

}  // namespace tf::endpoints
