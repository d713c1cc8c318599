//===- MemRefABI.h - host-side view of linnet's CPU function ABI -*- C++ -*-===//
//
// A compiled kernel function `@f` is exported as `_mlir_ciface_f`, taking a
// pointer to one descriptor per memref argument (inputs first, then one
// output buffer per tensor result). The descriptor is MLIR's ranked memref
// descriptor; see docs/cpu-abi.md. Header-only so hosts need no library.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TARGET_CPU_MEMREFABI_H
#define LINNET_TARGET_CPU_MEMREFABI_H

#include <cstdint>

namespace linnet::cpu {

template <typename T, int Rank> struct MemRefDescriptor {
  T *allocated;             // what a deallocation would free (unused by kernels)
  T *aligned;               // the data pointer indexed by the kernel
  int64_t offset;           // in elements from `aligned`
  int64_t sizes[Rank];
  int64_t strides[Rank];    // in elements
};

/// A contiguous vector of `n` entities.
template <typename T> MemRefDescriptor<T, 1> memref1d(T *data, int64_t n) {
  return {data, data, 0, {n}, {1}};
}

/// A contiguous row-major `rows` x `cols` buffer (entities x features).
template <typename T>
MemRefDescriptor<T, 2> memref2d(T *data, int64_t rows, int64_t cols) {
  return {data, data, 0, {rows, cols}, {cols, 1}};
}

} // namespace linnet::cpu

#endif // LINNET_TARGET_CPU_MEMREFABI_H
