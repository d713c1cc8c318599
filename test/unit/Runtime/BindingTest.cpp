#include "linnet/Runtime/Binding.h"

#include <gtest/gtest.h>

using namespace linnet::rt;

TEST(Binding, ExactAndPatternRules) {
  std::string err;
  auto b = BindingMap::parse(R"({"version": 1, "tensors": {
      "layers.*.attn.q.weight": "model.layers.*.self_attn.q_proj.weight",
      "layers.3.attn.q.weight": "special",
      "grid.*.*.w": "g.*.x.*"}})",
                             "b.json", err);
  ASSERT_TRUE(b) << err;
  EXPECT_EQ(b->externalName("layers.12.attn.q.weight"), "model.layers.12.self_attn.q_proj.weight");
  EXPECT_EQ(b->externalName("layers.3.attn.q.weight"), "special");
  EXPECT_EQ(b->externalName("grid.1.2.w"), "g.1.x.2");
  EXPECT_EQ(b->externalName("lm_head.weight"), "lm_head.weight");
  EXPECT_FALSE(b->maps("layers.x.attn.q.weight")); // '*' matches indices only
}

TEST(Binding, Errors) {
  std::string err;
  EXPECT_FALSE(BindingMap::parse(R"({"tensors": {"a.*.w": "b.w"}})", "b.json", err));
  EXPECT_NE(err.find("'*' occurs 1 time(s) in the path and 0 in the name 'b.w'"), std::string::npos);
  EXPECT_FALSE(BindingMap::parse(R"({"tensors": {"a": 3}})", "b.json", err));
  EXPECT_NE(err.find("tensors.a: expected a tensor name"), std::string::npos);
  EXPECT_FALSE(BindingMap::parse("[1]", "b.json", err));
  EXPECT_FALSE(BindingMap::parse("{", "b.json", err));
  EXPECT_NE(err.find("not valid JSON"), std::string::npos);
}
