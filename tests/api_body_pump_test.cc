// PumpPieceFor: how much of a request body one piece of an upload takes.
#include <gtest/gtest.h>

#include "api/body_pump.h"

namespace tf::api {
namespace {

TEST(PumpPieceTest, ABodyOfKnownLengthTakesItsSizeUpToAWholePiece) {
  EXPECT_EQ(PumpPieceFor(uint64_t{4096}), 4096u);
  EXPECT_EQ(PumpPieceFor(uint64_t{0}), 1u);  // an empty body still reads its end
  EXPECT_EQ(PumpPieceFor(uint64_t{kPumpPieceBytes}), kPumpPieceBytes);
  EXPECT_EQ(PumpPieceFor(uint64_t{5} << 40), kPumpPieceBytes);
}

TEST(PumpPieceTest, ABodyOfUnknownLengthTakesTheSmallerPiece) {
  EXPECT_EQ(PumpPieceFor(std::nullopt), kUnsizedPumpPieceBytes);
  EXPECT_LT(kUnsizedPumpPieceBytes, kPumpPieceBytes);
}

}  // namespace
}  // namespace tf::api
