// The balancer (endpoints/balancer.h): power of two choices and prefix affinity.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "endpoints/balancer.h"

namespace tf::endpoints {
namespace {

TEST(BalancerTest, NoReplicaNoChoiceOneReplicaThatOne) {
  EXPECT_FALSE(PickReplica({}, 42).has_value());
  std::vector<Candidate> one{{"r1", 7}};
  EXPECT_EQ(PickReplica(one, 42), 0u);
}

TEST(BalancerTest, TheLessLoadedOfTheTwoDrawnWins) {
  std::vector<Candidate> c{{"r0", 5}, {"r1", 1}, {"r2", 9}};
  // random's high half picks the first (index 0), its low half the second among the others
  // (0 -> r1, 1 -> r2).
  EXPECT_EQ(PickReplica(c, (uint64_t{0} << 32) | 0), 1u);
  EXPECT_EQ(PickReplica(c, (uint64_t{0} << 32) | 1), 0u);
  EXPECT_EQ(PickReplica(c, (uint64_t{2} << 32) | 0), 0u);
}

TEST(BalancerTest, TheTwoDrawnAreAlwaysDistinctAndEveryPairComesUp) {
  std::vector<Candidate> c{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}};
  std::mt19937_64 rng(7);
  std::map<size_t, int> picks;
  for (int i = 0; i < 4000; ++i) ++picks[*PickReplica(c, rng())];
  ASSERT_EQ(picks.size(), 4u);
  for (const auto& [index, count] : picks) EXPECT_GT(count, 800) << index;
}

TEST(BalancerTest, SpreadsLoadEvenlyWhenRequestsStayOutstanding) {
  std::vector<std::string> ids{"a", "b", "c", "d", "e"};
  std::vector<Candidate> c;
  for (const auto& id : ids) c.push_back({id, 0});
  std::mt19937_64 rng(11);
  for (int i = 0; i < 500; ++i) ++c[*PickReplica(c, rng())].outstanding;
  int lo = 1 << 30, hi = 0;
  for (const Candidate& x : c) {
    lo = std::min(lo, x.outstanding);
    hi = std::max(hi, x.outstanding);
  }
  EXPECT_LE(hi - lo, 3);  // power of two choices: the gap stays small
}

TEST(BalancerTest, APrefixKeepsItsReplicaWhileItIsNotMuchBusier) {
  std::vector<Candidate> c{{"r0", 0}, {"r1", 0}, {"r2", 0}};
  uint64_t prefix = PrefixHash("You are a helpful assistant.", 256);
  size_t home = AffinityReplica(c, prefix);
  std::mt19937_64 rng(3);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(PickReplica(c, rng(), prefix), home);
  c[home].outstanding = 3;  // busier than the others by more than the slack of 2
  for (int i = 0; i < 50; ++i) EXPECT_NE(PickReplica(c, rng(), prefix), home);
}

TEST(BalancerTest, OnlyThePrefixesOfAReplicaThatLeavesMove) {
  std::vector<Candidate> all{{"r0", 0}, {"r1", 0}, {"r2", 0}, {"r3", 0}};
  std::vector<Candidate> without_r2{{"r0", 0}, {"r1", 0}, {"r3", 0}};
  int moved = 0, stayed = 0;
  for (int i = 0; i < 400; ++i) {
    uint64_t prefix = PrefixHash("prompt " + std::to_string(i), 256);
    std::string_view before = all[AffinityReplica(all, prefix)].id;
    std::string_view after = without_r2[AffinityReplica(without_r2, prefix)].id;
    if (before == "r2") {
      ++moved;
    } else {
      EXPECT_EQ(before, after) << i;
      ++stayed;
    }
  }
  EXPECT_GT(moved, 50);  // about a quarter lived on r2
  EXPECT_GT(stayed, 250);
}

TEST(BalancerTest, PrefixHashReadsOnlyThePrefix) {
  EXPECT_EQ(PrefixHash("system prompt, then question A", 13),
            PrefixHash("system prompt, then question B", 13));
  EXPECT_NE(PrefixHash("system prompt A", 64), PrefixHash("system prompt B", 64));
}

}  // namespace
}  // namespace tf::endpoints
