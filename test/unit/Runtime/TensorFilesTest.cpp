#include "linnet/Runtime/TensorFiles.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace linnet::rt;

namespace {

std::string tempPath(const char *name) {
  return (std::filesystem::temp_directory_path() /
          (std::to_string(::getpid()) + "-" + name))
      .string();
}

OwnedTensor f32Tensor(std::vector<int64_t> shape, std::vector<float> values) {
  OwnedTensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.data.resize(values.size() * 4);
  std::memcpy(t.data.data(), values.data(), t.data.size());
  return t;
}

TEST(SafeTensors, WriteThenOpenGivesTheSameTensorsZeroCopy) {
  OwnedTensor w = f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6});
  OwnedTensor b = f32Tensor({3}, {7, 8, 9});
  std::string path = tempPath("w.safetensors"), err;
  ASSERT_TRUE(writeSafeTensors(path, {{"w", w.view()}, {"b", b.view()}}, err)) << err;
  auto f = SafeTensorsFile::open(path, err);
  ASSERT_TRUE(f) << err;
  ASSERT_EQ(f->tensors().size(), 2u);
  const TensorView *tw = f->find("w");
  ASSERT_TRUE(tw);
  EXPECT_EQ(tw->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(0, std::memcmp(tw->data.data(), w.data.data(), w.data.size()));
  // The data section is 8-byte aligned, so f32 views are naturally aligned.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(f->find("b")->data.data()) % 4, 0u);
  std::filesystem::remove(path);
}

TEST(SafeTensors, WriterRejectsInconsistentTensor) {
  OwnedTensor w = f32Tensor({2, 3}, {1, 2, 3});
  std::string err;
  EXPECT_FALSE(writeSafeTensors(tempPath("bad.safetensors"), {{"w", w.view()}}, err));
  EXPECT_NE(err.find("tensor 'w' has 12 bytes, its shape [2, 3] needs 24"), std::string::npos) << err;
}

TEST(Npy, RoundTripKeepsShapeDtypeAndBytes) {
  for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {4}, {2, 2}}) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::vector<float> values(static_cast<size_t>(n));
    for (size_t i = 0; i < values.size(); ++i)
      values[i] = static_cast<float>(i) + 0.5f;
    OwnedTensor t = f32Tensor(shape, values);
    std::string path = tempPath("x.npy"), err;
    ASSERT_TRUE(writeNpy(path, t.view(), err)) << err;
    auto r = readNpy(path, err);
    ASSERT_TRUE(r) << err;
    EXPECT_EQ(r->shape, shape);
    EXPECT_EQ(r->dtype, DType::F32);
    EXPECT_EQ(r->data, t.data);
    std::filesystem::remove(path);
  }
}

TEST(DType, NamesAndSizes) {
  EXPECT_EQ(dtypeSize(DType::BF16), 2u);
  EXPECT_STREQ(dtypeName(DType::I64), "i64");
  EXPECT_EQ(dtypeFromName("f16"), DType::F16);
  EXPECT_FALSE(dtypeFromName("f8"));
}

} // namespace
