//===- emulator-kernels.h - The images of the emulator's test kernels -----===//
//
// Shared by the test kernels library (emulator-kernels.cpp), which declares
// their FNV-1a hashes in linnet_kernels_images, and CudaEmulatorTest.cpp,
// which loads them, and CudaDriverTest.cpp, whose device tests load the
// same add_one PTX on a GPU or on the emulator; and a small ELF64 file
// standing for a cubin.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TEST_UNIT_INPUTS_EMULATOR_KERNELS_H
#define LINNET_TEST_UNIT_INPUTS_EMULATOR_KERNELS_H

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace linnet_emulator_test {

/// FNV-1a, 64 bits, as the driver emulator hashes a module image.
constexpr uint64_t fnv1a(const unsigned char *bytes, size_t n) {
  uint64_t h = 14695981039346656037ull;
  for (size_t i = 0; i < n; ++i) {
    h ^= bytes[i];
    h *= 1099511628211ull;
  }
  return h;
}
constexpr uint64_t fnv1a(std::string_view text) {
  uint64_t h = 14695981039346656037ull;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ull;
  }
  return h;
}

// x[i] += 1.0f for i < n; parameters are two 64-bit slots {x, n}. PTX for
// sm_52, so any GPU's driver JITs it.
inline constexpr std::string_view kAddOnePtx = R"(
.version 6.0
.target sm_52
.address_size 64

.visible .entry add_one(.param .u64 add_one_x, .param .u64 add_one_n)
{
  .reg .pred %p<2>;
  .reg .b32 %r<5>;
  .reg .b64 %rd<6>;
  .reg .f32 %f<3>;

  ld.param.u64 %rd1, [add_one_x];
  ld.param.u64 %rd2, [add_one_n];
  mov.u32 %r1, %ctaid.x;
  mov.u32 %r2, %ntid.x;
  mov.u32 %r3, %tid.x;
  mad.lo.u32 %r4, %r1, %r2, %r3;
  cvt.u64.u32 %rd3, %r4;
  setp.ge.u64 %p1, %rd3, %rd2;
  @%p1 bra DONE;
  cvta.to.global.u64 %rd4, %rd1;
  shl.b64 %rd5, %rd3, 2;
  add.s64 %rd4, %rd4, %rd5;
  ld.global.f32 %f1, [%rd4];
  add.f32 %f2, %f1, 0f3F800000;
  st.global.f32 [%rd4], %f2;
DONE:
  ret;
}
)";

/// A cubin as the emulator measures one: an ELF64 header, three section
/// headers (null, PROGBITS at 256..288, NOBITS of 4096 bytes, which the
/// file does not hold), 288 bytes in all.
inline constexpr size_t kCubinSize = 288;
constexpr std::array<unsigned char, kCubinSize> makeCubin() {
  std::array<unsigned char, kCubinSize> b{};
  auto put = [&b](size_t at, uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i)
      b[at + size_t(i)] = static_cast<unsigned char>(v >> (8 * i));
  };
  b[0] = 0x7f, b[1] = 'E', b[2] = 'L', b[3] = 'F';
  b[4] = 2;        // ELFCLASS64
  b[5] = 1;        // little-endian
  b[6] = 1;        // EV_CURRENT
  put(16, 2, 2);   // e_type ET_EXEC
  put(18, 190, 2); // e_machine EM_CUDA
  put(20, 1, 4);   // e_version
  put(40, 64, 8);  // e_shoff
  put(52, 64, 2);  // e_ehsize
  put(58, 64, 2);  // e_shentsize
  put(60, 3, 2);   // e_shnum
  // Section 1: PROGBITS, bytes 256..288.
  put(128 + 4, 1, 4);
  put(128 + 24, 256, 8);
  put(128 + 32, 32, 8);
  // Section 2: NOBITS, 4096 bytes at 288 (not in the file).
  put(192 + 4, 8, 4);
  put(192 + 24, 288, 8);
  put(192 + 32, 4096, 8);
  for (size_t i = 256; i < kCubinSize; ++i)
    b[i] = static_cast<unsigned char>(i * 7);
  return b;
}
inline constexpr std::array<unsigned char, kCubinSize> kCubin = makeCubin();

/// The images the test kernels library stands for.
inline constexpr uint64_t kPtxHash = fnv1a(kAddOnePtx);
inline constexpr uint64_t kCubinHash = fnv1a(kCubin.data(), kCubin.size());

/// The status word the runtime reads back (linnet_status): 4 x int64.
inline constexpr size_t kStatusBytes = 32;

} // namespace linnet_emulator_test

#endif // LINNET_TEST_UNIT_INPUTS_EMULATOR_KERNELS_H
