// The autoscaler (endpoints/autoscaler.h): decisions from a load history on a fake clock, the
// history written out sample by sample as the gateway would record it.
#include <gtest/gtest.h>

#include <vector>

#include "endpoints/autoscaler.h"

namespace tf::endpoints {
namespace {

constexpr TimeMs kInterval = 5 * kSecondMs;  // the gateway's decision interval in these tests

EndpointSpec Spec(int min, int max, int target = 2) {
  EndpointSpec spec;
  spec.name = "chat";
  spec.model.location = "/m";
  spec.min_replicas = min;
  spec.max_replicas = max;
  spec.autoscaling.target = target;
  spec.autoscaling.upscale_delay_ms = 0;
  spec.autoscaling.downscale_delay_ms = kMinuteMs;
  spec.autoscaling.scale_to_zero_after_ms = 5 * kMinuteMs;
  return spec;
}

// A load history on a fake clock: one sample per interval.
class History {
 public:
  // `count` samples of the same load, the clock moving one interval before each.
  History& Add(int count, int in_flight, int queued = 0, int arrived = -1) {
    for (int i = 0; i < count; ++i) {
      now_ += kInterval;
      samples_.push_back(LoadSample{now_, arrived < 0 ? in_flight + queued : arrived, queued,
                                    in_flight, in_flight > 0 ? 1 : 0});
    }
    return *this;
  }
  History& Idle(TimeMs duration) { return Add(static_cast<int>(duration / kInterval), 0, 0, 0); }
  TimeMs now() const { return now_; }
  const std::vector<LoadSample>& samples() const { return samples_; }

 private:
  TimeMs now_ = 1'000'000;
  std::vector<LoadSample> samples_;
};

ScalingDecision Decide(const EndpointSpec& spec, const History& h, ReplicaCounts replicas) {
  return DecideScale(spec, h.samples(), replicas, h.now());
}

TEST(AutoscalerTest, ScalesOutWithinOneDecisionIntervalOfALoadStep) {
  EndpointSpec spec = Spec(1, 8);
  History h;
  h.Add(20, 1);  // steady: one request in flight
  EXPECT_EQ(Decide(spec, h, {.ready = 1}).serving, 1);
  h.Add(1, 6, 4);  // a step: 10 outstanding at a target of 2 each
  ScalingDecision d = Decide(spec, h, {.ready = 1});
  EXPECT_EQ(d.serving, 5);
  EXPECT_EQ(d.start_serving, 4);
  EXPECT_EQ(d.reason, "load above the target of 2 per replica: from 1 to 5");
}

TEST(AutoscalerTest, AnUpscaleDelayWaitsForLoadToHoldThatLong) {
  EndpointSpec spec = Spec(1, 8);
  spec.autoscaling.upscale_delay_ms = 30 * kSecondMs;
  History h;
  h.Add(20, 1).Add(2, 8);  // 10 s of load: not yet
  EXPECT_EQ(Decide(spec, h, {.ready = 1}).serving, 1);
  h.Add(4, 8);  // 30 s of it
  EXPECT_EQ(Decide(spec, h, {.ready = 1}).serving, 4);
  History spike;
  spike.Add(20, 1).Add(5, 8).Add(1, 1).Add(1, 8);  // a dip inside the window: hold
  EXPECT_EQ(Decide(spec, spike, {.ready = 1}).serving, 1);
}

TEST(AutoscalerTest, NeverAboveMaxNorBelowMin) {
  History h;
  h.Add(20, 100);
  EXPECT_EQ(Decide(Spec(1, 3), h, {.ready = 1}).serving, 3);
  EXPECT_EQ(Decide(Spec(1, 3), h, {.ready = 5}).serving, 3);
  EXPECT_EQ(Decide(Spec(1, 3), h, {.ready = 5}).stop_serving, 2);
  History idle;
  idle.Idle(10 * kMinuteMs);
  ScalingDecision d = Decide(Spec(2, 4), idle, {.ready = 1});
  EXPECT_EQ(d.serving, 2);
  EXPECT_EQ(d.reason, "below replicas.min: from 1 to 2");
}

TEST(AutoscalerTest, ScalesInOnlyAfterTheDownscaleDelayAndToTheWindowsPeak) {
  EndpointSpec spec = Spec(1, 8);
  History h;
  h.Add(20, 8);  // 4 replicas busy
  ReplicaCounts four{.ready = 4};
  h.Add(6, 2);  // 30 s of less load: not yet (the delay is a minute)
  EXPECT_EQ(Decide(spec, h, four).serving, 4);
  h.Add(3, 4).Add(3, 2);  // a minute below 4, peaking at 2 replicas' worth
  ScalingDecision d = Decide(spec, h, four);
  EXPECT_EQ(d.serving, 2);
  EXPECT_EQ(d.stop_serving, 2);
  EXPECT_EQ(d.reason, "load below the target of 2 per replica for 1m: from 4 to 2");
}

TEST(AutoscalerTest, LoadAroundTheTargetDoesNotFlap) {
  EndpointSpec spec = Spec(1, 8);
  History h;
  ReplicaCounts replicas{.ready = 2};
  int changes = 0;
  // The load swings between 3 and 4 outstanding (2 replicas' worth) and 2 (one's), every
  // interval, for ten minutes.
  for (int i = 0; i < 120; ++i) {
    h.Add(1, i % 2 == 0 ? 4 : 2);
    ScalingDecision d = Decide(spec, h, replicas);
    if (d.serving != replicas.ready) ++changes;
    replicas.ready = d.serving;
  }
  EXPECT_EQ(changes, 0);
  EXPECT_EQ(replicas.ready, 2);
}

TEST(AutoscalerTest, ScalesToZeroAfterIdleAndOnlyWithMinZero) {
  History h;
  h.Add(10, 2).Idle(4 * kMinuteMs);
  EXPECT_EQ(Decide(Spec(0, 4), h, {.ready = 1}).serving, 1);  // idle 4 minutes of 5
  h.Idle(kMinuteMs);
  ScalingDecision d = Decide(Spec(0, 4), h, {.ready = 1});
  EXPECT_EQ(d.serving, 0);
  EXPECT_EQ(d.stop_serving, 1);
  EXPECT_EQ(d.reason, "no request for 5m: from 1 to 0");
  EXPECT_EQ(Decide(Spec(1, 4), h, {.ready = 1}).serving, 1);
}

TEST(AutoscalerTest, ARequestThatCameAndWentBetweenSamplesKeepsAReplica) {
  History h;
  h.Idle(3 * kMinuteMs).Add(1, 0, 0, /*arrived=*/1).Idle(2 * kMinuteMs + 30 * kSecondMs);
  EXPECT_EQ(Decide(Spec(0, 4), h, {.ready = 1}).serving, 1);
}

TEST(AutoscalerTest, TheFirstQueuedRequestStartsAReplicaFromZeroAtOnce) {
  EndpointSpec spec = Spec(0, 4);
  spec.autoscaling.upscale_delay_ms = kMinuteMs;  // does not apply from zero
  History h;
  h.Idle(10 * kMinuteMs).Add(1, 0, 1);
  ScalingDecision d = Decide(spec, h, {});
  EXPECT_EQ(d.serving, 1);
  EXPECT_EQ(d.start_serving, 1);
  EXPECT_EQ(d.reason, "1 request waiting and no replica: from 0 to 1");
  h.Add(1, 0, 7);  // eight waiting by the next interval, the replica still starting
  EXPECT_EQ(Decide(spec, h, {.starting = 1}).serving, 1);  // the delay holds a scale-out
}

TEST(AutoscalerTest, AWarmReplicaIsPromotedBeforeAnyColdStart) {
  EndpointSpec spec = Spec(0, 4);
  spec.warm_pool = 1;
  History h;
  h.Idle(10 * kMinuteMs).Add(1, 0, 3);
  ScalingDecision d = Decide(spec, h, {.warm = 1});
  EXPECT_EQ(d.serving, 2);
  EXPECT_EQ(d.promote, 1);
  EXPECT_EQ(d.start_serving, 1);
  EXPECT_EQ(d.start_warm, 1);  // the pool is refilled behind it
  EXPECT_EQ(d.reason, "3 requests waiting and no replica: from 0 to 2 (1 warm replica promoted)");
}

TEST(AutoscalerTest, TheWarmPoolIsKeptAndRefilledFromReplicasLeavingRotation) {
  EndpointSpec spec = Spec(1, 4);
  spec.warm_pool = 2;
  History h;
  h.Add(20, 1);
  ScalingDecision steady = Decide(spec, h, {.ready = 1});
  EXPECT_EQ(steady.start_warm, 2);
  EXPECT_TRUE(steady.Changes());
  EXPECT_FALSE(Decide(spec, h, {.ready = 1, .warm = 1, .warming = 1}).Changes());
  ScalingDecision shrink = Decide(spec, h, {.ready = 3, .warm = 1});
  EXPECT_EQ(shrink.serving, 1);
  EXPECT_EQ(shrink.demote, 1);  // into the pool, which is one short
  EXPECT_EQ(shrink.stop_serving, 1);
  EXPECT_EQ(shrink.start_warm, 0);
  EXPECT_EQ(Decide(spec, h, {.ready = 1, .warm = 3}).stop_warm, 1);
}

TEST(AutoscalerTest, QueueDepthKeepsBusyReplicasAndAddsOnePerTargetWaiting) {
  EndpointSpec spec = Spec(1, 10, /*target=*/4);
  spec.autoscaling.metric = ScalingMetric::kQueueDepth;
  LoadSample s{.at = 0, .arrived = 0, .queued = 9, .in_flight = 6, .busy_replicas = 3};
  EXPECT_EQ(RecommendedReplicas(spec.autoscaling, s), 6);
  s.queued = 0;
  EXPECT_EQ(RecommendedReplicas(spec.autoscaling, s), 3);
  spec.autoscaling.metric = ScalingMetric::kOngoingRequests;
  EXPECT_EQ(RecommendedReplicas(spec.autoscaling, s), 2);
}

TEST(AutoscalerTest, AFreshHistoryHoldsTheCount) {
  EXPECT_EQ(DecideScale(Spec(1, 4), {}, {.ready = 2}, 0).serving, 2);
  History h;
  h.Add(2, 0);  // ten seconds of nothing: not enough to judge a one-minute window
  EXPECT_EQ(Decide(Spec(1, 4), h, {.ready = 2}).serving, 2);
}

}  // namespace
}  // namespace tf::endpoints
