//===- LinalgCodegenTest.cpp - linalg contractions compiled and run -------===//
//
// Execution tests of -linnet-cpu-lower-linalg through compileToSharedLibrary:
// memref-level linalg (matmul, generic contractions, batch matmul, dynamic
// shapes, matvec, elementwise and reductions) compiled with the generated
// kernels and with BLAS, loaded with dlopen, compared with plain C++ loops.
// Sizes that do not divide the tiles (67x45x131, matvec 37x75) exercise the
// peeled remainders and the scalar tails.
//
//===----------------------------------------------------------------------===//

#include "CompiledLibrary.h"
#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Target/CPU/MemRefABI.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"

#include <gtest/gtest.h>

#include <cmath>
#include <dlfcn.h>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

using namespace linnet::cpu;

namespace {

using Vec = MemRefDescriptor<float, 1>;
using Mat = MemRefDescriptor<float, 2>;
using Ten = MemRefDescriptor<float, 3>;

using Library = test::CompiledLibrary;

std::unique_ptr<Library> compile(const std::string &source, ImplementationPolicy policy) {
  CodegenOptions options;
  options.implementation = policy;
  return test::compileLibrary(source, options);
}

std::vector<float> random(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// |a - b| <= tol * (1 + |b|) elementwise; reports the first mismatch.
void expectClose(const std::vector<float> &got, const std::vector<double> &want,
                 double tol = 1e-4) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i)
    if (std::abs(got[i] - want[i]) > tol * (1 + std::abs(want[i]))) {
      ADD_FAILURE() << "element " << i << ": got " << got[i] << ", want " << want[i];
      return;
    }
}

Mat mat(std::vector<float> &v, int64_t r, int64_t c) { return memref2d(v.data(), r, c); }

std::string matmulSource(const std::string &m, const std::string &n,
                         const std::string &k, bool fill) {
  std::string a = "memref<" + m + "x" + k + "xf32>", b = "memref<" + k + "x" + n + "xf32>",
              c = "memref<" + m + "x" + n + "xf32>";
  return "func.func @mm(%a: " + a + ", %b: " + b + ", %c: " + c +
         ") attributes {llvm.emit_c_interface} {\n" +
         (fill ? "  %z = arith.constant 0.0 : f32\n  linalg.fill ins(%z : f32) outs(%c : " + c + ")\n"
               : std::string()) +
         "  linalg.matmul ins(%a, %b : " + a + ", " + b + ") outs(%c : " + c + ")\n  return\n}\n";
}

/// C = (fill ? 0 : C0) + A B, compiled with `policy`, checked against loops.
void checkMatmul(int64_t M, int64_t N, int64_t K, bool dynamic, bool fill,
                 ImplementationPolicy policy, const char *expectKind) {
  auto s = [&](int64_t v) { return dynamic ? std::string("?") : std::to_string(v); };
  auto lib = compile(matmulSource(s(M), s(N), s(K), fill), policy);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto *mm = lib->fn<void(Mat *, Mat *, Mat *)>("mm");
  ASSERT_TRUE(mm);
  std::vector<float> A = random(M * K, 1), B = random(K * N, 2), C = random(M * N, 3);
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = fill ? 0.0 : C[i * N + j];
      for (int64_t k = 0; k < K; ++k)
        acc += (double)A[i * K + k] * B[k * N + j];
      want[i * N + j] = acc;
    }
  Mat a = mat(A, M, K), b = mat(B, K, N), c = mat(C, M, N);
  mm(&a, &b, &c);
  expectClose(C, want);
  bool found = false;
  for (const ImplementationChoice &choice : lib->choices)
    if (choice.op == "linalg.matmul") {
      EXPECT_EQ(choice.kind, expectKind);
      EXPECT_EQ(choice.role, "matmul");
      found = true;
    }
  EXPECT_TRUE(found);
}

TEST(LinalgCodegen, GeneratedMatmulOddSizes) {
  checkMatmul(67, 45, 131, false, true, ImplementationPolicy::Generated, "generated");
  checkMatmul(67, 45, 131, false, false, ImplementationPolicy::Generated, "generated");
}

TEST(LinalgCodegen, GeneratedMatmulDividingAndLarger) {
  checkMatmul(256, 256, 256, false, true, ImplementationPolicy::Generated, "generated");
  checkMatmul(300, 520, 600, false, false, ImplementationPolicy::Generated, "generated");
}

TEST(LinalgCodegen, GeneratedMatmulTinyAndDynamic) {
  checkMatmul(3, 5, 7, false, false, ImplementationPolicy::Generated, "generated");
  checkMatmul(67, 45, 131, true, false, ImplementationPolicy::Generated, "generated");
  checkMatmul(130, 70, 90, true, true, ImplementationPolicy::Generated, "generated");
}

TEST(LinalgCodegen, BlasMatmul) {
  if (!openBLASAvailable())
    GTEST_SKIP() << "OpenBLAS (libopenblas-dev) is not installed";
  checkMatmul(67, 45, 131, false, true, ImplementationPolicy::Blas, "library");
  checkMatmul(67, 45, 131, false, false, ImplementationPolicy::Blas, "library");
  checkMatmul(130, 70, 90, true, false, ImplementationPolicy::Blas, "library");
  checkMatmul(67, 45, 131, false, true, ImplementationPolicy::Auto, "library");
}

// y = x W^T written as a linalg.generic (the importer's form of a Linear).
const char *kLinear = R"(
#mA = affine_map<(i, j, k) -> (i, k)>
#mB = affine_map<(i, j, k) -> (j, k)>
#mC = affine_map<(i, j, k) -> (i, j)>
func.func @linear(%x: memref<67x131xf32>, %w: memref<45x131xf32>, %y: memref<67x45xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [#mA, #mB, #mC], iterator_types = ["parallel", "parallel", "reduction"]}
      ins(%x, %w : memref<67x131xf32>, memref<45x131xf32>) outs(%y : memref<67x45xf32>) {
  ^bb0(%a: f32, %b: f32, %c: f32):
    %p = arith.mulf %a, %b : f32
    %s = arith.addf %c, %p : f32
    linalg.yield %s : f32
  }
  return
}
)";

void checkLinear(ImplementationPolicy policy, const char *kind) {
  auto lib = compile(kLinear, policy);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto *f = lib->fn<void(Mat *, Mat *, Mat *)>("linear");
  ASSERT_TRUE(f);
  const int64_t M = 67, N = 45, K = 131;
  std::vector<float> X = random(M * K, 4), W = random(N * K, 5), Y = random(M * N, 6);
  std::vector<double> want(M * N);
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) {
      double acc = Y[i * N + j];
      for (int64_t k = 0; k < K; ++k)
        acc += (double)X[i * K + k] * W[j * K + k];
      want[i * N + j] = acc;
    }
  Mat x = mat(X, M, K), w = mat(W, N, K), y = mat(Y, M, N);
  f(&x, &w, &y);
  expectClose(Y, want);
  ASSERT_EQ(lib->choices.size(), 1u);
  EXPECT_EQ(lib->choices[0].kind, kind);
  EXPECT_EQ(lib->choices[0].op, "linalg.generic");
}

TEST(LinalgCodegen, GenericContractionTransposedB) {
  checkLinear(ImplementationPolicy::Generated, "generated");
  if (openBLASAvailable())
    checkLinear(ImplementationPolicy::Blas, "library");
}

TEST(LinalgCodegen, BatchMatmul) {
  const char *src = R"(
func.func @bmm(%a: memref<3x20x30xf32>, %b: memref<3x30x40xf32>, %c: memref<3x20x40xf32>) attributes {llvm.emit_c_interface} {
  linalg.batch_matmul ins(%a, %b : memref<3x20x30xf32>, memref<3x30x40xf32>) outs(%c : memref<3x20x40xf32>)
  return
}
)";
  auto lib = compile(src, ImplementationPolicy::Auto);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto *f = lib->fn<void(Ten *, Ten *, Ten *)>("bmm");
  ASSERT_TRUE(f);
  const int64_t Bn = 3, M = 20, N = 40, K = 30;
  std::vector<float> A = random(Bn * M * K, 7), B = random(Bn * K * N, 8),
                     C = random(Bn * M * N, 9);
  std::vector<double> want(C.size());
  for (int64_t b = 0; b < Bn; ++b)
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < N; ++j) {
        double acc = C[(b * M + i) * N + j];
        for (int64_t k = 0; k < K; ++k)
          acc += (double)A[(b * M + i) * K + k] * B[(b * K + k) * N + j];
        want[(b * M + i) * N + j] = acc;
      }
  Ten a{A.data(), A.data(), 0, {Bn, M, K}, {M * K, K, 1}};
  Ten b{B.data(), B.data(), 0, {Bn, K, N}, {K * N, N, 1}};
  Ten c{C.data(), C.data(), 0, {Bn, M, N}, {M * N, N, 1}};
  f(&a, &b, &c);
  expectClose(C, want);
  ASSERT_EQ(lib->choices.size(), 1u);
  EXPECT_EQ(lib->choices[0].role, "batch-matmul");
  EXPECT_EQ(lib->choices[0].kind, "generated");
}

void checkMatvec(int64_t M, int64_t K, ImplementationPolicy policy) {
  std::string w = "memref<" + std::to_string(M) + "x" + std::to_string(K) + "xf32>",
              x = "memref<" + std::to_string(K) + "xf32>",
              y = "memref<" + std::to_string(M) + "xf32>";
  std::string src = "func.func @mv(%w: " + w + ", %x: " + x + ", %y: " + y +
                    ") attributes {llvm.emit_c_interface} {\n"
                    "  linalg.matvec ins(%w, %x : " + w + ", " + x + ") outs(%y : " + y +
                    ")\n  return\n}\n";
  auto lib = compile(src, policy);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto *f = lib->fn<void(Mat *, Vec *, Vec *)>("mv");
  ASSERT_TRUE(f);
  std::vector<float> W = random(M * K, 10), X = random(K, 11), Y = random(M, 12);
  std::vector<double> want(M);
  for (int64_t i = 0; i < M; ++i) {
    double acc = Y[i];
    for (int64_t k = 0; k < K; ++k)
      acc += (double)W[i * K + k] * X[k];
    want[i] = acc;
  }
  Mat wd = mat(W, M, K);
  Vec xd = memref1d(X.data(), K), yd = memref1d(Y.data(), M);
  f(&wd, &xd, &yd);
  expectClose(Y, want);
  ASSERT_EQ(lib->choices.size(), 1u);
  EXPECT_EQ(lib->choices[0].role, "matvec");
  EXPECT_EQ(lib->choices[0].routine, "matvec-stream");
}

TEST(LinalgCodegen, MatvecDecodeShapesAndTails) {
  checkMatvec(1376, 512, ImplementationPolicy::Generated);
  checkMatvec(37, 75, ImplementationPolicy::Generated);
  checkMatvec(5, 3, ImplementationPolicy::Auto);
}

TEST(LinalgCodegen, ElementwiseAndReduction) {
  const char *src = R"(
#id2 = affine_map<(i, j) -> (i, j)>
#row = affine_map<(i, j) -> (i)>
func.func @ew(%a: memref<7x100xf32>, %b: memref<7x100xf32>, %r: memref<7xf32>) attributes {llvm.emit_c_interface} {
  linalg.generic {indexing_maps = [#id2, #id2], iterator_types = ["parallel", "parallel"]}
      ins(%a : memref<7x100xf32>) outs(%b : memref<7x100xf32>) {
  ^bb0(%x: f32, %o: f32):
    %e = math.exp %x : f32
    linalg.yield %e : f32
  }
  linalg.generic {indexing_maps = [#id2, #row], iterator_types = ["parallel", "reduction"]}
      ins(%b : memref<7x100xf32>) outs(%r : memref<7xf32>) {
  ^bb0(%x: f32, %o: f32):
    %s = arith.addf %o, %x : f32
    linalg.yield %s : f32
  }
  return
}
)";
  auto lib = compile(src, ImplementationPolicy::Auto);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto *f = lib->fn<void(Mat *, Mat *, Vec *)>("ew");
  ASSERT_TRUE(f);
  std::vector<float> A = random(700, 13), B(700), R(7, 0.5f);
  std::vector<double> wantB(700), wantR(7, 0.5);
  for (int i = 0; i < 7; ++i)
    for (int j = 0; j < 100; ++j) {
      wantB[i * 100 + j] = std::exp((double)A[i * 100 + j]);
      wantR[i] += wantB[i * 100 + j];
    }
  Mat a = mat(A, 7, 100), b = mat(B, 7, 100);
  Vec r = memref1d(R.data(), 7);
  f(&a, &b, &r);
  expectClose(B, wantB);
  expectClose(R, wantR);
  ASSERT_EQ(lib->choices.size(), 2u);
  EXPECT_EQ(lib->choices[0].role, "elementwise");
  EXPECT_EQ(lib->choices[1].role, "other");
}

TEST(LinalgCodegen, TensorLinalgIsAnError) {
  const char *src = R"(
func.func @t(%a: tensor<4x4xf32>, %b: tensor<4x4xf32>, %c: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %r = linalg.matmul ins(%a, %b : tensor<4x4xf32>, tensor<4x4xf32>) outs(%c : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
)";
  auto lib = compile(src, ImplementationPolicy::Generated);
  EXPECT_FALSE(lib->handle);
  EXPECT_NE(lib->error.find("bufferize first"), std::string::npos) << lib->error;
}

} // namespace
