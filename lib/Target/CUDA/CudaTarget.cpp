//===- CudaTarget.cpp - The CUDA target ------------------------------------===//
//
// CudaTarget.h describes the pipeline. The host side reuses the CPU
// target's lowering to loops and its LLVM pipeline (CodegenOptions'
// linalgAsLoops, afterLoops and genericAllocation hooks), so both targets
// compile the same loops: the CUDA target decides only what runs where.
//
//===----------------------------------------------------------------------===//

#include "linnet/Target/CUDA/CudaTarget.h"

#include "linnet/Config.h"
#include "linnet/Target/CPU/CPUCodegen.h"
#include "linnet/Dialect/Gf/Transforms/RelationBuilder.h"
#include "linnet/Target/CPU/Passes.h"
#include "linnet/Target/CUDA/Passes.h"

#include "mlir/Conversion/AffineToStandard/AffineToStandard.h"
#include "mlir/Conversion/GPUToNVVM/GPUToNVVMPass.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/ReconcileUnrealizedCasts/ReconcileUnrealizedCasts.h"
#include "mlir/Conversion/SCFToControlFlow/SCFToControlFlow.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVMPass.h"
#include "mlir/Conversion/VectorToSCF/VectorToSCF.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Target/LLVM/NVVM/Target.h"
#include "mlir/Target/LLVMIR/Dialect/GPU/GPUToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Transforms/Passes.h"
#include "linnet/Support/MlirDiagnostics.h"
#include "linnet/Support/Timing.h"

#include "llvm/IR/DataLayout.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Regex.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

#include <nlohmann/json.hpp>

#include <cstdlib>

using namespace mlir;

#ifndef LINNET_PTXAS
#define LINNET_PTXAS ""
#endif
#ifndef LINNET_CUDA_LIBDEVICE
#define LINNET_CUDA_LIBDEVICE ""
#endif

namespace linnet::cuda {

namespace {

llvm::Error fail(const llvm::Twine &what) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), what);
}

/// What MLIR reports while a pipeline runs, located (support::DiagError).
using FirstError = support::DiagnosticCollector;

/// The mapping: loops (on memrefs) to gpu.launch kernels.
void buildMapPipeline(OpPassManager &pm) {
  // Relation tiles first: canonicalization folds a tile loop of a single
  // tile and its schedule with it.
  LinnetCUDAMapToGPUOptions tiles;
  tiles.laneTilesOnly = true;
  pm.addPass(createLinnetCUDAMapToGPU(tiles));
  // Cleaned up before the rest, not after: canonicalization would hoist
  // the constants the mapping builds inside kernels back to the host.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createLinnetCUDAMapToGPU());
}

/// Memref-level linalg ops the target writes itself before the rest
/// become parallel loops.
void buildLinalgPipeline(OpPassManager &pm, const std::string &implementation, bool tf32 = false) {
  LinnetCUDABindLibraryOptions bind;
  bind.implementation = implementation;
  bind.tf32 = tf32;
  pm.addPass(createLinnetCUDABindLibrary(bind));
  pm.addPass(createLinnetCUDASplitReductions());
}

std::string ptxasPath() {
  if (const char *env = std::getenv("LINNET_PTXAS"); env && *env)
    return env;
  if (*LINNET_PTXAS && llvm::sys::fs::can_execute(LINNET_PTXAS))
    return LINNET_PTXAS;
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  return "";
}

std::string libdevicePath() {
  if (const char *env = std::getenv("LINNET_CUDA_LIBDEVICE"); env && *env)
    return env;
  if (*LINNET_CUDA_LIBDEVICE && llvm::sys::fs::exists(LINNET_CUDA_LIBDEVICE))
    return LINNET_CUDA_LIBDEVICE;
  return "";
}

/// NVPTX's data layout for this chip, from LLVM's own target (nullopt when
/// this LLVM was built without it; the serializer then reports that).
std::optional<std::string> nvptxDataLayout() {
  static std::once_flag once;
  std::call_once(once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
  });
  std::string error;
  const char *triple = "nvptx64-nvidia-cuda";
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return std::nullopt;
  std::unique_ptr<llvm::TargetMachine> tm(
      target->createTargetMachine(triple, kChip, "+ptx80", {}, std::nullopt));
  if (!tm)
    return std::nullopt;
  return tm->createDataLayout().getStringRepresentation();
}

/// Runs ptxas on `ptx`: the cubin's bytes and ptxas -v's report.
llvm::Error runPtxas(const std::string &ptxas, const std::string &ptx, DeviceCode &code) {
  llvm::SmallString<128> dir;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory("linnet-ptxas", dir))
    return llvm::createStringError(ec, "cannot create a temporary directory for ptxas");
  auto cleanup = [&] { llvm::sys::fs::remove_directories(dir); };
  std::string in = (dir + "/kernels.ptx").str(), out = (dir + "/kernels.cubin").str(),
              log = (dir + "/ptxas.log").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec) {
      cleanup();
      return llvm::createStringError(ec, "cannot write the PTX for ptxas");
    }
    os << ptx;
  }
  std::string arch = std::string("-arch=") + kChip;
  std::vector<llvm::StringRef> args = {ptxas, arch, "-v", "-O3", "-o", out, in};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(log), llvm::StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0, &message);
  auto logText = llvm::MemoryBuffer::getFile(log);
  std::string report = logText ? (*logText)->getBuffer().str() : "";
  if (rc != 0) {
    cleanup();
    return fail("ptxas (" + ptxas + ") refused the PTX (exit " + std::to_string(rc) + ")" +
                (message.empty() ? "" : ": " + message) + (report.empty() ? "" : ":\n" + report));
  }
  auto cubin = llvm::MemoryBuffer::getFile(out, /*IsText=*/false, /*RequiresNullTerminator=*/false);
  if (!cubin) {
    cleanup();
    return llvm::createStringError(cubin.getError(), "ptxas wrote no cubin");
  }
  code.cubin = (*cubin)->getBuffer().str();
  code.kernels = parsePtxasReport(report);
  code.ptxas = ptxas;
  cleanup();
  return llvm::Error::success();
}


/// The host shim linked into a device build's model.so (docs/cuda-abi.md):
/// the host code's launches, read-backs and allocations call through
/// `linnet_cuda_host`, which the CUDA runtime fills after loading the
/// library. The library itself names no CUDA symbol: it loads anywhere, and
/// a call before the table is set fails loudly instead of crashing.
const char *hostShimSource() {
  return R"C(
#include <stdint.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct linnet_cuda_host_table {
  uint64_t version; /* 1 */
  void *session;
  void (*launch)(void *session, int64_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx,
                 int64_t by, int64_t bz, int64_t shared, const int64_t *slots, int64_t nslots);
  void (*copy_to_host)(void *session, void *dst, uint64_t src, int64_t bytes);
  void *(*alloc)(void *session, uint64_t bytes);
  void (*release)(void *session, void *ptr);
  int32_t (*sgemm)(void *session, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, uint64_t a,
                   int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c, int64_t ldc); /* version 2 */
  void (*mark)(void *session, int64_t task, int64_t end); /* version 3 */
  const void *(*profile_take)(void *session, uint64_t *count, uint64_t *calls);
  int32_t (*gemm)(void *session, int32_t type, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k,
                  uint64_t a, int64_t lda, uint64_t b, int64_t ldb, float beta, uint64_t c,
                  int64_t ldc); /* version 4 */
  void (*copy_to_device)(void *session, uint64_t dst, const void *src, int64_t bytes); /* version 5 */
} linnet_cuda_host_table;
linnet_cuda_host_table linnet_cuda_host; /* kHostTableSymbol, Abi.h's HostTable */
static void linnet_cuda_unbound(void) {
  fprintf(stderr, "linnet: a CUDA artifact's code ran without the CUDA runtime (linnet_cuda_host unset)\n");
  abort();
}
void linnet_cuda_launch_slots(int64_t kernel, int64_t gx, int64_t gy, int64_t gz, int64_t bx, int64_t by,
                              int64_t bz, int64_t shared, int64_t slots, int64_t nslots) {
  if (!linnet_cuda_host.launch) linnet_cuda_unbound();
  linnet_cuda_host.launch(linnet_cuda_host.session, kernel, gx, gy, gz, bx, by, bz, shared,
                          (const int64_t *)(intptr_t)slots, nslots);
}
void linnet_cuda_copy_to_host(int64_t dst, int64_t src, int64_t bytes) {
  if (!linnet_cuda_host.copy_to_host) linnet_cuda_unbound();
  linnet_cuda_host.copy_to_host(linnet_cuda_host.session, (void *)(intptr_t)dst, (uint64_t)src, bytes);
}
void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  if (!linnet_cuda_host.alloc) linnet_cuda_unbound();
  return linnet_cuda_host.alloc(linnet_cuda_host.session, bytes);
}
void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment, size_t bytes) {
  (void)alignment; /* device allocations are aligned to 256 bytes */
  return _mlir_memref_to_llvm_alloc(bytes);
}
void _mlir_memref_to_llvm_free(void *ptr) {
  if (!linnet_cuda_host.release) linnet_cuda_unbound();
  linnet_cuda_host.release(linnet_cuda_host.session, ptr);
}
int32_t linnet_cuda_sgemm(int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, int64_t a, int64_t lda,
                          int64_t b, int64_t ldb, float beta, int64_t c, int64_t ldc) {
  if (linnet_cuda_host.version < 2 || !linnet_cuda_host.sgemm)
    return 1; /* no library: the generated kernel runs */
  return linnet_cuda_host.sgemm(linnet_cuda_host.session, transa, transb, m, n, k, (uint64_t)a, lda, (uint64_t)b,
                                ldb, beta, (uint64_t)c, ldc);
}
int32_t linnet_cuda_gemm(int32_t type, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, int64_t a,
                         int64_t lda, int64_t b, int64_t ldb, float beta, int64_t c, int64_t ldc) {
  if (linnet_cuda_host.version < 4 || !linnet_cuda_host.gemm)
    return 1; /* no library: the generated kernel runs */
  return linnet_cuda_host.gemm(linnet_cuda_host.session, type, transa, transb, m, n, k, (uint64_t)a, lda,
                               (uint64_t)b, ldb, beta, (uint64_t)c, ldc);
}
/* linnet build --profile: command boundaries are CUDA events on the stream. */
void linnet_prof_begin(int64_t task) {
  if (linnet_cuda_host.version >= 3 && linnet_cuda_host.mark)
    linnet_cuda_host.mark(linnet_cuda_host.session, task, 0);
}
void linnet_prof_end(int64_t task) {
  if (linnet_cuda_host.version >= 3 && linnet_cuda_host.mark)
    linnet_cuda_host.mark(linnet_cuda_host.session, task, 1);
}
const void *linnet_profile_take(uint64_t *count, uint64_t *calls) {
  *count = *calls = 0;
  if (linnet_cuda_host.version < 3 || !linnet_cuda_host.profile_take)
    return NULL;
  return linnet_cuda_host.profile_take(linnet_cuda_host.session, count, calls);
}
)C";
}

/// The symbol a device build's host code calls for a relation built from
/// coordinates (std.graph's knn, radius): relationShimSource's wrapper.
constexpr const char *kDeviceRelationBuilder = "linnet_cuda_relation_build";

/// A device build's relation builder: the CPU's (RelationBuild.c, linked
/// beside it) on host copies. The coordinates come back from the device,
/// the builder runs on this CPU, and the row offsets and column indices go
/// to the device in the stream's order (host table version 5). The
/// destination buffers come back first, so what the builder leaves
/// unwritten (the unused tail of the indices) stays as it was.
const char *relationShimSource() {
  return R"C(
/* After RelationBuild.c: its descriptor types and builder. */
typedef linnet_memref2_f64 linnet_cuda_rb_f64;
typedef linnet_memref1_i64 linnet_cuda_rb_i64;
/* Elements from the base up to the last one the view reaches (0: none). */
static int64_t linnet_cuda_rb_extent(int64_t offset, const int64_t *sizes, const int64_t *strides, int rank) {
  int64_t last = offset;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] <= 0)
      return 0;
    last += (sizes[d] - 1) * strides[d];
  }
  return last + 1;
}
static void *linnet_cuda_rb_fetch(const void *device, int64_t elements) {
  void *host = malloc(elements > 0 ? (size_t)elements * 8 : 8);
  if (!host) {
    fprintf(stderr, "linnet: out of memory: cannot copy %lld coordinates to the host\n", (long long)elements);
    abort();
  }
  if (elements > 0)
    linnet_cuda_host.copy_to_host(linnet_cuda_host.session, host, (uint64_t)(uintptr_t)device, elements * 8);
  return host;
}
void _mlir_ciface_linnet_cuda_relation_build(linnet_cuda_rb_f64 *pos_dst, linnet_cuda_rb_f64 *pos_src,
                                             linnet_cuda_rb_i64 *row_ptr, linnet_cuda_rb_i64 *col_idx, int64_t kind,
                                             int64_t k, int64_t exclude_self, double r) {
  if (!linnet_cuda_host.copy_to_host) linnet_cuda_unbound();
  if (linnet_cuda_host.version < 5 || !linnet_cuda_host.copy_to_device) {
    fprintf(stderr, "linnet: this CUDA runtime cannot copy a relation to the device (host table version %llu < 5)\n",
            (unsigned long long)linnet_cuda_host.version);
    abort();
  }
  int64_t nd = linnet_cuda_rb_extent(pos_dst->offset, pos_dst->sizes, pos_dst->strides, 2);
  int64_t ns = linnet_cuda_rb_extent(pos_src->offset, pos_src->sizes, pos_src->strides, 2);
  int64_t nr = linnet_cuda_rb_extent(row_ptr->offset, row_ptr->sizes, row_ptr->strides, 1);
  int64_t nc = linnet_cuda_rb_extent(col_idx->offset, col_idx->sizes, col_idx->strides, 1);
  linnet_cuda_rb_f64 hd = *pos_dst, hs = *pos_src;
  linnet_cuda_rb_i64 hr = *row_ptr, hc = *col_idx;
  hd.aligned = hd.allocated = (double *)linnet_cuda_rb_fetch(pos_dst->aligned, nd);
  /* The same points (knn_graph(x)): one copy, which the builder sees as itself. */
  int same = pos_src->aligned == pos_dst->aligned;
  hs.aligned = hs.allocated = same ? hd.aligned : (double *)linnet_cuda_rb_fetch(pos_src->aligned, ns);
  hr.aligned = hr.allocated = (int64_t *)linnet_cuda_rb_fetch(row_ptr->aligned, nr);
  hc.aligned = hc.allocated = (int64_t *)linnet_cuda_rb_fetch(col_idx->aligned, nc);
  _mlir_ciface_linnet_relation_build(&hd, &hs, &hr, &hc, kind, k, exclude_self, r);
  if (nr > 0)
    linnet_cuda_host.copy_to_device(linnet_cuda_host.session, (uint64_t)(uintptr_t)row_ptr->aligned, hr.aligned, nr * 8);
  if (nc > 0)
    linnet_cuda_host.copy_to_device(linnet_cuda_host.session, (uint64_t)(uintptr_t)col_idx->aligned, hc.aligned, nc * 8);
  free(hd.aligned);
  if (!same)
    free(hs.aligned);
  free(hr.aligned);
  free(hc.aligned);
}
)C";
}

/// The emulated build's `linnet_cuda_sgemm` (--emulate): cuBLAS's sgemm in
/// its column-major convention on host memory, so the host code's call
/// (operands swapped, leading dimensions, transposes) is checked against
/// the interpreter without a GPU. LINNET_EMULATE_NO_CUBLAS=1 makes it
/// decline, as a runtime without cuBLAS does: the fallback kernels run.
const char *emulationShimSource() {
  return R"C(
#include <stdint.h>
#include <stdlib.h>
int32_t linnet_cuda_sgemm(int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, int64_t a, int64_t lda,
                          int64_t b, int64_t ldb, float beta, int64_t c, int64_t ldc) {
  const char *off = getenv("LINNET_EMULATE_NO_CUBLAS");
  if (off && *off && *off != '0')
    return 1;
  /* What cuBLAS refuses, declined as the runtime declines it. */
  if (lda < (transa ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) || ldb < (transb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) ||
      ldc < (m > 1 ? m : 1))
    return 1;
  const float *A = (const float *)(intptr_t)a, *B = (const float *)(intptr_t)b;
  float *C = (float *)(intptr_t)c;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        float x = transa ? A[l + i * lda] : A[i + l * lda];
        float y = transb ? B[j + l * ldb] : B[l + j * ldb];
        sum += x * y;
      }
      C[i + j * ldc] = sum + beta * C[i + j * ldc];
    }
  return 0;
}
/* cublasGemmEx with half A and B (type 1 bf16, 2 f16), f32 C and f32
   accumulation: each product of two widened halves is exact in f32. */
static float linnet_half_to_f32(uint16_t h, int32_t type) {
  union { uint32_t u; float f; } v;
  if (type == 1) {
    v.u = (uint32_t)h << 16;
    return v.f;
  }
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
  if (exp == 0x1fu)
    v.u = sign | 0x7f800000u | (man << 13);
  else if (exp != 0)
    v.u = sign | ((exp + 112u) << 23) | (man << 13);
  else if (man == 0)
    v.u = sign;
  else {
    v.f = (float)man * 5.9604644775390625e-8f; /* man * 2^-24, exact */
    v.u |= sign;
  }
  return v.f;
}
static float linnet_tf32(float f) {
  union { uint32_t u; float f; } v;
  v.f = f;
  if ((v.u & 0x7f800000u) == 0x7f800000u) /* inf, nan: kept */
    return f;
  v.u = (v.u + 0xfffu + ((v.u >> 13) & 1u)) & 0xffffe000u;
  return v.f;
}
int32_t linnet_cuda_gemm(int32_t type, int32_t transa, int32_t transb, int64_t m, int64_t n, int64_t k, int64_t a,
                         int64_t lda, int64_t b, int64_t ldb, float beta, int64_t c, int64_t ldc) {
  const char *off = getenv("LINNET_EMULATE_NO_CUBLAS");
  if (off && *off && *off != '0')
    return 1;
  if ((type < 1 || type > 3) || lda < (transa ? (k > 1 ? k : 1) : (m > 1 ? m : 1)) ||
      ldb < (transb ? (n > 1 ? n : 1) : (k > 1 ? k : 1)) || ldc < (m > 1 ? m : 1))
    return 1;
  /* Each operand element widened to f32: a half (type 1 bf16, 2 f16), or an
     f32 rounded to TF32 (type 3, CUBLAS_COMPUTE_32F_FAST_TF32: to nearest
     even here; cuBLAS leaves its rounding unspecified). Products and sums
     in f32. */
  float *C = (float *)(intptr_t)c;
  for (int64_t j = 0; j < n; ++j)
    for (int64_t i = 0; i < m; ++i) {
      float sum = 0.0f;
      for (int64_t l = 0; l < k; ++l) {
        int64_t ia = transa ? l + i * lda : i + l * lda, ib = transb ? j + l * ldb : l + j * ldb;
        float x = type == 3 ? linnet_tf32(((const float *)(intptr_t)a)[ia])
                            : linnet_half_to_f32(((const uint16_t *)(intptr_t)a)[ia], type);
        float y = type == 3 ? linnet_tf32(((const float *)(intptr_t)b)[ib])
                            : linnet_half_to_f32(((const uint16_t *)(intptr_t)b)[ib], type);
        sum += x * y;
      }
      C[i + j * ldc] = sum + beta * C[i + j * ldc];
    }
  return 0;
}
)C";
}

} // namespace

std::string ptxSymbolName(llvm::StringRef name) {
  std::string out;
  for (char c : name) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$')
      out += c;
    else if (c == '.')
      out += "_$_";
    else
      out += llvm::formatv("_${0:X-2}_", static_cast<unsigned char>(c)).str();
  }
  if (!out.empty() && std::isdigit(static_cast<unsigned char>(out[0])))
    out = "_" + out;
  return out;
}

std::vector<KernelResources> parsePtxasReport(llvm::StringRef text) {
  std::vector<KernelResources> out;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  llvm::Regex entry("Compiling entry function '([^']+)'");
  llvm::Regex frame("([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads");
  llvm::Regex regs("Used ([0-9]+) registers");
  llvm::Regex smem("([0-9]+) bytes smem");
  auto num = [](llvm::StringRef s) {
    int64_t v = 0;
    s.getAsInteger(10, v);
    return v;
  };
  for (llvm::StringRef line : lines) {
    llvm::SmallVector<llvm::StringRef> m;
    if (entry.match(line, &m)) {
      out.push_back({m[1].str()});
      continue;
    }
    if (out.empty())
      continue;
    KernelResources &k = out.back();
    if (frame.match(line, &m)) {
      k.stackBytes = num(m[1]);
      k.spillStores = num(m[2]);
      k.spillLoads = num(m[3]);
    }
    if (regs.match(line, &m))
      k.registers = num(m[1]);
    if (smem.match(line, &m))
      k.sharedBytes = num(m[1]);
  }
  return out;
}

llvm::Expected<DeviceCode> compileDeviceModule(ModuleOp gpuModules) {
  MLIRContext *ctx = gpuModules.getContext();
  FirstError errors(ctx);
  // One gpu.module for the artifact: every kernel in one image, functions
  // the kernels call (cloned into each outlined module) once.
  SmallVector<gpu::GPUModuleOp> modules(gpuModules.getOps<gpu::GPUModuleOp>());
  if (modules.empty())
    return DeviceCode{};
  OpBuilder b(ctx);
  b.setInsertionPointToEnd(gpuModules.getBody());
  auto merged = b.create<gpu::GPUModuleOp>(gpuModules.getLoc(), "linnet_kernels");
  SymbolTable mergedSymbols(merged);
  for (gpu::GPUModuleOp m : modules) {
    for (Operation &op : llvm::make_early_inc_range(m.getBody()->without_terminator())) {
      // A kernel takes its module's (unique) name, as the launches call it.
      if (auto fn = dyn_cast<gpu::GPUFuncOp>(op); fn && fn.isKernel())
        fn.setName(ptxSymbolName(m.getName()));
      auto sym = dyn_cast<SymbolOpInterface>(op);
      if (sym && mergedSymbols.lookup(sym.getName()))
        continue;
      op.remove();
      mergedSymbols.insert(&op);
    }
    m.erase();
  }
  // Every other symbol (device functions the kernels call, constants) as
  // PTX can spell it, its uses renamed with it.
  for (Operation &op : llvm::make_early_inc_range(merged.getBody()->without_terminator())) {
    auto sym = dyn_cast<SymbolOpInterface>(op);
    if (!sym || sym.getName() == ptxSymbolName(sym.getName()))
      continue;
    if (failed(mergedSymbols.rename(&op, ptxSymbolName(sym.getName()))))
      return fail("cannot rename the device symbol '" + sym.getName().str() + "'");
  }
  // Every memref a kernel takes points into a device allocation at its
  // base (docs/cuda-abi.md: the runtime's buffers come from cuMemAlloc,
  // 256-byte aligned; a view moves the offset, never the aligned pointer).
  // Said to LLVM, loads of 16-byte aligned rows (a feature row of a
  // multiple of 4 floats) become one vector load (ld.global.v4) instead of
  // four.
  for (auto fn : merged.getOps<gpu::GPUFuncOp>()) {
    if (!fn.isKernel() || fn.getBody().empty())
      continue;
    OpBuilder eb = OpBuilder::atBlockBegin(&fn.getBody().front());
    // The kernel's parameters only: the entry block's later arguments are
    // its workgroup attributions (shared memory, aligned as declared).
    // Shared scratch aligned to 16 bytes, declared so: LLVM's data layout
    // prefers 16 for arrays over 128 bits and vectorizes accesses by it,
    // which the PTX declaration must then promise.
    for (unsigned i = 0, e = fn.getNumWorkgroupAttributions(); i < e; ++i)
      fn.setWorkgroupAttributionAttr(i, LLVM::LLVMDialect::getAlignAttrName(), eb.getI64IntegerAttr(16));
    unsigned params = fn.getFunctionType().getNumInputs();
    for (BlockArgument arg : fn.getArguments().take_front(params))
      if (isa<MemRefType>(arg.getType()))
        eb.create<memref::AssumeAlignmentOp>(fn.getLoc(), arg, kDeviceBufferAlignment);
  }
  std::string libdevice = libdevicePath();
  SmallVector<Attribute> link;
  if (!libdevice.empty())
    link.push_back(b.getStringAttr(libdevice));
  auto target = NVVM::NVVMTargetAttr::get(ctx, /*optLevel=*/3, "nvptx64-nvidia-cuda", kChip, "+ptx80",
                                          /*flags=*/nullptr, link.empty() ? nullptr : b.getArrayAttr(link));
  merged.setTargetsAttr(b.getArrayAttr({target}));
  // The translation to LLVM IR creates each load and store with the ABI
  // alignment of the module's data layout, and the serializer sets NVPTX's
  // only afterwards: under the default layout (i64:32) every i64 (a row
  // offset, a column index) was read as two 32-bit halves.
  if (std::optional<std::string> layout = nvptxDataLayout())
    merged->setAttr(LLVM::LLVMDialect::getDataLayoutAttrName(), b.getStringAttr(*layout));

  PassManager pm(ctx);
  support::enablePassTiming(pm);
  OpPassManager &dev = pm.nest<gpu::GPUModuleOp>();
  dev.addPass(createLinnetCUDAWidenHalfMath());
  // Index checks the kernel's loops decide, folded as on the host.
  dev.addPass(cpu::createLinnetCPUFoldLoopChecks());
  dev.addPass(createCanonicalizerPass());
  dev.addPass(createLowerAffinePass());
  dev.addPass(arith::createArithExpandOpsPass());
  dev.addPass(createConvertVectorToSCFPass(VectorTransferToSCFOptions().enableFullUnroll()));
  dev.addPass(createConvertSCFToCFPass());
  dev.addPass(createCanonicalizerPass());
  dev.addPass(createCSEPass());
  dev.addPass(memref::createExpandStridedMetadataPass());
  dev.addPass(createLowerAffinePass());
  dev.addPass(createConvertVectorToLLVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  dev.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  // What gpu-to-nvvm leaves of math (integer abs, ...) lowers as on the host.
  dev.addPass(createConvertMathToLLVMPass());
  dev.addPass(createReconcileUnrealizedCastsPass());
  GpuModuleToBinaryPassOptions binary;
  binary.compilationTarget = "isa";
  pm.addPass(createGpuModuleToBinaryPass(binary));
  if (failed(pm.run(gpuModules)))
    return errors.error("lowering the kernels to PTX failed");
  DeviceCode code;
  for (auto bin : gpuModules.getOps<gpu::BinaryOp>())
    for (Attribute a : bin.getObjects())
      if (auto obj = dyn_cast<gpu::ObjectAttr>(a))
        // The serializer NUL-terminates the assembly; ptxas reads it as text.
        code.ptx += obj.getObject().getValue().rtrim('\0').str();
  if (code.ptx.empty())
    return fail("the NVPTX back end produced no PTX");
  if (std::string ptxas = ptxasPath(); !ptxas.empty())
    if (llvm::Error e = runPtxas(ptxas, code.ptx, code))
      return std::move(e);
  return code;
}

void registerCUDAPipelines() {
  PassPipelineRegistration<>(
      "linnet-cuda-bufferize",
      "linnet build --target cuda's stage 02: -linnet-bufferize with relation rows split over lanes",
      [](OpPassManager &pm) { cpu::buildBufferizePipeline(pm, /*laneSplit=*/true); });
  PassPipelineRegistration<>(
      "linnet-cuda-lower-to-loops",
      "linnet build --target cuda's stage 03: scheduled gf kernels, sums split over lanes "
      "(-linnet-cuda-split-reductions) and the rest of linalg as plain parallel loops",
      [](OpPassManager &pm) {
        cpu::CodegenOptions options;
        options.linalgAsLoops = true;
        options.implementation = cpu::ImplementationPolicy::Generated;
        options.beforeLinalgLoops = [](OpPassManager &p) { buildLinalgPipeline(p, "auto"); };
        cpu::buildLowerToLoopsPipeline(pm, options);
      });
  PassPipelineRegistration<>(
      "linnet-cuda-lower-to-gpu",
      "linnet build --target cuda's stage 04: loops to gpu.launch kernels "
      "(-linnet-cuda-map-to-gpu{lane-tiles-only}, canonicalize, cse, -linnet-cuda-map-to-gpu)",
      [](OpPassManager &pm) { buildMapPipeline(pm); });
}

std::string CudaTarget::codeIdentity() const {
  return std::string(kChip) + "; host " + cpu::hostCodeIdentity();
}

std::string CudaTarget::unsupported(const target::CodegenRequest &request) const {
  if (request.distributed)
    return "--ranks: the cuda target does not build distributed artifacts yet (build for --target cpu)";
  if (request.hostKernels && request.emulate)
    return "--host-kernels: an --emulate build runs its kernels in its own library already";
  return "";
}

void CudaTarget::registerDialects(DialectRegistry &registry) const {
  cpu::registerCPUCodegenDialects(registry);
  cpu::registerBufferizationInterfaces(registry);
  registry.insert<gpu::GPUDialect, NVVM::NVVMDialect>();
  NVVM::registerNVVMTargetInterfaceExternalModels(registry);
  registerGPUDialectTranslation(registry);
  registerNVVMDialectTranslation(registry);
}

namespace {

/// FNV-1a, 64 bits: how the driver emulator matches a module image with the
/// host kernels built for it (an identity, not a security check).
uint64_t fnv1a(llvm::StringRef bytes) {
  uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

/// kernels.host.so: the outlined kernels as host functions
/// (-linnet-cuda-host-kernels, -linnet-cuda-cpuify) with, for each kernel
/// K, the entry the driver emulator's cuLaunchKernel calls,
/// `linnet_kernel_K(void **params, gx, gy, gz, bx, by, bz, shared)`, the
/// count of its parameter slots, and the identities of the images it
/// stands for (docs/cuda-abi.md, "The driver emulator").
llvm::Expected<std::string> compileHostKernels(ModuleOp kernels, const DeviceCode &device,
                                               const cpu::CodegenOptions &hostOptions) {
  MLIRContext *ctx = kernels.getContext();
  FirstError errors(ctx);
  PassManager pm(ctx);
  pm.addPass(createLinnetCUDAHostKernels());
  pm.addPass(createLinnetCUDACpuify());
  if (failed(pm.run(kernels)))
    return errors.error("the kernels for the driver emulator failed");
  std::string shim = llvm::formatv("#include <stdint.h>\n"
                                   "const uint64_t linnet_kernels_images[2] = {{{0}ull, {1}ull};\n",
                                   fnv1a(device.ptx), device.cubin.empty() ? 0 : fnv1a(device.cubin))
                         .str();
  for (auto fn : kernels.getOps<func::FuncOp>()) {
    auto name = fn->getAttrOfType<StringAttr>("linnet.host_kernel");
    if (!name)
      continue;
    int64_t slots = fn->getAttrOfType<IntegerAttr>("linnet.host_kernel_slots").getInt();
    std::string params = "int64_t, int64_t, int64_t, int64_t, int64_t, int64_t", args;
    for (int64_t i = 0; i < slots; ++i) {
      params += ", int64_t";
      args += llvm::formatv(", *(const int64_t *)p[{0}]", i).str();
    }
    // Pointers and 64-bit integers travel alike in the x86-64 and AArch64
    // calling conventions: every parameter is declared int64_t.
    shim += llvm::formatv("void linnet_host_{0}({1});\n"
                          "const int64_t linnet_kernel_{0}_params = {2};\n"
                          "void linnet_kernel_{0}(void **p, int64_t gx, int64_t gy, int64_t gz, int64_t bx, "
                          "int64_t by, int64_t bz, int64_t shared) {{\n"
                          "  (void)p; (void)shared;\n"
                          "  linnet_host_{0}(gx, gy, gz, bx, by, bz{3});\n}\n",
                          name.getValue(), params, slots, args)
                .str();
  }
  cpu::CodegenOptions options = hostOptions;
  options.afterLoops = nullptr;
  options.afterLoopsStages = 0;
  options.profile = false;
  options.genericAllocation = false; // a kernel's scratch is the host's malloc
  options.dumpIRDir.clear();
  options.extraShim = shim;
  return cpu::compileToSharedLibraryBytes(kernels, options);
}

} // namespace

llvm::Expected<target::GeneratedLibrary> CudaTarget::generateCode(ModuleOp module,
                                                                  const target::CodegenRequest &request) const {
  MLIRContext *ctx = module.getContext();
  // Relations built from coordinates (std.graph): an emulated build runs
  // the CPU's builder on its host memory; a device build's host code calls
  // the wrapper that runs it on host copies (relationShimSource).
  bool buildsRelations = false;
  if (auto builder = module.lookupSymbol<func::FuncOp>(gf::kRelationBuilder)) {
    buildsRelations = true;
    if (!request.emulate) {
      if (failed(SymbolTable::replaceAllSymbolUses(builder, StringAttr::get(ctx, kDeviceRelationBuilder), module)))
        return llvm::createStringError(llvm::inconvertibleErrorCode(), "renaming the relation builder failed");
      builder.setSymName(kDeviceRelationBuilder);
    }
  }
  {
    FirstError errors(ctx);
    // Relation rows split over lanes (the schedule's block_neighbors).
    if (failed(cpu::bufferize(module, /*laneSplit=*/true)))
      return errors.error("bufferization of the Task IR failed");
  }
  if (!request.dumpIRDir.empty())
    if (llvm::Error e = target::dumpStage(request.dumpIRDir, request.firstDumpStage, "bufferized.mlir", module))
      return std::move(e);
  std::string bufferizedIR;
  if (request.keepBufferizedIR)
    llvm::raw_string_ostream(bufferizedIR) << module;

  cpu::CodegenOptions options;
  options.runTaskPipeline = false;
  options.linalgAsLoops = true;
  options.implementation = cpu::ImplementationPolicy::Generated;
  options.beforeLinalgLoops = [&](OpPassManager &p) {
    buildLinalgPipeline(p, request.implementation, request.matmulPrecision == "tf32");
  };
  // Emulated kernels run their blocks on host threads; the host code of a
  // device build only launches.
  options.parallel = request.emulate && request.parallel;
  // The host code runs on the GPU machine's CPU, not necessarily this one.
  options.cpu = request.cpu;
  options.genericAllocation = !request.emulate;
  // A device build's temporaries are device memory: packed into one
  // arena a block execution (one allocation of the runtime's, which keeps
  // freed blocks for reuse), not taken from the host's workspace stack.
  options.workspaceStack = request.emulate;
  options.extraShim = request.emulate ? emulationShimSource() : hostShimSource();
  if (buildsRelations && !request.emulate)
    options.extraShim += std::string(cpu::relationBuildSource()) + relationShimSource();
  // Commands timed where they run: on the device, CUDA events the host
  // shim asks the runtime for; emulated, the CPU's clock.
  options.profile = request.profile;
  options.profileShim = request.emulate;
  options.dumpIRDir = request.dumpIRDir;
  options.firstDumpStage = request.firstDumpStage + 1;
  std::optional<DeviceCode> device;
  OwningOpRef<ModuleOp> hostKernels;
  std::vector<std::string> kernelNames;
  llvm::Error deviceError = llvm::Error::success();
  unsigned gpuStage = request.firstDumpStage + 2;
  options.afterLoopsStages = 2; // NN-gpu.mlir, NN-kernels.mlir
  options.afterLoops = [&](ModuleOp m) -> LogicalResult {
    support::TimingStage stage("loops to gpu kernels");
    PassManager pm(ctx);
    support::enablePassTiming(pm);
    buildMapPipeline(pm);
    if (failed(pm.run(m)))
      return failure();
    if (!request.dumpIRDir.empty())
      if (llvm::Error e = target::dumpStage(request.dumpIRDir, gpuStage, "gpu.mlir", m)) {
        deviceError = std::move(e);
        return failure();
      }
    // The kernels: outlined in a copy when the library emulates them, in
    // the module itself otherwise; either way the same outlining of the
    // same mapped loops.
    OwningOpRef<ModuleOp> copy;
    ModuleOp outlined = m;
    if (request.emulate) {
      copy = cast<ModuleOp>(m->clone());
      outlined = *copy;
    }
    PassManager outline(ctx);
    outline.addPass(createLinnetCUDAPromoteWorkgroup());
    // Constants and index arithmetic the host computed for a kernel (a
    // tile's rows, lanes, a zero column) move into it: the kernel's code
    // sees them as constants, not as parameters.
    outline.addPass(createGpuLauchSinkIndexComputationsPass());
    outline.addPass(createGpuKernelOutliningPass());
    outline.addPass(createLinnetCUDALowerLaunches());
    if (failed(outline.run(outlined)))
      return failure();
    if (auto names = outlined->getAttrOfType<ArrayAttr>("linnet.cuda.kernels"))
      for (Attribute n : names)
        kernelNames.push_back(cast<StringAttr>(n).getValue().str());
    // The gpu.modules leave the host module for the device pipeline.
    OwningOpRef<ModuleOp> kernels = ModuleOp::create(outlined.getLoc());
    for (auto g : llvm::make_early_inc_range(outlined.getOps<gpu::GPUModuleOp>())) {
      g->remove();
      kernels->getBody()->push_back(g);
    }
    outlined->removeAttr("gpu.container_module");
    if (!request.dumpIRDir.empty())
      if (llvm::Error e = target::dumpStage(request.dumpIRDir, gpuStage + 1, "kernels.mlir", *kernels)) {
        deviceError = std::move(e);
        return failure();
      }
    if (request.hostKernels)
      hostKernels = cast<ModuleOp>(kernels->clone());
    support::TimingStage dev("kernels to PTX and cubin");
    llvm::Expected<DeviceCode> code = compileDeviceModule(*kernels);
    if (!code) {
      deviceError = code.takeError();
      return failure();
    }
    device = std::move(*code);
    if (request.emulate) {
      PassManager cpuify(ctx);
      cpuify.addPass(createLinnetCUDACpuify());
      if (failed(cpuify.run(m)))
        return failure();
    }
    return success();
  };
  std::vector<cpu::ImplementationChoice> choices;
  llvm::Expected<std::string> bytes = cpu::compileToSharedLibraryBytes(module, options, &choices);
  if (deviceError)
    return deviceError;
  if (!bytes)
    return bytes.takeError();
  if (!device)
    return fail("the kernels were not compiled");

  target::GeneratedLibrary lib;
  lib.bytes = std::move(*bytes);
  const std::string ptxFile = "kernels" + request.fileSuffix + ".ptx",
                    cubinFile = "kernels" + request.fileSuffix + ".cubin",
                    tableFile = "kernels" + request.fileSuffix + ".json";
  lib.bufferizedIR = std::move(bufferizedIR);
  // What -linnet-cuda-split-reductions chose for each contraction, in
  // program order; the host code's own linalg (none on this target) after.
  if (auto recorded = module->getAttrOfType<ArrayAttr>("linnet.cuda.implementations"))
    for (Attribute a : recorded) {
      auto d = cast<DictionaryAttr>(a);
      auto text = [&](StringRef name) {
        auto v = d.getAs<StringAttr>(name);
        return v ? v.getValue().str() : std::string();
      };
      bool library = text("kind") == "library";
      lib.choices.push_back({text("function"), text("op"), text("role"), library ? "library" : "generated",
                             text("routine"), library ? "cublas" : "", library ? kCublasSoname : "",
                             /*fewRowsAtMost=*/0, /*fewRowsPerPass=*/0, /*fewRowsRoutine=*/""});
    }
  for (const cpu::ImplementationChoice &c : choices)
    lib.choices.push_back({c.function, c.op, c.role, c.kind, c.routine, "", "",
                           /*fewRowsAtMost=*/0, /*fewRowsPerPass=*/0, /*fewRowsRoutine=*/""});
  if (auto tasks = module->getAttrOfType<ArrayAttr>("linnet.profile.tasks"))
    for (Attribute t : tasks)
      lib.profiledTasks.push_back(cast<StringAttr>(t).getValue().str());
  lib.files.push_back({ptxFile, device->ptx});
  if (!device->cubin.empty())
    lib.files.push_back({cubinFile, device->cubin});
  lib.sections.push_back({".nv.kernels", device->cubin.empty() ? "ptx" : "cubin",
                          device->cubin.empty() ? ptxFile : cubinFile});
  // The host code that launches them (or, emulated, runs them).
  lib.sections.push_back({".text.host", "host-code", "model" + request.fileSuffix + ".so"});
  // kernels.json: the kernel table the host code's launches index, and what
  // ptxas said of each kernel (registers, spills, shared memory).
  nlohmann::json table = nlohmann::json::array();
  for (auto [i, name] : llvm::enumerate(kernelNames)) {
    nlohmann::json k = {{"id", int64_t(i)}, {"name", name}};
    for (const KernelResources &r : device->kernels)
      if (r.name == name)
        k["ptxas"] = {{"registers", r.registers}, {"spill_stores", r.spillStores},
                      {"spill_loads", r.spillLoads}, {"shared_bytes", r.sharedBytes},
                      {"stack_bytes", r.stackBytes}};
    table.push_back(std::move(k));
  }
  nlohmann::json kernelsDoc = {{"schema", kKernelTableSchema},
                               {"arch", kChip},
                               {"ptx", ptxFile},
                               {"cubin", device->cubin.empty() ? nlohmann::json() : nlohmann::json(cubinFile)},
                               {"kernels", table}};
  lib.files.push_back({tableFile, kernelsDoc.dump(2) + "\n"});
  if (hostKernels) {
    support::TimingStage stage("kernels for the driver emulator");
    llvm::Expected<std::string> so = compileHostKernels(*hostKernels, *device, options);
    if (!so)
      return so.takeError();
    lib.files.push_back({"kernels" + request.fileSuffix + ".host.so", std::move(*so)});
  }
  if (request.emulate) {
    // The CPU target's ABI, whatever it is called: the CPU runtime loads it.
    const target::Target *host = target::lookupTarget("cpu");
    if (!host)
      return fail("an emulated cuda build needs the cpu target, which is not registered");
    lib.runtimeAbi = host->runtimeAbi().str();
    lib.runtimeMembers.push_back({"cpu", cpu::codeCpuJson(options)});
    if (request.parallel && cpu::openMPAvailable())
      lib.runtimeLibraries.push_back("libomp.so.5");
  } else {
    lib.runtimeLibraries.push_back("libcuda.so.1");
    lib.runtimeMembers.push_back(
        {"device", nlohmann::json{{"kernels", tableFile},
                                {"module", device->cubin.empty() ? ptxFile : cubinFile},
                                {"ptx", ptxFile}}
                     .dump()});
  }
  return lib;
}

} // namespace linnet::cuda
