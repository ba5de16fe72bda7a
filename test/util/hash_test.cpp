#include "util/hash.hpp"

#include <gtest/gtest.h>

namespace trainsim::util {
namespace {

// The FNV reference's test vectors (Fowler, Noll, Vo: FNV-1a, 64 bits).
TEST(HashTest, Fnv1a64MatchesTheReferenceVectors) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(HashTest, PiecesHashAsTheirConcatenation) {
  EXPECT_EQ(fnv1a64("bar", fnv1a64("foo")), fnv1a64("foobar"));
  // A byte above 0x7f counts as itself, not as a negative char.
  EXPECT_NE(fnv1a64("\xff"), fnv1a64("\x7f"));
}

TEST(HashTest, Hex64IsSixteenLowerCaseDigits) {
  EXPECT_EQ(hex64(0x85944171f73967e8ull), "85944171f73967e8");
  EXPECT_EQ(hex64(0), "0000000000000000");
  EXPECT_EQ(hex64(0xabc), "0000000000000abc");
}

}  // namespace
}  // namespace trainsim::util
