#include "linnet-c/Runtime.h"
#include "linnet/Runtime/Runtime.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <unistd.h>

using namespace linnet::rt;

namespace {

OwnedTensor f32(std::vector<int64_t> shape, std::vector<float> v) {
  OwnedTensor t;
  t.dtype = DType::F32;
  t.shape = std::move(shape);
  t.data.resize(v.size() * 4);
  std::memcpy(t.data.data(), v.data(), t.data.size());
  return t;
}

std::string writeWeights() {
  std::string path = (std::filesystem::temp_directory_path() /
                      (std::to_string(::getpid()) + "-affine.safetensors"))
                         .string();
  OwnedTensor w = f32({2, 3}, {1, 0, 0, 0, 1, 2}), s = f32({1}, {0.5f});
  std::string err;
  EXPECT_TRUE(writeSafeTensors(path, {{"lin.weight", w.view()}, {"scale", s.view()}}, err)) << err;
  return path;
}

TEST(Runtime, StatePersistsBetweenCallsAndGenericsBindFromInputs) {
  std::string weights = writeWeights(), err;
  LoadOptions opts;
  opts.weightsPath = weights;
  auto model = Model::load(AFFINE_ARTIFACT, opts, err);
  ASSERT_TRUE(model) << err;
  OwnedTensor x = f32({1, 3}, {1, 2, 3});
  std::vector<OwnedTensor> out;
  ASSERT_TRUE(model->call("forward", {x.view()}, out, err)) << err;
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].shape, (std::vector<int64_t>{1, 2}));
  float y[2];
  std::memcpy(y, out[0].data.data(), 8);
  EXPECT_FLOAT_EQ(y[0], 1.5f);
  EXPECT_FLOAT_EQ(y[1], 8.5f);
  ASSERT_TRUE(model->call("forward", {x.view()}, out, err)) << err;
  ASSERT_TRUE(model->call("calls", {}, out, err)) << err;
  int64_t calls;
  std::memcpy(&calls, out[0].data.data(), 8);
  EXPECT_EQ(calls, 2);
  std::filesystem::remove(weights);
}

TEST(Runtime, CApiLoadsAndCalls) {
  std::string weights = writeWeights();
  linnet_model *m = nullptr;
  ASSERT_EQ(linnet_model_open(AFFINE_ARTIFACT, weights.c_str(), nullptr, &m), 0)
      << linnet_last_error();
  float x[6] = {1, 2, 3, 4, 5, 6};
  int64_t shape[2] = {2, 3};
  linnet_tensor in{LINNET_F32, 2, shape, x};
  linnet_tensor outs[1];
  ASSERT_EQ(linnet_model_num_results(m, "forward"), 1u);
  ASSERT_EQ(linnet_model_call(m, "forward", &in, 1, outs, 1), 0) << linnet_last_error();
  EXPECT_EQ(outs[0].rank, 2);
  EXPECT_EQ(outs[0].shape[0], 2);
  EXPECT_FLOAT_EQ(static_cast<float *>(outs[0].data)[3], 17.5f);
  // A wrong input is an error with a message, not a crash.
  int64_t badShape[2] = {2, 4};
  linnet_tensor bad{LINNET_F32, 2, badShape, x};
  EXPECT_NE(linnet_model_call(m, "forward", &bad, 1, outs, 1), 0);
  EXPECT_NE(std::string(linnet_last_error()).find("expected shape [B, 3]"), std::string::npos);
  linnet_model_close(m);
  EXPECT_NE(linnet_model_open("/nonexistent", nullptr, nullptr, &m), 0);
  std::filesystem::remove(weights);
}

/// A private copy of the affine artifact, to tamper with.
std::string copyArtifact(const char *name) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / (std::to_string(::getpid()) + "-" + name);
  fs::remove_all(dir);
  fs::copy(AFFINE_ARTIFACT, dir, fs::copy_options::recursive);
  return dir.string();
}

TEST(Runtime, CApiRefusesAnArtifactWithoutManifestOrWithAChangedFile) {
  std::string weights = writeWeights();
  linnet_model *m = nullptr;
  std::string dir = copyArtifact("no-manifest");
  std::filesystem::remove(dir + "/manifest.json");
  EXPECT_NE(linnet_model_open(dir.c_str(), weights.c_str(), nullptr, &m), 0);
  EXPECT_NE(std::string(linnet_last_error()).find("manifest.json: missing"), std::string::npos)
      << linnet_last_error();
  std::filesystem::remove_all(dir);

  dir = copyArtifact("edited");
  { // same size, other bytes: only the digest can tell
    std::FILE *f = std::fopen((dir + "/runtime.json").c_str(), "r+b");
    ASSERT_TRUE(f);
    std::fputc('[', f);
    std::fclose(f);
  }
  EXPECT_NE(linnet_model_open(dir.c_str(), weights.c_str(), nullptr, &m), 0);
  EXPECT_NE(std::string(linnet_last_error()).find("runtime.json: artifact file whose digest does not match"),
            std::string::npos)
      << linnet_last_error();
  std::filesystem::remove_all(dir);
  std::filesystem::remove(weights);
}

TEST(Runtime, RuntimeDescriptionIsReadStrictly) {
  auto parse = [](const std::string &text) {
    ArtifactInfo info;
    std::string err;
    EXPECT_FALSE(parseArtifactInfo(text, info, err));
    return err;
  };
  std::string head = R"({"abi": "linnet-cpu-packed-v1", "library": "model.so", "tensors": [], "entries": [)";
  EXPECT_EQ(parse(head + R"({"name": "f", "symbol": "system", "inputs": [], "results": []}]})"),
            "entries[0].symbol: expected 'linnet_entry_f' (the ABI's symbol of entry 'f'), found '\"system\"'");
  EXPECT_EQ(parse(head + R"({"name": "f", "symbol": "linnet_entry_f", "generics": ["B"], "inputs": [],
              "results": [{"dtype": "f32", "shape": ["B * C"]}]}]})"),
            "entries[0].results[0].shape[0]: 'B * C' names 'C', which is not one of the entry's generics");
  EXPECT_EQ(parse(head + R"({"name": "f", "symbol": "linnet_entry_f", "inputs": [],
              "results": [{"dtype": "f32", "shape": [-1]}]}]})"),
            "entries[0].results[0].shape[0]: expected a non-negative integer, found -1");
  EXPECT_EQ(parse(R"({"abi": "linnet-cpu-packed-v1", "library": 7, "tensors": [], "entries": []})"),
            "library: expected a string, found an integer");
  EXPECT_EQ(parse(R"({"abi": "linnet-cpu-packed-v1", "library": "model.so", "entries": [], "tensors": [
              {"path": "s", "kind": "state", "dtype": "f32", "shape": [4294967296, 4294967296]}]})"),
            "tensors[0].shape: f32[4294967296, 4294967296] is too large (more than 2^62 bytes)");
}

} // namespace
