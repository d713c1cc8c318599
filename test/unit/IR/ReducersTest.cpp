// The built-in reducers' table: names, combines, identities, finalize and
// the messages each takes.
#include "linnet/ir/reducers.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace linnet::ir;

namespace {

ReducerIdentityValue identityOf(std::string_view reducer, std::string_view dtype) {
  const BuiltinReducer *r = findBuiltinReducer(reducer);
  EXPECT_NE(r, nullptr) << reducer;
  std::optional<ReducerIdentityValue> v = reducerIdentity(r->identity, dtype);
  EXPECT_TRUE(v.has_value()) << reducer << " " << dtype;
  return *v;
}

TEST(Reducers, NamesInOrder) {
  std::vector<std::string> names;
  for (const BuiltinReducer &r : builtinReducers())
    names.emplace_back(r.name);
  EXPECT_EQ(names, (std::vector<std::string>{"sum", "prod", "max", "min", "mean", "any", "all"}));
  EXPECT_EQ(builtinReducerNames(), "sum, prod, max, min, mean, any, all");
  for (const BuiltinReducer &r : builtinReducers())
    EXPECT_EQ(findBuiltinReducer(r.name), &r);
  EXPECT_EQ(findBuiltinReducer("avg"), nullptr);
  EXPECT_EQ(findBuiltinReducer("Sum"), nullptr);
  EXPECT_EQ(findBuiltinReducer(""), nullptr);
}

TEST(Reducers, Combines) {
  EXPECT_EQ(findBuiltinReducer("sum")->combine, ReduceCombine::Add);
  EXPECT_EQ(findBuiltinReducer("prod")->combine, ReduceCombine::Mul);
  EXPECT_EQ(findBuiltinReducer("max")->combine, ReduceCombine::Max);
  EXPECT_EQ(findBuiltinReducer("min")->combine, ReduceCombine::Min);
  EXPECT_EQ(findBuiltinReducer("mean")->combine, ReduceCombine::Add);
  EXPECT_EQ(findBuiltinReducer("any")->combine, ReduceCombine::Or);
  EXPECT_EQ(findBuiltinReducer("all")->combine, ReduceCombine::And);
  EXPECT_EQ(combineOpName(ReduceCombine::Add), "add");
  EXPECT_EQ(combineOpName(ReduceCombine::Mul), "mul");
  EXPECT_EQ(combineOpName(ReduceCombine::Max), "max");
  EXPECT_EQ(combineOpName(ReduceCombine::Min), "min");
  EXPECT_EQ(combineOpName(ReduceCombine::Or), "or");
  EXPECT_EQ(combineOpName(ReduceCombine::And), "and");
}

TEST(Reducers, OnlyMeanDividesByCount) {
  for (const BuiltinReducer &r : builtinReducers())
    EXPECT_EQ(r.dividesByCount, r.name == "mean") << r.name;
}

TEST(Reducers, AnyAllTakeBoolOnly) {
  for (const BuiltinReducer &r : builtinReducers()) {
    bool logical = r.name == "any" || r.name == "all";
    EXPECT_EQ(r.boolOnly(), logical) << r.name;
    EXPECT_EQ(r.operands, logical ? ReduceOperands::Bool : ReduceOperands::Numeric) << r.name;
  }
}

TEST(Reducers, IdentitiesF32) {
  constexpr double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(std::get<double>(identityOf("sum", "f32")), 0.0);
  EXPECT_EQ(std::get<double>(identityOf("mean", "f32")), 0.0);
  EXPECT_EQ(std::get<double>(identityOf("prod", "f32")), 1.0);
  EXPECT_EQ(std::get<double>(identityOf("max", "f32")), -inf);
  EXPECT_EQ(std::get<double>(identityOf("min", "f32")), inf);
  EXPECT_EQ(std::get<double>(identityOf("max", "bf16")), -inf);
}

TEST(Reducers, IdentitiesI32) {
  EXPECT_EQ(std::get<int64_t>(identityOf("sum", "i32")), 0);
  EXPECT_EQ(std::get<int64_t>(identityOf("mean", "i32")), 0);
  EXPECT_EQ(std::get<int64_t>(identityOf("prod", "i32")), 1);
  EXPECT_EQ(std::get<int64_t>(identityOf("max", "i32")), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(std::get<int64_t>(identityOf("min", "i32")), std::numeric_limits<int32_t>::max());
  EXPECT_EQ(std::get<int64_t>(identityOf("max", "i8")), -128);
  EXPECT_EQ(std::get<int64_t>(identityOf("min", "index")), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(std::get<uint64_t>(identityOf("max", "u8")), 0u);
  EXPECT_EQ(std::get<uint64_t>(identityOf("min", "u8")), 255u);
  EXPECT_EQ(std::get<uint64_t>(identityOf("min", "u64")), std::numeric_limits<uint64_t>::max());
}

TEST(Reducers, IdentitiesBool) {
  EXPECT_EQ(std::get<bool>(identityOf("any", "bool")), false);
  EXPECT_EQ(std::get<bool>(identityOf("all", "bool")), true);
  EXPECT_EQ(std::get<bool>(identityOf("max", "bool")), false);
  EXPECT_EQ(std::get<bool>(identityOf("min", "bool")), true);
}

TEST(Reducers, NoIdentityOutsideConcreteDtypes) {
  EXPECT_FALSE(reducerIdentity(ReduceIdentity::Zero, "T").has_value());
  EXPECT_FALSE(reducerIdentity(ReduceIdentity::Zero, "{integer}").has_value());
}

} // namespace
