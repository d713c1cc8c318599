// The one dim arithmetic (Support/DimArith.h) and the plan dim evaluator
// over it (ir::evalDim): floored / and %, errors instead of wrapped values.
#include "linnet/Support/DimArith.h"
#include "linnet/ir/ir.hpp"

#include <gtest/gtest.h>

#include <climits>

using namespace linnet;
using dimarith::Error;
using dimarith::Op;

TEST(DimArith, FloorsDivisionAndRemainder) {
  EXPECT_EQ(*dimarith::apply(Op::FloorDiv, -7, 2), -4);
  EXPECT_EQ(*dimarith::apply(Op::Mod, -7, 2), 1);
  EXPECT_EQ(*dimarith::apply(Op::FloorDiv, 7, -2), -4);
  EXPECT_EQ(*dimarith::apply(Op::Mod, 7, -2), -1);
  EXPECT_EQ(*dimarith::apply(Op::FloorDiv, 6, 3), 2);
  EXPECT_EQ(*dimarith::apply(Op::Mod, INT64_MIN, -1), 0);
  EXPECT_EQ(*dimarith::apply(Op::Min, -3, 2), -3);
  EXPECT_EQ(*dimarith::apply(Op::Max, -3, 2), 2);
}

TEST(DimArith, ZeroDivisorsAndOverflowAreErrors) {
  Error e;
  EXPECT_FALSE(dimarith::apply(Op::FloorDiv, 5, 0, &e));
  EXPECT_EQ(e, Error::DivideByZero);
  EXPECT_FALSE(dimarith::apply(Op::Mod, 5, 0, &e));
  EXPECT_EQ(e, Error::DivideByZero);
  EXPECT_FALSE(dimarith::apply(Op::FloorDiv, INT64_MIN, -1, &e));
  EXPECT_EQ(e, Error::Overflow);
  EXPECT_FALSE(dimarith::apply(Op::Mul, INT64_MAX, 2, &e));
  EXPECT_EQ(e, Error::Overflow);
  EXPECT_FALSE(dimarith::apply(Op::Add, INT64_MAX, 1, &e));
  EXPECT_FALSE(dimarith::apply(Op::Sub, INT64_MIN, 1, &e));
  EXPECT_TRUE(dimarith::apply(Op::Add, 1, 2, &e));
  EXPECT_EQ(e, Error::None);
}

TEST(DimArith, OperatorNamesRoundTrip) {
  for (Op op : {Op::Add, Op::Sub, Op::Mul, Op::FloorDiv, Op::Mod, Op::Min, Op::Max})
    EXPECT_EQ(dimarith::opNamed(dimarith::nameOf(op)), op);
  EXPECT_FALSE(dimarith::opNamed("div"));
}

TEST(EvalDim, FoldsEveryArgumentLeft) {
  ir::json n = {{"sym", "n"}, {"name", "N"}};
  ir::json m = {{"sym", "m"}, {"name", "M"}};
  auto bind = [](const std::string &s) -> std::optional<int64_t> {
    if (s == "n")
      return 7;
    if (s == "m")
      return -3;
    return std::nullopt;
  };
  std::string why;
  // N + M + 1 is one add of three; N / 2 floors; (N * M) % 5 floors.
  EXPECT_EQ(ir::evalDim({{"op", "add"}, {"args", {n, m, 1}}}, bind, nullptr, why), 5);
  EXPECT_EQ(ir::evalDim({{"op", "floordiv"}, {"args", {m, 2}}}, bind, nullptr, why), -2);
  EXPECT_EQ(ir::evalDim({{"op", "mod"}, {"args", {{{"op", "mul"}, {"args", {n, m}}}, 5}}}, bind, nullptr, why), 4);
  EXPECT_EQ(ir::evalDim({{"op", "min"}, {"args", {n, m, 0}}}, bind, nullptr, why), -3);
  EXPECT_TRUE(why.empty());
  // Unbound: no value, no error.
  EXPECT_FALSE(ir::evalDim({{"op", "add"}, {"args", {{{"sym", "k"}, {"name", "K"}}, 1}}}, bind, nullptr, why));
  EXPECT_TRUE(why.empty());
  // A zero divisor: an error that names the dim.
  EXPECT_FALSE(ir::evalDim({{"op", "floordiv"}, {"args", {n, {{"op", "add"}, {"args", {m, 3}}}}}}, bind, nullptr,
                           why));
  EXPECT_NE(why.find("divides by zero"), std::string::npos) << why;
  why.clear();
  EXPECT_FALSE(ir::evalDim({{"op", "mul"}, {"args", {INT64_MAX, n}}}, bind, nullptr, why));
  EXPECT_NE(why.find("overflows"), std::string::npos) << why;
  // Not a dim operator.
  why.clear();
  EXPECT_FALSE(ir::evalDim({{"op", "sub"}, {"args", {n, 1}}}, bind, nullptr, why));
  EXPECT_TRUE(why.empty());
}
