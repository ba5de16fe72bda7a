#include "parallel/schedule.hpp"

#include <gtest/gtest.h>

#include <set>
#include <tuple>

namespace trainsim::parallel {
namespace {

using model::Schedule;

TEST(ScheduleTest, OneFOneBWarmupIsPMinusRankMinusOne) {
  // Narayanan et al. SC21 Fig. 4: rank r runs p-1-r warm-up forwards, then alternates.
  auto plan = build_schedule(Schedule::k1F1B, 4, 6, 1);
  EXPECT_EQ(to_string(plan[0]), "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5");
  EXPECT_EQ(to_string(plan[3]), "F0 B0 F1 B1 F2 B2 F3 B3 F4 B4 F5 B5");
}

TEST(ScheduleTest, OneFOneBWithFewerMicroBatchesThanStages) {
  auto plan = build_schedule(Schedule::k1F1B, 4, 2, 1);
  EXPECT_EQ(to_string(plan[0]), "F0 F1 B0 B1");
}

TEST(ScheduleTest, GpipeRunsAllForwardsFirst) {
  auto plan = build_schedule(Schedule::kGpipe, 2, 3, 1);
  EXPECT_EQ(to_string(plan[1]), "F0 F1 F2 B0 B1 B2");
}

TEST(ScheduleTest, InterleavedFollowsMegatronOrder) {
  // p=2, m=4, v=2, rank 0: warm-up = (p-1-0)*2 + (v-1)*p = 4 forwards: mb 0,1 on chunk 0, then
  // mb 0,1 on chunk 1; backwards start on the last chunk.
  auto plan = build_schedule(Schedule::kInterleaved, 2, 4, 2);
  EXPECT_EQ(to_string(plan[0], 2), "F0.0 F1.0 F0.1 F1.1 F2.0 B0.1 F3.0 B1.1 F2.1 B0.0 F3.1 B1.0 B2.1 B3.1 B2.0 B3.0");
}

TEST(ScheduleTest, EveryOpOnceAndBackwardAfterForward) {
  for (auto s : {Schedule::kGpipe, Schedule::k1F1B, Schedule::kInterleaved}) {
    const int64_t p = 4, m = 8, v = s == Schedule::kInterleaved ? 3 : 1;
    auto plan = build_schedule(s, p, m, v);
    for (const auto& ops : plan) {
      ASSERT_EQ(ops.size(), static_cast<size_t>(2 * m * v));  // m*v forwards + m*v backwards
      std::set<std::tuple<int, int64_t, int64_t>> seen;
      for (const auto& op : ops) {
        if (op.pass == Pass::kBackward) {
          EXPECT_TRUE(seen.count({0, op.micro_batch, op.chunk})) << "backward before its forward";
        }
        EXPECT_TRUE(seen.insert({op.pass == Pass::kForward ? 0 : 1, op.micro_batch, op.chunk}).second);
      }
    }
  }
}

TEST(ScheduleTest, IdealBubbleFraction) {
  // Megatron SC21: (p-1)/m, divided by v when interleaved.
  EXPECT_DOUBLE_EQ(ideal_bubble_fraction(Schedule::k1F1B, 16, 16, 1), 15.0 / 16.0);
  EXPECT_DOUBLE_EQ(ideal_bubble_fraction(Schedule::kInterleaved, 4, 8, 2), 3.0 / 16.0);
}

}  // namespace
}  // namespace trainsim::parallel
