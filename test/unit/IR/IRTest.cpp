// Core IR: verifier rules, JSON round trip, printer.
#include "linnet/ir/ir.hpp"

#include <gtest/gtest.h>

using namespace linnet::ir;

namespace {
json f32() { return {{"kind", "scalar"}, {"dtype", "f32"}}; }
json index() { return {{"kind", "scalar"}, {"dtype", "index"}}; }
json tensor(json shape) { return {{"kind", "tensor"}, {"shape", shape}, {"dtype", "f32"}}; }
Op yield(std::vector<ValueId> xs) { return {kind::Yield, xs, {}, json::object(), {}, {}}; }
Op ret(std::vector<ValueId> xs) { return {kind::Return, xs, {}, json::object(), {}, {}}; }

/// [i: 4] x[i] * 2.0
Region scaled() {
  Region body;
  body.args.push_back({1, "i", index()});
  body.ops.push_back({kind::Index, {0, 1}, {{2, "", f32()}}, json::object(), {}, {}});
  body.ops.push_back({kind::Const, {}, {{3, "", f32()}}, {{"value", 2.0}}, {}, {}});
  body.ops.push_back({kind::Arith, {2, 3}, {{4, "", f32()}}, {{"op", "mul"}}, {}, {}});
  body.ops.push_back(yield({4}));
  Region fn;
  fn.args.push_back({0, "x", tensor({4})});
  fn.ops.push_back({kind::Comprehension, {}, {{5, "y", tensor({4})}},
                    {{"indices", {{{"name", "i"}, {"domain", 4}}}}}, {body}, {}});
  fn.ops.push_back(ret({5}));
  return fn;
}
} // namespace

TEST(IRVerify, AcceptsAComprehension) { EXPECT_TRUE(verify(scaled()).empty()); }

TEST(IRVerify, UnknownValueIdNamesItsPath) {
  Region r = scaled();
  r.ops[0].regions[0].ops[2].operands[1] = 42;
  auto p = verify(r, "functions[3].body");
  ASSERT_FALSE(p.empty());
  EXPECT_EQ(p[0].str(), "functions[3].body.ops[0].regions[0].ops[2].operands[1]: unknown value id 42 "
                        "(not defined before this use)");
}

TEST(IRVerify, UseBeforeDefinition) {
  Region r = scaled();
  std::swap(r.ops[0].regions[0].ops[0], r.ops[0].regions[0].ops[2]);
  EXPECT_FALSE(verify(r).empty());
}

TEST(IRVerify, DuplicateId) {
  Region r = scaled();
  r.ops[0].regions[0].ops[1].results[0].id = 2;
  auto p = verify(r);
  ASSERT_FALSE(p.empty());
  EXPECT_NE(p[0].message.find("defined twice"), std::string::npos);
}

TEST(IRVerify, ComprehensionShapeMustMatchDomains) {
  Region r = scaled();
  r.ops[0].results[0].type = tensor({5});
  auto p = verify(r);
  ASSERT_EQ(p.size(), 1u);
  EXPECT_EQ(p[0].str(), "ops[0].results[0]: axis 0 is 5, but index 'i' ranges over 4");
}

TEST(IRVerify, RegionArityAndTerminators) {
  Region r = scaled();
  r.ops[0].regions[0].args.clear();
  EXPECT_FALSE(verify(r).empty());
  Region r2 = scaled();
  r2.ops[0].regions[0].ops.pop_back(); // no yield
  EXPECT_FALSE(verify(r2).empty());
  Region r3 = scaled();
  r3.ops.insert(r3.ops.begin(), ret({}));
  EXPECT_FALSE(verify(r3).empty());
}

TEST(IRVerify, UnknownKindAndMissingAttribute) {
  Region r = scaled();
  r.ops[0].regions[0].ops[2].attrs = json::object();
  auto p = verify(r);
  ASSERT_FALSE(p.empty());
  EXPECT_NE(p[0].message.find("needs the attribute 'op'"), std::string::npos);
  r.ops[0].regions[0].ops[2].kind = "frobnicate";
  p = verify(r);
  ASSERT_FALSE(p.empty());
  EXPECT_NE(p[0].message.find("unknown op kind 'frobnicate'"), std::string::npos);
}

TEST(IRVerify, WhileCarriesValues) {
  Region cond, body;
  cond.args.push_back({1, "i", index()});
  cond.ops.push_back({kind::Const, {}, {{2, "", {{"kind", "scalar"}, {"dtype", "bool"}}}}, {{"value", true}}, {}, {}});
  cond.ops.push_back(yield({2}));
  body.args.push_back({3, "i", index()});
  body.ops.push_back(yield({3}));
  Region fn;
  fn.ops.push_back({kind::Const, {}, {{0, "i", index()}}, {{"value", 0}}, {}, {}});
  fn.ops.push_back({kind::While, {0}, {{4, "i", index()}}, json::object(), {cond, body}, {}});
  fn.ops.push_back(ret({4}));
  EXPECT_TRUE(verify(fn).empty());
  fn.ops[1].results[0].type = f32();
  EXPECT_FALSE(verify(fn).empty()); // yields index where the result is f32
}

TEST(IRJson, RoundTrip) {
  Region r = scaled();
  json j = toJson(r);
  Problem err;
  auto back = fromJson(j, "body", err);
  ASSERT_TRUE(back) << err.str();
  EXPECT_EQ(toJson(*back).dump(), j.dump());
}

TEST(IRJson, StructuralErrorsNameThePath) {
  json j = toJson(scaled());
  j["ops"][0]["regions"][0]["ops"][1].erase("attrs");
  Problem err;
  EXPECT_FALSE(fromJson(j, "functions[0].body", err));
  EXPECT_EQ(err.str(), "functions[0].body.ops[0].regions[0].ops[1]: missing 'attrs'");
  j = toJson(scaled());
  j["ops"][0]["operands"] = json::array({"%1"});
  EXPECT_FALSE(fromJson(j, "b", err));
  EXPECT_EQ(err.path, "b.ops[0].operands[0]");
}

TEST(IRPrint, SourceSpelling) {
  EXPECT_EQ(typeStr(tensor({4, {{"name", "N"}, {"sym", "m::N"}}})), "Tensor[4, N; f32]");
  json d = {{"op", "mul"}, {"args", {{{"name", "Heads"}, {"sym", "a"}}, {{"name", "Head"}, {"sym", "b"}}}}};
  EXPECT_EQ(dimStr(d), "Heads * Head");
  std::string text = print(scaled());
  EXPECT_NE(text.find("%5 = comprehension() {\"indices\":[{\"domain\":4,\"name\":\"i\"}]} : Tensor[4; f32] {  // y"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  %4 = arith(%2, %3) {\"op\":\"mul\"} : f32"), std::string::npos);
}
