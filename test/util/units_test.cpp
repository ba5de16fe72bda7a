#include "util/units.hpp"

#include <gtest/gtest.h>

namespace trainsim::util {
namespace {

TEST(UnitsTest, BandwidthBytesAndBits) {
  EXPECT_DOUBLE_EQ(parse_bandwidth("450GBps"), 450e9);   // G = 10^9 (SimGrid)
  EXPECT_DOUBLE_EQ(parse_bandwidth("400Gbps"), 50e9);    // bits: / 8
  EXPECT_DOUBLE_EQ(parse_bandwidth("1GiBps"), 0x1p30);   // Gi = 2^30
}

TEST(UnitsTest, SizesAndTimes) {
  EXPECT_DOUBLE_EQ(parse_size("80GB"), 80e9);
  EXPECT_DOUBLE_EQ(parse_size("80GiB"), 80 * 0x1p30);
  EXPECT_DOUBLE_EQ(parse_time("5us"), 5e-6);
  EXPECT_DOUBLE_EQ(parse_time("10min"), 600);
  EXPECT_DOUBLE_EQ(parse_time("2h"), 7200);
}

TEST(UnitsTest, BareNumbersAndNonFiniteValuesAreRejected) {
  EXPECT_THROW(parse_bandwidth("450"), UnitError);
  EXPECT_THROW(parse_size("nanGB"), UnitError);
  EXPECT_THROW(parse_time("infs"), UnitError);
  EXPECT_THROW(parse_bandwidth("0GBps"), UnitError);
  EXPECT_THROW(parse_bandwidth("1e400GBps"), UnitError);
  EXPECT_THROW(parse_bandwidth("450furlongs"), UnitError);
}

TEST(UnitsTest, ClosestMatchPrefersPrefixThenEditDistance) {
  const std::vector<std::string> gpus = {"a100-80gb", "h100-sxm", "h100-pcie", "h200"};
  EXPECT_EQ(closest_match("h100", gpus), "h100-sxm");  // prefix: the shortest candidate it starts
  EXPECT_EQ(closest_match("h20", gpus), "h200");
  EXPECT_EQ(closest_match("layer", {"layers", "hidden"}), "layers");  // edit distance 1
  EXPECT_EQ(closest_match("zzzzzz", {"layers", "hidden"}), "");       // nothing close
}

TEST(UnitsTest, Formatting) {
  EXPECT_EQ(format_bytes(80e9), "80.0 GB");
  EXPECT_EQ(format_duration(3 * 86400), "3.0 days");
  EXPECT_EQ(format_duration(0.0123), "12.30 ms");
}

TEST(UnitsTest, JoinPutsTheSeparatorBetweenItems) {
  EXPECT_EQ(join({"a", "b", "c"}), "a, b, c");
  EXPECT_EQ(join({"pp=2", "zero=3"}, " + "), "pp=2 + zero=3");
  EXPECT_EQ(join({"only"}), "only");
  EXPECT_EQ(join({}), "");
}

}  // namespace
}  // namespace trainsim::util
