// When a service on a draining node is asked to stop (worker/drain_stop.h).
#include <gtest/gtest.h>

#include "worker/drain_stop.h"

namespace tf::testing {
namespace {

using std::chrono::milliseconds;

TEST(WorkerDrainStop, AServiceServesUntilItsGraceBeforeTheDeadline) {
  // A spot notice of two minutes, a replica's grace of 30 s: 90 s serving, 30 s to stop.
  auto stop = worker::ServiceDrainStop(milliseconds(120'000), milliseconds(30'000));
  EXPECT_EQ(stop.serve_for, milliseconds(90'000));
  EXPECT_EQ(stop.stop_within, milliseconds(30'000));
}

TEST(WorkerDrainStop, ADeadlineNearerThanTwiceTheGraceIsSplitInHalves) {
  // It used to be asked to stop at once, with nothing serving while its replacement started.
  auto stop = worker::ServiceDrainStop(milliseconds(10'000), milliseconds(30'000));
  EXPECT_EQ(stop.serve_for, milliseconds(5'000));
  EXPECT_EQ(stop.stop_within, milliseconds(5'000));
  stop = worker::ServiceDrainStop(milliseconds(60'000), milliseconds(30'000));
  EXPECT_EQ(stop.serve_for, milliseconds(30'000));
  EXPECT_EQ(stop.stop_within, milliseconds(30'000));
}

TEST(WorkerDrainStop, ADeadlineAlreadyPastStopsAtOnce) {
  auto stop = worker::ServiceDrainStop(milliseconds(0), milliseconds(30'000));
  EXPECT_EQ(stop.serve_for, milliseconds(0));
  EXPECT_EQ(stop.stop_within, milliseconds(0));
  stop = worker::ServiceDrainStop(milliseconds(-5), milliseconds(30'000));
  EXPECT_EQ(stop.serve_for, milliseconds(0));
}

}  // namespace
}  // namespace tf::testing
