//===- CPUCodegenTest.cpp - compile kernels to .so, dlopen, run -----------===//
//
// Execution tests of the CPU code generator: each test compiles Domain or
// Kernel IR in-process to a shared library, loads it with dlopen and checks
// its numbers against a plain C++ reference.
//
//===----------------------------------------------------------------------===//

#include "CompiledLibrary.h"
#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Target/CPU/MemRefABI.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <gtest/gtest.h>

#include <cmath>
#include <dlfcn.h>
#include <limits>
#include <random>
#include <string>
#include <vector>

using namespace linnet::cpu;

namespace {

using Vec = MemRefDescriptor<float, 1>;
using Mat = MemRefDescriptor<float, 2>;
using Idx = MemRefDescriptor<int64_t, 1>;

using Library = test::CompiledLibrary;

std::unique_ptr<Library> compile(const std::string &source, CodegenOptions options = {}) {
  return test::compileLibrary(source, options);
}

std::string readFile(const std::string &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

const char *kSum = R"(
"gf.reducer"() <{sym_name = "sum", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  %s = arith.addf %a, %b : f32
  "gf.reducer_yield"(%s) : (f32) -> ()
}, {
^bb0(%s: f32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()
)";

// max with an empty-row identity of -inf, and a finalize that is not the
// identity map (state * 1 + 0 is folded away; use a real op: max(s, -inf)).
const char *kMax = R"(
"gf.reducer"() <{sym_name = "max", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32], result_types = [f32]}> ({
  %z = arith.constant 0xFF800000 : f32
  "gf.reducer_yield"(%z) : (f32) -> ()
}, {
^bb0(%m: f32):
  "gf.reducer_yield"(%m) : (f32) -> ()
}, {
^bb0(%a: f32, %b: f32):
  %s = arith.maximumf %a, %b : f32
  "gf.reducer_yield"(%s) : (f32) -> ()
}, {
^bb0(%s: f32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()
)";

/// Domain IR: out[d] = reduce over CSR edges of x[src] * weight[e].
std::string csrAggregation(const std::string &reducer, const std::string &reducerName) {
  return reducer + R"(
func.func @agg(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@)" + reducerName + R"(], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}
)";
}

using AggFn = void (*)(Idx *, Idx *, Vec *, Vec *, Vec *);

struct Csr {
  std::vector<int64_t> rowPtr, colIdx;
  int64_t numSrc = 0;
  int64_t rows() const { return static_cast<int64_t>(rowPtr.size()) - 1; }
};

Csr randomCsr(int64_t rows, int64_t numSrc, int maxDegree, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> degree(0, maxDegree);
  std::uniform_int_distribution<int64_t> src(0, numSrc - 1);
  Csr g;
  g.numSrc = numSrc;
  g.rowPtr.push_back(0);
  for (int64_t d = 0; d < rows; ++d) {
    int k = degree(rng);
    for (int i = 0; i < k; ++i)
      g.colIdx.push_back(src(rng));
    g.rowPtr.push_back(static_cast<int64_t>(g.colIdx.size()));
  }
  return g;
}

std::vector<float> randomVector(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float &f : v)
    f = u(rng);
  return v;
}

std::vector<float> runAgg(AggFn fn, Csr &g, std::vector<float> &x,
                          std::vector<float> &w) {
  std::vector<float> out(g.rows(), 12345.0f);
  Idx rp = memref1d(g.rowPtr.data(), g.rowPtr.size());
  Idx ci = memref1d(g.colIdx.data(), g.colIdx.size());
  Vec xs = memref1d(x.data(), x.size()), ws = memref1d(w.data(), w.size());
  Vec os = memref1d(out.data(), out.size());
  fn(&rp, &ci, &xs, &ws, &os);
  return out;
}

TEST(CPUCodegen, SeedWalkthroughFromFixture) {
  // The fixture's Kernel IR after all four gf passes, task planning included.
  std::string fixture = readFile(LINNET_SOURCE_DIR "/test/mlir/distributed-plan.mlir");
  ASSERT_FALSE(fixture.empty());
  auto lib = compile(fixture);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<AggFn>(lib->symbol("_mlir_ciface_distributed"));
  ASSERT_TRUE(fn);
  Csr g{{0, 2, 3, 3}, {0, 1, 1}, 2};
  std::vector<float> x{2, 3}, w{4, 5, 2};
  EXPECT_EQ(runAgg(fn, g, x, w), (std::vector<float>{23, 6, 0}));
}

TEST(CPUCodegen, PackedEntryFollowsRuntimeABI) {
  // linnet_entry_F(void **args): the runtime's linnet-cpu-packed-v1.
  auto lib = compile(csrAggregation(kSum, "sum"));
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<void (*)(void **)>(lib->symbol("linnet_entry_agg"));
  ASSERT_TRUE(fn);
  int64_t rowPtr[] = {0, 2, 3, 3}, colIdx[] = {0, 1, 1};
  float x[] = {2, 3}, w[] = {4, 5, 2}, out[] = {-1, -1, -1};
  Idx rp = memref1d(rowPtr, 4), ci = memref1d(colIdx, 3);
  Vec xs = memref1d(x, 2), ws = memref1d(w, 3), os = memref1d(out, 3);
  void *args[] = {&rp, &ci, &xs, &ws, &os};
  fn(args);
  EXPECT_EQ(std::vector<float>(out, out + 3), (std::vector<float>{23, 6, 0}));
}

TEST(CPUCodegen, TupleStateReducerWithFinalize) {
  // mean: state (sum, count), lift m -> (m, 1), finalize sum / max(count, 1).
  std::string src = R"(
"gf.reducer"() <{sym_name = "mean", kind = "algebraic", associative = true, commutative = true, message_types = [f32], state_types = [f32, f32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  "gf.reducer_yield"(%z, %z) : (f32, f32) -> ()
}, {
^bb0(%m: f32):
  %one = arith.constant 1.0 : f32
  "gf.reducer_yield"(%m, %one) : (f32, f32) -> ()
}, {
^bb0(%s0: f32, %c0: f32, %s1: f32, %c1: f32):
  %s = arith.addf %s0, %s1 : f32
  %c = arith.addf %c0, %c1 : f32
  "gf.reducer_yield"(%s, %c) : (f32, f32) -> ()
}, {
^bb0(%s: f32, %c: f32):
  %one = arith.constant 1.0 : f32
  %n = arith.maximumf %c, %one : f32
  %r = arith.divf %s, %n : f32
  "gf.reducer_yield"(%r) : (f32) -> ()
}) : () -> ()
)";
  auto lib = compile(csrAggregation(src, "mean"));
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<AggFn>(lib->symbol("_mlir_ciface_agg"));
  ASSERT_TRUE(fn);
  Csr g{{0, 2, 3, 3}, {0, 1, 1}, 2};
  std::vector<float> x{2, 3}, w{4, 5, 2};
  EXPECT_EQ(runAgg(fn, g, x, w), (std::vector<float>{11.5f, 6, 0}));
}

std::vector<float> referenceAgg(const Csr &g, const std::vector<float> &x,
                                const std::vector<float> &w, bool max) {
  std::vector<float> out(g.rows());
  for (int64_t d = 0; d < g.rows(); ++d) {
    float acc = max ? -std::numeric_limits<float>::infinity() : 0.0f;
    for (int64_t e = g.rowPtr[d]; e < g.rowPtr[d + 1]; ++e) {
      float m = x[g.colIdx[e]] * w[e];
      acc = max ? std::max(acc, m) : acc + m;
    }
    out[d] = acc;
  }
  return out;
}

void expectNear(const std::vector<float> &got, const std::vector<float> &want,
                float tol = 1e-5f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isinf(want[i])) {
      EXPECT_EQ(got[i], want[i]) << "at " << i;
      continue;
    }
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::fabs(want[i]))) << "at " << i;
  }
}

TEST(CPUCodegen, RandomGraphSumMatchesReference) {
  auto lib = compile(csrAggregation(kSum, "sum"));
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<AggFn>(lib->symbol("_mlir_ciface_agg"));
  ASSERT_TRUE(fn);
  Csr g = randomCsr(2000, 1500, 24, 7);
  auto x = randomVector(g.numSrc, 1), w = randomVector(g.colIdx.size(), 2);
  expectNear(runAgg(fn, g, x, w), referenceAgg(g, x, w, false));
}

TEST(CPUCodegen, SerialLoopsMatchReference) {
  CodegenOptions serial;
  serial.parallel = false;
  serial.optLevel = 1;
  auto lib = compile(csrAggregation(kSum, "sum"), serial);
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<AggFn>(lib->symbol("_mlir_ciface_agg"));
  ASSERT_TRUE(fn);
  Csr g = randomCsr(300, 50, 9, 11);
  auto x = randomVector(g.numSrc, 3), w = randomVector(g.colIdx.size(), 4);
  expectNear(runAgg(fn, g, x, w), referenceAgg(g, x, w, false));
}

TEST(CPUCodegen, MaxReducerIsInlinedNotSummed) {
  auto lib = compile(csrAggregation(kMax, "max"));
  ASSERT_TRUE(lib->handle) << lib->error;
  auto fn = reinterpret_cast<AggFn>(lib->symbol("_mlir_ciface_agg"));
  ASSERT_TRUE(fn);
  Csr seed{{0, 2, 3, 3}, {0, 1, 1}, 2};
  std::vector<float> x{2, 3}, w{4, 5, 2};
  auto out = runAgg(fn, seed, x, w);
  EXPECT_EQ(out[0], 15.0f);
  EXPECT_EQ(out[1], 6.0f);
  EXPECT_EQ(out[2], -std::numeric_limits<float>::infinity()); // max's identity
  Csr g = randomCsr(1000, 700, 16, 5);
  auto xr = randomVector(g.numSrc, 8), wr = randomVector(g.colIdx.size(), 9);
  expectNear(runAgg(fn, g, xr, wr), referenceAgg(g, xr, wr, true));
}

TEST(CPUCodegen, FeatureAxisIsAVector) {
  // x[src, f] * w[e] over a 48-wide feature axis, summed per destination.
  std::string src = R"(
"gf.reducer"() <{sym_name = "vsum", kind = "algebraic", associative = true, commutative = true, message_types = [tensor<48xf32>], state_types = [tensor<48xf32>], result_types = [tensor<48xf32>]}> ({
  %z = arith.constant dense<0.0> : tensor<48xf32>
  "gf.reducer_yield"(%z) : (tensor<48xf32>) -> ()
}, {
^bb0(%m: tensor<48xf32>):
  "gf.reducer_yield"(%m) : (tensor<48xf32>) -> ()
}, {
^bb0(%a: tensor<48xf32>, %b: tensor<48xf32>):
  %s = arith.addf %a, %b : tensor<48xf32>
  "gf.reducer_yield"(%s) : (tensor<48xf32>) -> ()
}, {
^bb0(%s: tensor<48xf32>):
  "gf.reducer_yield"(%s) : (tensor<48xf32>) -> ()
}) : () -> ()
func.func @agg(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x48xf32>, %w: tensor<?xf32>) -> tensor<?x48xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@vsum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: tensor<48xf32>, %b: f32):
    %bs = tensor.splat %b : tensor<48xf32>
    %m = arith.mulf %a, %bs : tensor<48xf32>
    "gf.yield"(%m) : (tensor<48xf32>) -> ()
  }) : (!gf.relation, tensor<?x48xf32>, tensor<?xf32>) -> tensor<?x48xf32>
  return %o : tensor<?x48xf32>
}
)";
  auto lib = compile(src);
  ASSERT_TRUE(lib->handle) << lib->error;
  using Fn = void (*)(Idx *, Idx *, Mat *, Vec *, Mat *);
  auto fn = reinterpret_cast<Fn>(lib->symbol("_mlir_ciface_agg"));
  ASSERT_TRUE(fn);
  const int64_t F = 48;
  Csr g = randomCsr(500, 400, 12, 21);
  auto x = randomVector(g.numSrc * F, 22), w = randomVector(g.colIdx.size(), 23);
  std::vector<float> out(g.rows() * F, 777.0f), want(g.rows() * F, 0.0f);
  for (int64_t d = 0; d < g.rows(); ++d)
    for (int64_t e = g.rowPtr[d]; e < g.rowPtr[d + 1]; ++e)
      for (int64_t f = 0; f < F; ++f)
        want[d * F + f] += x[g.colIdx[e] * F + f] * w[e];
  Idx rp = memref1d(g.rowPtr.data(), g.rowPtr.size());
  Idx ci = memref1d(g.colIdx.data(), g.colIdx.size());
  Mat xs = memref2d(x.data(), g.numSrc, F), os = memref2d(out.data(), g.rows(), F);
  Vec ws = memref1d(w.data(), w.size());
  fn(&rp, &ci, &xs, &ws, &os);
  expectNear(out, want);
}

/// Dense and triangular relations: out[d] = sum_s x[s] * a[edge] * y[d],
/// with edge ids row-major over the (d, s) pairs.
std::string implicitRelation(const std::string &realization) {
  return std::string(kSum) + R"(
func.func @rel(%x: tensor<?xf32>, %a: tensor<?xf32>, %y: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "d", version = 0, realization = ")" +
         realization + R"(", origin = "external", lifecycle = "frozen", num_src = 5, num_dst = 5}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x, %a, %y) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 3>, snapshot_versions = array<i64: 0, 0, 0>, effects = ["read", "read", "read"], deterministic = false, input_roles = ["src", "edge", "dst"], input_names = ["x", "a", "y"]}> ({
  ^bb0(%xs: f32, %ae: f32, %yd: f32):
    %m0 = arith.mulf %xs, %ae : f32
    %m = arith.mulf %m0, %yd : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}
)";
}

TEST(CPUCodegen, DenseAndTriangularRelations) {
  using Fn = void (*)(Vec *, Vec *, Vec *, Vec *);
  const int64_t n = 5;
  for (bool triangular : {false, true}) {
    SCOPED_TRACE(triangular ? "triangular" : "dense");
    auto lib = compile(implicitRelation(triangular ? "triangular" : "dense"));
    ASSERT_TRUE(lib->handle) << lib->error;
    auto fn = reinterpret_cast<Fn>(lib->symbol("_mlir_ciface_rel"));
    ASSERT_TRUE(fn);
    int64_t edges = triangular ? n * (n + 1) / 2 : n * n;
    auto x = randomVector(n, 31), a = randomVector(edges, 32), y = randomVector(n, 33);
    std::vector<float> out(n), want(n, 0.0f);
    for (int64_t d = 0; d < n; ++d) {
      int64_t count = triangular ? d + 1 : n;
      int64_t base = triangular ? d * (d + 1) / 2 : d * n;
      for (int64_t s = 0; s < count; ++s)
        want[d] += x[s] * a[base + s] * y[d];
    }
    Vec xs = memref1d(x.data(), n), as = memref1d(a.data(), edges),
        ys = memref1d(y.data(), n), os = memref1d(out.data(), n);
    fn(&xs, &as, &ys, &os);
    expectNear(out, want);
  }
}

TEST(CPUCodegen, UnsupportedRegionOpIsAnError) {
  // A message region that reads a whole tensor (tensor.extract) has no CPU
  // lowering yet: the error names the op instead of miscompiling.
  std::string src = std::string(kSum) + R"(
func.func @bad(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x4xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%a: tensor<4xf32>):
    %c0 = arith.constant 0 : index
    %m = tensor.extract %a[%c0] : tensor<4xf32>
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?x4xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}
)";
  auto lib = compile(src);
  EXPECT_FALSE(lib->handle);
  EXPECT_NE(lib->error.find("tensor.extract"), std::string::npos) << lib->error;
}

} // namespace
