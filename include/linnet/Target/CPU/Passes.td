//===- Passes.td - linnet's CPU target passes ---------------*- tablegen -*-===//

#ifndef LINNET_TARGET_CPU_PASSES_TD
#define LINNET_TARGET_CPU_PASSES_TD

include "mlir/Pass/PassBase.td"

def GfLowerKernelToLoops : Pass<"gf-lower-kernel-to-loops", "::mlir::ModuleOp"> {
  let summary = "Lower scheduled gf_kernel.launch ops to scf loops over memrefs";
  let description = [{
    Rewrites every function that holds `gf_kernel.launch` ops into upstream
    MLIR (scf, arith, math, memref, vector) following linnet's CPU ABI
    (docs/cpu-abi.md):

    - every tensor argument becomes a memref of the same shape; every tensor
      result becomes a trailing output memref argument written by the
      function (destination-passing style); the function gets
      `llvm.emit_c_interface`;
    - each launch becomes an `scf.parallel` over tiles of `block_rows`
      destination rows (the unit a thread takes), an `scf.for` over the
      tile's rows, and an `scf.for` over the row's neighbors carrying the
      reducer state. The traversal decides the neighbors:
      `csr-row` walks `row_ptr[d] .. row_ptr[d+1]` and reads the source from
      `col_idx[e]`; `dense-row` visits every source `s < num_src` with edge
      id `d * num_src + s`; `triangular-row` visits `s <= d` with edge id
      `d * (d + 1) / 2 + s`;
    - the launch's message region is inlined per edge with its inputs read
      at the source, destination or edge index (by `input_roles`), and the
      reducers' identity, lift, combine and finalize regions are inlined
      from their `gf.reducer` symbols: nothing is specific to a sum;
    - per-entity values with a static feature axis (a `tensor<?x64xf32>`
      input gives the region `tensor<64xf32>`) become `vector<64xf32>`:
      rows are read with `vector.load`, elementwise arith/math ops on the
      small tensors are rebuilt on vectors, `tensor.splat` becomes
      `vector.broadcast`.

    Task planning ops (`gf_task.*`, `gf_storage.*`) and `gf.relation` are
    dropped (a single process runs every partition) and `gf.reducer`
    symbols are erased once nothing refers to them.

    Before (scheduled Kernel IR):
    ```mlir
    func.func @agg(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>,
                   %w: tensor<?xf32>) -> tensor<?xf32> {
      %o = "gf_kernel.launch"(%rp, %ci, %x, %w) <{block_rows = 4 : i64, ...,
          reducers = [@sum], traversal = "csr-row"}> ({...})
      return %o : tensor<?xf32>
    }
    ```
    After:
    ```mlir
    func.func @agg(%rp: memref<?xi64>, %ci: memref<?xi64>, %x: memref<?xf32>,
                   %w: memref<?xf32>, %out: memref<?xf32>)
        attributes {llvm.emit_c_interface} {
      scf.parallel (%t) = (%c0) to (%tiles) step (%c1) {
        scf.for %d = %r0 to %r1 step %c1 {
          %acc = scf.for %e = %lo to %hi step %c1 iter_args(%s = %zero) -> (f32) {
            ...  // col_idx[e], x[src], w[e], message, lift, combine
          }
          memref.store %acc, %out[%d] : memref<?xf32>
        }
      }
      return
    }
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

#endif // LINNET_TARGET_CPU_PASSES_TD
