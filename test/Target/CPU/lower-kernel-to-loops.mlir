// RUN: linnet-opt %s -gf-lower-domain-to-iter -gf-lower-iter-to-kernel \
// RUN:   -gf-select-kernel-schedule=target-contract=cpu-simd-v1 \
// RUN:   -gf-lower-kernel-to-loops -split-input-file | FileCheck %s

// The seed's weighted aggregation over a CSR relation: tensors become
// memrefs, the result an output buffer; row tiles of block_rows (4 under
// cpu-simd-v1) are an scf.parallel; the sum reducer's regions are inlined.

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

// CHECK-NOT: gf.reducer
// CHECK-LABEL: func.func @csr(
// CHECK-SAME: %[[RP:[^:]+]]: memref<?xi64>, %[[CI:[^:]+]]: memref<?xi64>, %[[X:[^:]+]]: memref<?xf32>, %[[W:[^:]+]]: memref<?xf32>, %[[OUT:[^:]+]]: memref<?xf32>)
// CHECK-SAME: attributes {llvm.emit_c_interface}
// CHECK-NOT: gf.
// CHECK: %[[ROWS:.+]] = memref.dim %[[OUT]], %{{.+}} : memref<?xf32>
// CHECK: %[[C4:.+]] = arith.constant 4 : index
// CHECK: scf.parallel (%[[T:.+]]) = (%{{.+}}) to (%{{.+}}) step
// CHECK:   %[[R0:.+]] = arith.muli %[[T]], %[[C4]]
// CHECK:   scf.for %[[D:.+]] = %[[R0]] to %{{.+}} step
// CHECK:     %[[ZERO:.+]] = arith.constant 0.000000e+00 : f32
// CHECK:     memref.load %[[RP]][%[[D]]] : memref<?xi64>
// CHECK:     %[[ACC:.+]] = scf.for %[[E:.+]] = %{{.+}} to %{{.+}} step %{{.+}} iter_args(%[[S:.+]] = %[[ZERO]]) -> (f32) {
// CHECK:       %[[SRC64:.+]] = memref.load %[[CI]][%[[E]]] : memref<?xi64>
// CHECK:       %[[SRC:.+]] = arith.index_cast %[[SRC64]] : i64 to index
// CHECK:       %[[XV:.+]] = memref.load %[[X]][%[[SRC]]] : memref<?xf32>
// CHECK:       %[[WV:.+]] = memref.load %[[W]][%[[E]]] : memref<?xf32>
// CHECK:       %[[M:.+]] = arith.mulf %[[XV]], %[[WV]] : f32
// CHECK:       %[[N:.+]] = arith.addf %[[S]], %[[M]] : f32
// CHECK:       scf.yield %[[N]] : f32
// CHECK:     memref.store %[[ACC]], %[[OUT]][%[[D]]] : memref<?xf32>
// CHECK: return
func.func @csr(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: f32, %b: f32):
    %m = arith.mulf %a, %b : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// -----

// A feature axis: x[src, :] * w[e] with 64 features is one vector<64xf32>
// per edge, the state a vector accumulator; a max reducer, not a sum.

"gf.reducer"() <{sym_name = "vmax", kind = "algebraic", associative = true, commutative = true, message_types = [tensor<64xf32>], state_types = [tensor<64xf32>], result_types = [tensor<64xf32>]}> ({
  %z = arith.constant dense<0xFF800000> : tensor<64xf32>
  "gf.reducer_yield"(%z) : (tensor<64xf32>) -> ()
}, {
^bb0(%m: tensor<64xf32>):
  "gf.reducer_yield"(%m) : (tensor<64xf32>) -> ()
}, {
^bb0(%a: tensor<64xf32>, %b: tensor<64xf32>):
  %s = arith.maximumf %a, %b : tensor<64xf32>
  "gf.reducer_yield"(%s) : (tensor<64xf32>) -> ()
}, {
^bb0(%s: tensor<64xf32>):
  "gf.reducer_yield"(%s) : (tensor<64xf32>) -> ()
}) : () -> ()

// CHECK-LABEL: func.func @features(
// CHECK-SAME: memref<?x64xf32>, %{{[^:]+}}: memref<?xf32>, %[[OUT:[^:]+]]: memref<?x64xf32>)
// CHECK: scf.parallel
// CHECK: %[[NEG:.+]] = arith.constant dense<0xFF800000> : vector<64xf32>
// CHECK: scf.for {{.+}} iter_args(%[[S:.+]] = %[[NEG]]) -> (vector<64xf32>)
// CHECK:   %[[XV:.+]] = vector.load %{{.+}}[%{{.+}}, %{{.+}}] : memref<?x64xf32>, vector<64xf32>
// CHECK:   %[[WV:.+]] = memref.load
// CHECK:   %[[WB:.+]] = vector.broadcast %[[WV]] : f32 to vector<64xf32>
// CHECK:   %[[M:.+]] = arith.mulf %[[XV]], %[[WB]] : vector<64xf32>
// CHECK:   arith.maximumf %[[S]], %[[M]] : vector<64xf32>
// CHECK: vector.store %{{.+}}, %[[OUT]][%{{.+}}, %{{.+}}] : memref<?x64xf32>, vector<64xf32>
func.func @features(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x64xf32>, %w: tensor<?xf32>) -> tensor<?x64xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x, %w) <{reducers = [@vmax], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "weight"]}> ({
  ^bb0(%a: tensor<64xf32>, %b: f32):
    %bs = tensor.splat %b : tensor<64xf32>
    %m = arith.mulf %a, %bs : tensor<64xf32>
    "gf.yield"(%m) : (tensor<64xf32>) -> ()
  }) : (!gf.relation, tensor<?x64xf32>, tensor<?xf32>) -> tensor<?x64xf32>
  return %o : tensor<?x64xf32>
}

// -----

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

// Dense: every source (num_src from the src input), edge id d * num_src + s.
// CHECK-LABEL: func.func @dense(
// CHECK-SAME: %[[X:[^:]+]]: memref<?xf32>, %[[A:[^:]+]]: memref<?xf32>, %{{[^:]+}}: memref<?xf32>)
// CHECK: scf.parallel
// CHECK:   scf.for %[[D:[^ ]+]] =
// CHECK:     %[[NS:.+]] = memref.dim %[[X]], %{{.+}} : memref<?xf32>
// CHECK:     %[[BASE:.+]] = arith.muli %[[D]], %[[NS]] : index
// CHECK:     scf.for %[[S:[^ ]+]] = %{{.+}} to %[[NS]] step
// CHECK:       %[[E:.+]] = arith.addi %[[BASE]], %[[S]] : index
// CHECK:       memref.load %[[X]][%[[S]]]
// CHECK:       memref.load %[[A]][%[[E]]]
func.func @dense(%x: tensor<?xf32>, %a: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "d", version = 0, realization = "dense", origin = "external", lifecycle = "frozen", num_src = 64, num_dst = 32}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x, %a) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "a"]}> ({
  ^bb0(%v0: f32, %v1: f32):
    %m = arith.mulf %v0, %v1 : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Triangular (causal): sources s <= d, edge id d * (d + 1) / 2 + s.
// CHECK-LABEL: func.func @triangular(
// CHECK: scf.parallel
// CHECK:   scf.for %[[D:[^ ]+]] =
// CHECK:     %[[HI:.+]] = arith.addi %[[D]], %{{.+}} : index
// CHECK:     %[[DD:.+]] = arith.muli %[[D]], %[[HI]] : index
// CHECK:     %[[BASE:.+]] = arith.divui %[[DD]], %{{.+}} : index
// CHECK:     scf.for %[[S:[^ ]+]] = %{{.+}} to %[[HI]] step
// CHECK:       arith.addi %[[BASE]], %[[S]] : index
func.func @triangular(%x: tensor<?xf32>, %a: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "causal", version = 0, realization = "triangular", origin = "external", lifecycle = "frozen", num_src = 128, num_dst = 128}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x, %a) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 2>, snapshot_versions = array<i64: 0, 0>, effects = ["read", "read"], deterministic = false, input_roles = ["src", "edge"], input_names = ["x", "a"]}> ({
  ^bb0(%v0: f32, %v1: f32):
    %m = arith.mulf %v0, %v1 : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}
