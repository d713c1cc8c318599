// RUN: linnet-opt %s --linnet-cpu-distribute-kernels | FileCheck %s
// RUN: linnet-opt %s --linnet-cpu-distribute-kernels --linnet-cpu-distribute-kernels | FileCheck %s --check-prefix=TWICE

// A kernel the outlining pass marked with its argument roles is called
// through its distributed hook; the kernel gets a C interface (the hook's
// runtime calls it on row ranges) and the module lists the kernels with
// each argument's role, memref rank and element size.
// CHECK: module attributes {linnet.distributed.kernels = [{elem_bytes = [8, 8, 4, 4, 4], name = "f.k0", ranks = [1, 1, 2, 1, 2], roles = ["row_ptr", "col_idx", "src", "edge", "out"]}]}
// CHECK: func.func private @linnet_dist_f.k0(memref<?xi64>, memref<?xi64>, memref<?x8xf32>, memref<?xf32>, memref<?x8xf32>) attributes {llvm.emit_c_interface}
// CHECK: func.func @f.k0({{.*}}) attributes {llvm.emit_c_interface} {
// CHECK-LABEL: func.func @f(
// CHECK-NEXT: call @linnet_dist_f.k0(
// CHECK-NOT: call @f.k0
// The roles are consumed: a second run finds nothing to route.
// TWICE-COUNT-1: func.func private @linnet_dist_f.k0
// TWICE-NOT: linnet_dist_linnet_dist

func.func private @f.k0(%rp: memref<?xi64>, %ci: memref<?xi64>, %x: memref<?x8xf32>, %w: memref<?xf32>, %out: memref<?x8xf32>) attributes {linnet.kernel_roles = ["row_ptr", "col_idx", "src", "edge", "out"]} {
  return
}
func.func @f(%rp: memref<?xi64>, %ci: memref<?xi64>, %x: memref<?x8xf32>, %w: memref<?xf32>, %out: memref<?x8xf32>) {
  call @f.k0(%rp, %ci, %x, %w, %out) : (memref<?xi64>, memref<?xi64>, memref<?x8xf32>, memref<?xf32>, memref<?x8xf32>) -> ()
  return
}
