// The endpoint controller (endpoints/endpoint_controller.h) tick by tick on a fake clock, over
// a real SQLite store, with the replicas' jobs and health checks behind its two interfaces so
// that each step is decided by the test: which jobs run where, which servers answer.
#include "endpoints/endpoint_controller.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "endpoints/endpoint_service.h"
#include "store_test_env.h"

namespace tf::endpoints {
namespace {

using testing::TempDir;

class FakeRunner final : public ReplicaRunner {
 public:
  Result<std::string> Start(const std::string&, const jobs::JobSpec& spec) override {
    std::string id = "job_" + std::to_string(++started_);
    jobs_[id] = ReplicaJob{false, "running", "running", "node_1",
                           "127.0.0.1:" + std::to_string(30000 + started_)};
    if (spec.capacity == jobs::CapacityType::kSpot) {
      jobs_[id].node_id = "spot_1";
      jobs_[id].on_spot = true;
    }
    specs_[id] = spec;
    return id;
  }
  Result<ReplicaJob> Inspect(const std::string&, const std::string& job_id) override {
    auto it = jobs_.find(job_id);
    if (it == jobs_.end()) return NotFound("no job " + job_id);
    return it->second;
  }
  Result<bool> WouldPlaceNow(const std::string&, const jobs::JobSpec& spec) override {
    ++spot_asked_;
    asked_capacity_ = spec.capacity;
    return spot_room_;
  }
  Status Stop(const std::string&, const std::string& job_id, const std::string&) override {
    stopped_.push_back(job_id);
    jobs_[job_id].ended = true;
    jobs_[job_id].reason = "cancelled";
    return OkStatus();
  }
  Result<std::string> ModelUrl(const std::string&, const ModelSource& source) override {
    if (source.kind == ModelSourceKind::kJobOutput) {
      return FailedPrecondition("model: no succeeded job named '" + source.location + "'");
    }
    return source.location;
  }

  int started_ = 0;
  int spot_asked_ = 0;
  bool spot_room_ = false;
  jobs::CapacityType asked_capacity_ = jobs::CapacityType::kAny;
  std::map<std::string, ReplicaJob> jobs_;
  std::map<std::string, jobs::JobSpec> specs_;
  std::vector<std::string> stopped_;
};

class FakeProbe final : public ReplicaProbe {
 public:
  bool Healthy(const std::string& address, const std::string&, std::chrono::milliseconds) override {
    return !down_.count(address) && up_;
  }
  bool up_ = true;
  std::set<std::string> down_;
};

class EndpointControllerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto opened = store::OpenStore((dir_.path() / "store.db").string());
    ASSERT_TRUE(opened.ok()) << opened.status().ToString();
    store_ = std::move(opened).value();
    clock_.Set(1'000'000'000);
    service_ = std::make_unique<EndpointService>(*store_, clock_);
    controller_ = std::make_unique<EndpointController>(*store_, runner_, probe_, load_, clock_,
                                                       [this] { ++rotation_changes_; });
  }

  EndpointSpec Spec(int min, int max) {
    EndpointSpec spec;
    spec.name = "chat";
    spec.model.location = "/models/tiny";
    spec.min_replicas = min;
    spec.max_replicas = max;
    return spec;
  }

  void Apply(const EndpointSpec& spec) { ASSERT_TRUE(service_->Apply("prj_a", spec).ok()); }

  // One tick, a second after the last.
  void Tick() {
    clock_.Advance(kSecondMs);
    Status s = controller_->Tick();
    EXPECT_TRUE(s.ok()) << s.ToString();
  }

  EndpointDoc Doc() {
    auto view = service_->Get("prj_a", "chat");
    EXPECT_TRUE(view.ok()) << view.status().ToString();
    return view.ok() ? view->doc : EndpointDoc{};
  }

  std::vector<std::string> States() {
    std::vector<std::string> out;
    for (const Replica& r : Doc().replicas) {
      out.push_back(r.state + "@" + std::to_string(r.generation));
    }
    return out;
  }

  TempDir dir_;
  std::unique_ptr<store::Store> store_;
  FakeClock clock_;
  FakeRunner runner_;
  FakeProbe probe_;
  LoadBoard load_;
  std::unique_ptr<EndpointService> service_;
  std::unique_ptr<EndpointController> controller_;
  int rotation_changes_ = 0;
};

using Want = std::vector<std::string>;

TEST_F(EndpointControllerTest, TheMinimumStartsAsJobsThatServeOnceHealthy) {
  Apply(Spec(2, 4));
  probe_.up_ = false;
  Tick();
  EXPECT_EQ(States(), (Want{"starting@1", "starting@1"}));
  ASSERT_EQ(runner_.started_, 2);
  const jobs::JobSpec& job = runner_.specs_.begin()->second;
  EXPECT_TRUE(job.name.starts_with("chat-")) << job.name;
  EXPECT_NE(job.command[2].find("engine serve --model '/models/tiny'"), std::string::npos);
  EXPECT_FALSE(job.retry.on_error);
  EXPECT_EQ(job.drain_grace_ms, 30'000) << "a replica serves on while its node drains";
  // Each replica has a key of its own, in its job's environment and nowhere on a command line.
  const std::string key = Doc().replicas[0].key;
  EXPECT_EQ(key.size(), 32u);
  EXPECT_NE(key, Doc().replicas[1].key);
  EXPECT_EQ(runner_.specs_["job_1"].env.at("TENSORFLEET_ENGINE_API_KEY"), key);
  EXPECT_EQ(job.command[2].find(key), std::string::npos);
  EXPECT_TRUE(controller_->starting()) << "its caller ticks sooner while replicas start";
  Tick();  // not healthy yet: still starting, nothing more started
  EXPECT_EQ(runner_.started_, 2);
  EXPECT_EQ(rotation_changes_, 0);
  probe_.up_ = true;
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1", "ready@1"}));
  EXPECT_FALSE(controller_->starting());
  EXPECT_EQ(rotation_changes_, 1) << "the gateway's routes are refreshed at once";
  const int64_t version = service_->Get("prj_a", "chat")->record.version;
  Tick();
  EXPECT_EQ(rotation_changes_, 1);
  EXPECT_EQ(service_->Get("prj_a", "chat")->record.version, version)
      << "a tick that changes nothing writes nothing";
  EXPECT_EQ(Doc().replicas[0].address, "127.0.0.1:30001");
  EXPECT_EQ(Doc().scaling.front().reason, "below replicas.min: from 0 to 2");
}

TEST_F(EndpointControllerTest, AReplicaWhoseJobEndedIsReplaced) {
  Apply(Spec(1, 1));
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1"}));
  std::string first = Doc().replicas[0].id;
  runner_.jobs_["job_1"].ended = true;
  runner_.jobs_["job_1"].reason = "killed by signal 9";
  Tick();
  EndpointDoc doc = Doc();
  ASSERT_EQ(doc.replicas.size(), 1u);
  EXPECT_NE(doc.replicas[0].id, first);
  EXPECT_EQ(doc.replicas[0].job_id, "job_2");
  EXPECT_EQ(doc.scaling.back().reason.find("replica " + first + " ended: killed by signal 9"), 0u)
      << doc.scaling.back().reason;
}

bool Said(const EndpointDoc& doc, const std::string& reason) {
  for (const ScalingEvent& e : doc.scaling) {
    if (e.reason == reason) return true;
  }
  return false;
}

TEST_F(EndpointControllerTest, AReplicaOnADrainingNodeServesUntilItsReplacementIsReady) {
  Apply(Spec(1, 1));
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1"}));
  std::string first = Doc().replicas[0].id;
  runner_.jobs_["job_1"].node_draining = true;
  probe_.down_.insert("127.0.0.1:30002");  // the replacement takes a while to load
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1", "starting@1"})) << "the replacement starts at once";
  EXPECT_TRUE(Doc().replicas[0].leaving);
  EXPECT_EQ(runner_.started_, 2);
  EXPECT_TRUE(runner_.stopped_.empty()) << "it serves on meanwhile";
  EXPECT_TRUE(Said(Doc(), "replica " + first +
                              ": its node node_1 is draining: replaced, serving until the "
                              "replacement is ready"));
  Tick();
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1", "starting@1"}));
  EXPECT_EQ(runner_.started_, 2) << "one replacement, not one a tick";
  probe_.down_.clear();
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@1"}));
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"}) << "no request in flight";
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1"}));
  EXPECT_EQ(runner_.started_, 2);
}

TEST_F(EndpointControllerTest, AWarmReplicaTakesADrainingNodesReplicasPlaceAtOnce) {
  EndpointSpec spec = Spec(1, 2);
  spec.warm_pool = 1;
  Apply(spec);
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1", "warm@1"}));
  runner_.jobs_["job_1"].node_draining = true;
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@1", "warming@1"}))
      << "promoted, and the pool refilled behind it";
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
}

TEST_F(EndpointControllerTest, AStartingReplicaOnADrainingNodeGoesAtOnce) {
  Apply(Spec(1, 1));
  probe_.up_ = false;
  Tick();
  ASSERT_EQ(States(), (Want{"starting@1"}));
  runner_.jobs_["job_1"].node_draining = true;
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "starting@1"}));
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
}

// A probe whose every check waits until `want` checks are under way at once (or 10 s): healthy
// only if the controller makes them together.
class GatheringProbe final : public ReplicaProbe {
 public:
  explicit GatheringProbe(int want) : want_(want) {}
  bool Healthy(const std::string&, const std::string&, std::chrono::milliseconds) override {
    std::unique_lock lock(mu_);
    ++arrived_;
    cv_.notify_all();
    return cv_.wait_for(lock, std::chrono::seconds(10), [&] { return arrived_ >= want_; });
  }

 private:
  const int want_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
};

TEST_F(EndpointControllerTest, ChecksOfSeveralReplicasAreMadeAtOnce) {
  GatheringProbe together(3);
  EndpointController controller(*store_, runner_, together, load_, clock_);
  Apply(Spec(3, 3));
  clock_.Advance(kSecondMs);
  ASSERT_TRUE(controller.Tick().ok());  // starts them
  clock_.Advance(kSecondMs);
  ASSERT_TRUE(controller.Tick().ok());  // checks all three at once
  EXPECT_EQ(States(), (Want{"ready@1", "ready@1", "ready@1"}));
}

TEST_F(EndpointControllerTest, ThreeFailedChecksInARowTakeAReplicaOutAndStopIt) {
  Apply(Spec(1, 1));
  Tick();
  Tick();
  std::string address = Doc().replicas[0].address;
  probe_.down_.insert(address);
  Tick();
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1"}));  // two failures: still in rotation
  probe_.down_.clear();
  Tick();  // one success resets the count
  probe_.down_.insert(address);
  Tick();
  Tick();
  EXPECT_TRUE(runner_.stopped_.empty());
  Tick();
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
  EXPECT_EQ(States(), (Want{"draining@1", "starting@1"}));
  Tick();  // the stopped job has ended: its replica is gone; the new one is ready
  EXPECT_EQ(States(), (Want{"ready@1"}));
}

TEST_F(EndpointControllerTest, AReplicaNotReadyWithinTheReadinessTimeoutIsStopped) {
  EndpointSpec spec = Spec(1, 1);
  spec.engine.readiness.timeout_ms = 5 * kSecondMs;
  Apply(spec);
  probe_.up_ = false;
  for (int i = 0; i < 6; ++i) Tick();
  EXPECT_TRUE(runner_.stopped_.empty());
  Tick();
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
  EXPECT_NE(Doc().scaling.back().reason.find("was not ready within 5s: stopped"), std::string::npos)
      << Doc().scaling.back().reason;
}

TEST_F(EndpointControllerTest, AnUpdateRollsTheNewGenerationInBeforeTheOldDrains) {
  Apply(Spec(1, 2));
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1"}));
  EndpointSpec changed = Spec(1, 2);
  changed.engine.max_batch = 4;
  probe_.up_ = false;  // the new generation's server takes a while
  Apply(changed);
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1", "starting@2"}));
  Tick();
  EXPECT_TRUE(runner_.stopped_.empty()) << "the old replica must serve until the new one does";
  probe_.up_ = true;
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@2"}));
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
  Tick();
  EXPECT_EQ(States(), (Want{"ready@2"}));
}

TEST_F(EndpointControllerTest, AnUpdateReplacesReplicasOneForOneWithOneSurgeReplica) {
  Apply(Spec(3, 3));
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1", "ready@1", "ready@1"}));
  EndpointSpec changed = Spec(3, 3);
  changed.engine.max_batch = 4;
  probe_.up_ = false;
  Apply(changed);
  Tick();
  EXPECT_EQ(States(), (Want{"ready@1", "ready@1", "ready@1", "starting@2"}));
  Tick();  // nothing more starts while the one surge replica is not ready
  EXPECT_EQ(runner_.started_, 4);
  probe_.up_ = true;
  Tick();  // it serves: one old one drains, the next new one starts
  EXPECT_EQ(States(), (Want{"draining@1", "ready@1", "ready@1", "ready@2", "starting@2"}));
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@1", "ready@2", "ready@2", "starting@2"}));
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@2", "ready@2", "ready@2"}));
  Tick();
  EXPECT_EQ(States(), (Want{"ready@2", "ready@2", "ready@2"}));
  EXPECT_EQ(runner_.started_, 6);
  EXPECT_EQ(runner_.stopped_.size(), 3u);
}

TEST_F(EndpointControllerTest, ADrainingReplicaIsStoppedOnlyOnceItsRequestsAreAnswered) {
  Apply(Spec(1, 2));
  Tick();
  Tick();
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  std::string old = Doc().replicas[0].id;
  load_.InFlight(endpoint_id, old, +1);  // a long request on the old replica
  EndpointSpec changed = Spec(1, 2);
  changed.engine.max_batch = 4;
  Apply(changed);
  Tick();
  Tick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@2"}));
  EXPECT_TRUE(runner_.stopped_.empty());
  load_.InFlight(endpoint_id, old, -1);
  Tick();
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
}

TEST_F(EndpointControllerTest, ScalesOutOnTheGatewaysLoadAndToZeroWhenIdle) {
  EndpointSpec spec = Spec(0, 3);
  spec.autoscaling.scale_to_zero_after_ms = 10 * kSecondMs;
  Apply(spec);
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  Tick();
  EXPECT_TRUE(States().empty());
  load_.Arrived(endpoint_id);
  load_.Queued(endpoint_id, +5);  // five requests wait at an endpoint with no replica
  Tick();
  EXPECT_EQ(States(), (Want{"starting@1", "starting@1", "starting@1"}));
  EXPECT_EQ(Doc().scaling.back().reason, "5 requests waiting and no replica: from 0 to 3");
  load_.Queued(endpoint_id, -5);
  // The sample after the queue emptied still holds its peak; idle counts from the next.
  for (int i = 0; i < 10; ++i) Tick();
  EXPECT_EQ(Doc().replicas.size(), 3u);  // idle for less than 10 s
  Tick();
  Tick();
  EXPECT_TRUE(States().empty()) << Doc().scaling.back().reason;
  EXPECT_EQ(runner_.stopped_.size(), 3u);
}

// Several servers share the store: requests come through another server's gateway, whose
// load reaches this (the leading) server's controller through the store.
class EndpointControllerWithPeersTest : public EndpointControllerTest {
 protected:
  void SetUp() override {
    EndpointControllerTest::SetUp();
    controller_->CountRemoteLoad(
        std::make_unique<RemoteLoad>(store_->endpoints(), clock_, "srv_leader"));
    peer_ = std::make_unique<LoadPublisher>(store_->endpoints(), peer_load_, clock_, "srv_peer");
  }
  // The peer publishes what its gateway saw, then the leader ticks.
  void PublishAndTick() {
    Status published = peer_->Publish();
    EXPECT_TRUE(published.ok()) << published.ToString();
    Tick();
  }

  LoadBoard peer_load_;  // the other server's gateway
  std::unique_ptr<LoadPublisher> peer_;
};

TEST_F(EndpointControllerWithPeersTest, ScalesFromZeroAndBackOnAnotherServersRequests) {
  EndpointSpec spec = Spec(0, 3);
  spec.autoscaling.scale_to_zero_after_ms = 10 * kSecondMs;
  Apply(spec);
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  PublishAndTick();
  EXPECT_TRUE(States().empty());
  peer_load_.Arrived(endpoint_id);
  peer_load_.Queued(endpoint_id, +5);  // waiting at the peer, none here
  PublishAndTick();
  EXPECT_EQ(States(), (Want{"starting@1", "starting@1", "starting@1"}));
  EXPECT_EQ(Doc().scaling.back().reason, "5 requests waiting and no replica: from 0 to 3");
  peer_load_.Queued(endpoint_id, -5);
  for (int i = 0; i < 11; ++i) PublishAndTick();
  EXPECT_EQ(Doc().replicas.size(), 3u);  // idle for less than 10 s
  PublishAndTick();
  PublishAndTick();
  EXPECT_TRUE(States().empty()) << Doc().scaling.back().reason;
}

TEST_F(EndpointControllerWithPeersTest, BothServersLoadsAddUp) {
  Apply(Spec(0, 4));  // 2 ongoing requests per replica
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  load_.Arrived(endpoint_id);
  load_.Queued(endpoint_id, +3);
  peer_load_.Arrived(endpoint_id);
  peer_load_.Queued(endpoint_id, +3);
  PublishAndTick();
  EXPECT_EQ(Doc().replicas.size(), 3u) << "6 waiting at 2 per replica; 3 here alone would be 2";
}

TEST_F(EndpointControllerWithPeersTest, APeerThatStopsPublishingStopsCounting) {
  Apply(Spec(0, 3));
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  peer_load_.Arrived(endpoint_id);
  peer_load_.Queued(endpoint_id, +1);
  ASSERT_TRUE(peer_->Publish().ok());
  // Its row is counted while fresh, then not: after kLoadFreshMs the peer counts for nothing.
  RemoteLoad remote(store_->endpoints(), clock_, "srv_leader");
  ASSERT_TRUE(remote.Refresh().ok());
  LoadSample fresh = remote.Combine(endpoint_id, LoadSample{}, {});
  EXPECT_EQ(fresh.queued, 1);
  EXPECT_EQ(fresh.arrived, 1);
  EXPECT_EQ(remote.Combine(endpoint_id, LoadSample{}, {}).arrived, 0) << "arrivals count once";
  clock_.Advance(kLoadFreshMs + 1);
  ASSERT_TRUE(remote.Refresh().ok());
  EXPECT_EQ(remote.Combine(endpoint_id, LoadSample{}, {}).queued, 0);
}

TEST_F(EndpointControllerWithPeersTest, APeerWritesOnlyWhatChangedAndWithdrawsWhenIdle) {
  auto rows = [&] {
    auto listed = store_->endpoints().ListEndpointLoads(0);
    EXPECT_TRUE(listed.ok()) << listed.status().ToString();
    return listed.ok() ? *listed : std::vector<store::EndpointLoadRecord>{};
  };
  ASSERT_TRUE(peer_->Publish().ok());
  EXPECT_TRUE(rows().empty()) << "an idle server writes nothing";
  peer_load_.Arrived("ep_1");
  peer_load_.Queued("ep_1", +1);
  const TimeMs t0 = clock_.Now();
  ASSERT_TRUE(peer_->Publish().ok());
  ASSERT_EQ(rows().size(), 1u);
  EXPECT_EQ(rows()[0].server_id, "srv_peer");
  EXPECT_EQ(rows()[0].queued, 1);
  clock_.Advance(100);
  ASSERT_TRUE(peer_->Publish().ok());
  EXPECT_EQ(rows()[0].updated_at, t0) << "unchanged: not written again";
  clock_.Advance(kLoadRepublishMs);
  ASSERT_TRUE(peer_->Publish().ok());
  EXPECT_EQ(rows()[0].updated_at, t0 + 100 + kLoadRepublishMs) << "kept fresh while it lasts";
  peer_load_.Queued("ep_1", -1);
  for (int i = 0; i < 3; ++i) {
    clock_.Advance(kLoadRepublishMs);
    ASSERT_TRUE(peer_->Publish().ok());
  }
  EXPECT_TRUE(rows().empty()) << "withdrawn once idle";
  EXPECT_FALSE(peer_->active());
}

TEST_F(EndpointControllerWithPeersTest, ADrainingReplicaWaitsForRequestsInFlightThroughAPeer) {
  Apply(Spec(1, 2));
  Tick();
  Tick();
  std::string endpoint_id = service_->Get("prj_a", "chat")->record.id;
  std::string old = Doc().replicas[0].id;
  peer_load_.Arrived(endpoint_id);
  peer_load_.InFlight(endpoint_id, old, +1);  // a long request through the peer
  EndpointSpec changed = Spec(1, 2);
  changed.engine.max_batch = 4;
  Apply(changed);
  PublishAndTick();
  PublishAndTick();
  EXPECT_EQ(States(), (Want{"draining@1", "ready@2"}));
  EXPECT_TRUE(runner_.stopped_.empty());
  peer_load_.InFlight(endpoint_id, old, -1);
  PublishAndTick();
  EXPECT_EQ(runner_.stopped_, std::vector<std::string>{"job_1"});
}

TEST_F(EndpointControllerTest, DeletingStopsEveryReplicaThenForgetsTheEndpoint) {
  Apply(Spec(2, 2));
  Tick();
  Tick();
  bool removed = true;
  ASSERT_TRUE(service_->Delete("prj_a", "chat", &removed).ok());
  EXPECT_FALSE(removed);  // it has replicas
  Tick();
  EXPECT_EQ(runner_.stopped_.size(), 2u);
  Tick();
  EXPECT_EQ(service_->Get("prj_a", "chat").status().code(), StatusCode::kNotFound);
}

TEST_F(EndpointControllerTest, AModelThatCannotBeFoundIsSaidWhyAndRetried) {
  EndpointSpec spec = Spec(1, 1);
  spec.model = {ModelSourceKind::kJobOutput, "train"};
  Apply(spec);
  Tick();
  EXPECT_EQ(runner_.started_, 0);
  EXPECT_EQ(Doc().scaling.back().reason,
            "cannot start replicas: model: no succeeded job named 'train'");
  EXPECT_EQ(States(), (Want{"starting@1"}));  // recorded, waiting for its model
}

}  // namespace
}  // namespace tf::endpoints

namespace tf::endpoints {
namespace {

TEST(LoadBoardTest, ABurstBetweenTwoSamplesIsSeenAtItsPeak) {
  LoadBoard board;
  for (int i = 0; i < 6; ++i) {
    board.Arrived("ep");
    board.Queued("ep", +1);
  }
  board.Queued("ep", -6);  // all six taken by replicas...
  for (int i = 0; i < 6; ++i) board.InFlight("ep", i % 2 ? "r1" : "r2", +1);
  board.InFlight("ep", "r1", -3);  // ...and r1's answered, before the sample
  LoadSample s = board.Sample("ep", 1000);
  EXPECT_EQ(s.at, 1000);
  EXPECT_EQ(s.arrived, 6);
  EXPECT_EQ(s.queued, 6);
  EXPECT_EQ(s.in_flight, 6);
  EXPECT_EQ(s.busy_replicas, 1);  // r2, now
  EXPECT_EQ(board.InFlightOf("ep", "r2"), 3);
  EXPECT_EQ(board.InFlightOf("ep", "r1"), 0);
  LoadSample next = board.Sample("ep", 2000);  // the burst is over: only what is left counts
  EXPECT_EQ(next.arrived, 0);
  EXPECT_EQ(next.queued, 0);
  EXPECT_EQ(next.in_flight, 3);
}

// Under `spot: prefer`, a replica that fell back to on-demand capacity moves back once spot has
// room: a spot replica starts beside it, and the on-demand one drains when it is ready.
TEST_F(EndpointControllerTest, AnOnDemandFallbackMovesBackToSpotWhenSpotHasRoom) {
  EndpointSpec spec = Spec(1, 1);
  spec.spot = SpotPolicy::kPrefer;
  Apply(spec);
  Tick();
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1"}));
  const std::string on_demand = Doc().replicas[0].id;
  EXPECT_FALSE(Doc().replicas[0].on_spot);
  EXPECT_EQ(runner_.spot_asked_, 1) << "asked once it serves on on-demand";
  EXPECT_EQ(runner_.asked_capacity_, jobs::CapacityType::kSpot);
  Tick();
  EXPECT_EQ(runner_.spot_asked_, 1) << "not again before kSpotRecheckMs";

  runner_.spot_room_ = true;
  clock_.Advance(kSpotRecheckMs);
  probe_.down_.insert("127.0.0.1:30002");  // the spot replica takes a while to load
  Tick();
  EXPECT_EQ(runner_.spot_asked_, 2);
  ASSERT_EQ(States(), (Want{"ready@1", "starting@1"}));
  EXPECT_TRUE(Doc().replicas[1].to_spot);
  EXPECT_EQ(runner_.specs_["job_2"].capacity, jobs::CapacityType::kSpot) << "pinned to spot";
  const std::string spot = Doc().replicas[1].id;
  EXPECT_TRUE(Said(Doc(), "replica " + on_demand +
                              " runs on on-demand capacity and spot capacity has room: spot "
                              "replica " +
                              spot + " starts to take its place"));
  clock_.Advance(kSpotRecheckMs);
  Tick();
  EXPECT_EQ(runner_.started_, 2) << "one move at a time, and the autoscaler does not count it";
  EXPECT_TRUE(runner_.stopped_.empty()) << "the on-demand replica serves meanwhile";

  probe_.down_.clear();
  Tick();
  EXPECT_EQ(runner_.stopped_, (std::vector<std::string>{"job_1"}));
  EXPECT_TRUE(Said(Doc(), "replica " + on_demand + " on on-demand capacity drained: spot replica " +
                              spot + " took its place"));
  Tick();
  ASSERT_EQ(States(), (Want{"ready@1"}));
  EXPECT_EQ(Doc().replicas[0].id, spot);
  EXPECT_TRUE(Doc().replicas[0].on_spot);
  EXPECT_FALSE(Doc().replicas[0].to_spot);
  clock_.Advance(kSpotRecheckMs);
  Tick();
  EXPECT_EQ(runner_.spot_asked_, 2) << "nothing left on on-demand to ask for";
  EXPECT_EQ(runner_.started_, 2);
}

TEST_F(EndpointControllerTest, OnlySpotPreferMovesReplicas) {
  EndpointSpec spec = Spec(1, 1);
  spec.spot = SpotPolicy::kNever;
  runner_.spot_room_ = true;
  Apply(spec);
  for (int i = 0; i < 3; ++i) {
    Tick();
    clock_.Advance(kSpotRecheckMs);
  }
  EXPECT_EQ(States(), (Want{"ready@1"}));
  EXPECT_EQ(runner_.spot_asked_, 0);
  EXPECT_EQ(runner_.started_, 1);
}

}  // namespace
}  // namespace tf::endpoints
