// The normal form of symbolic dimensions: equal expressions compare equal.
#include "linnet/Sema/Dim.h"
#include "linnet/ir/ir.hpp"

#include <gtest/gtest.h>

using linnet::sema::Dim;
namespace ir = linnet::ir;

namespace {
Dim A = Dim::sym("m::A", "A"), B = Dim::sym("m::B", "B"), C = Dim::sym("m::C", "C");
Dim Heads = Dim::sym("m::Heads", "Heads"), Head = Dim::sym("m::Head", "Head");

TEST(Dim, MulCommutes) {
  EXPECT_EQ(Heads * Head, Head * Heads);
  EXPECT_EQ((A * B) * C, A * (B * C));
}
TEST(Dim, AddFoldsConstants) {
  EXPECT_EQ((A + 1) + 2, A + 3);
  EXPECT_EQ(Dim(2) + Dim(3), Dim(5));
  EXPECT_EQ((A + 3).str(), "A + 3");
  EXPECT_EQ(A - A, Dim(0));
  EXPECT_TRUE((A - A).isConstant());
}
TEST(Dim, Distributes) {
  EXPECT_EQ((A + B) * 2, A * 2 + B + B);
  EXPECT_EQ((A + 1) * (A + 1), A * A + A * 2 + 1);
  EXPECT_EQ((A - B).str(), "A - B");
  EXPECT_EQ((A * 2 - 1).str(), "2 * A - 1");
}
TEST(Dim, ConstantFolding) {
  EXPECT_EQ(Dim::floorDiv(7, 2), Dim(3));
  EXPECT_EQ(Dim::floorDiv(-7, 2), Dim(-4));
  EXPECT_EQ(Dim::mod(-7, 2), Dim(1));
  EXPECT_EQ(Dim::min(3, 4), Dim(3));
  EXPECT_EQ(Dim::max(3, 4), Dim(4));
  EXPECT_EQ(*(Dim(6) * 7).constant(), 42);
}
TEST(Dim, ExactDivision) {
  EXPECT_EQ(Dim::floorDiv(Heads * Head, Head), Heads);
  EXPECT_EQ(Dim::floorDiv(A * 4 + 8, 4), A + 2);
  EXPECT_EQ(Dim::mod(Heads * Head, Heads), Dim(0));
  EXPECT_EQ(Dim::floorDiv(A, 1), A);
  EXPECT_EQ(Dim::floorDiv(A, A), Dim(1));
}
TEST(Dim, OpaqueAtoms) {
  Dim q = Dim::floorDiv(A, B);
  EXPECT_FALSE(q.isConstant());
  EXPECT_EQ(q, Dim::floorDiv(A, B));
  EXPECT_NE(q, Dim::floorDiv(B, A));
  EXPECT_EQ(q.str(), "A / B");
  EXPECT_EQ(Dim::floorDiv(A + 1, 2).str(), "(A + 1) / 2");
  EXPECT_EQ(Dim::mod(A, 3).str(), "A % 3");
  // Arguments are normalized before the atom is built.
  EXPECT_EQ(Dim::floorDiv((A + 1) + 2, B * C), Dim::floorDiv(A + 3, C * B));
  EXPECT_EQ(q * 2 + q, q * 3);
}
TEST(Dim, PrintsAsThePlanPrinterDoes) {
  // One printer (ir::dimStr over the plan form): an atom after a factor is
  // parenthesized, a leading -1 is a sign, a negative term a subtraction.
  EXPECT_EQ((Dim::floorDiv(A, 2) * 2).str(), "2 * (A / 2)");
  EXPECT_EQ((Dim(3) - A).str(), "-A + 3");
  EXPECT_EQ((A - B * 2).str(), "A - 2 * B");
  EXPECT_EQ(Dim::min(A + 1, B).str(), "min(B, A + 1)"); // normalized: B first
  EXPECT_EQ(ir::dimStr(A.toJson()), A.str());
}
TEST(Dim, MinMaxCommute) {
  EXPECT_EQ(Dim::min(A, B), Dim::min(B, A));
  EXPECT_EQ(Dim::max(A, B), Dim::max(B, A));
  EXPECT_NE(Dim::min(A, B), Dim::max(A, B));
  EXPECT_EQ(Dim::min(A, A), A);
  EXPECT_EQ(Dim::max(A + 1, A), A + 1);
  EXPECT_EQ(Dim::min(A + 1, A), A);
  EXPECT_EQ(Dim::min(A, B).str(), "min(A, B)");
}
TEST(Dim, Substitute) {
  auto bind = [](const linnet::sema::Atom &a) -> std::optional<Dim> {
    if (a.id == "m::A")
      return Dim(6);
    if (a.id == "m::B")
      return Dim(4);
    return std::nullopt;
  };
  EXPECT_EQ((A * B + 1).substitute(bind), Dim(25));
  EXPECT_EQ(Dim::floorDiv(A, B).substitute(bind), Dim(1));
  EXPECT_EQ(Dim::max(A, C).substitute(bind), Dim::max(C, 6));
  EXPECT_EQ((A * C).substitute(bind), C * 6);
  std::vector<const linnet::sema::Atom *> syms;
  (Dim::min(A, B) + C).collectSymbols(syms);
  EXPECT_EQ(syms.size(), 3u);
}
TEST(Dim, PackSize) {
  Dim s = Dim::packSize("m::S", "S");
  EXPECT_NE(s, Dim::sym("m::S", "S"));
  EXPECT_EQ((s * 2).str(), "2 * #S");
}
TEST(Dim, NoOverflowUB) {
  Dim big = INT64_MAX;
  EXPECT_TRUE((big + 1).isConstant());
  EXPECT_TRUE(Dim::floorDiv(INT64_MIN, -1).isConstant());
  EXPECT_FALSE(Dim::floorDiv(A, 0).isConstant());
}
TEST(Dim, OverflowIsCounted) {
  Dim::OverflowCheck wrapped;
  Dim big = INT64_MAX;
  (void)(big + 1);
  EXPECT_TRUE(wrapped.overflowed());
  Dim::OverflowCheck square;
  (void)(Dim(int64_t(1) << 32) * Dim(int64_t(1) << 32));
  EXPECT_TRUE(square.overflowed());
  Dim::OverflowCheck fine;
  (void)(Dim(3037000499) * Dim(3037000499));
  (void)Dim::floorDiv(INT64_MIN + 1, -1);
  EXPECT_FALSE(fine.overflowed());
  // -INT64_MIN is printed, not negated.
  EXPECT_EQ((Dim(INT64_MIN) * A).str(), "-9223372036854775808 * A");
}
} // namespace
