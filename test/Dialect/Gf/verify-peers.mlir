// A verifier that reads another op (its peer) must not assume that op is
// verified: ops are verified in block order and a use may precede its
// definition, so the peer below still lacks an attribute when the op using it
// is verified. Each case used to dereference null in linnet-opt (SIGSEGV);
// now the peer's own verifier reports it.
// RUN: linnet-opt %s -split-input-file -verify-diagnostics

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
func.func @apply_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %a = "gf.apply"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = true, input_roles = ["src"], input_names = ["w"]}> ({
  ^bb0(%we: f32):
    "gf.yield"(%we) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  // expected-error @below {{requires attribute 'num_src'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %a : tensor<?xf32>
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
func.func @traverse_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %t = "gf_iter.traverse"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%we: f32):
    "gf_iter.yield"(%we) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  // expected-error @below {{requires attribute 'realization'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, origin = "external", lifecycle = "frozen", num_src = 100, num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %t : tensor<?xf32>
}

// -----

func.func @partition_before_relation(%rp: tensor<?xi64>, %ci: tensor<?xi64>) -> !gf_task.partition {
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  // expected-error @below {{requires attribute 'num_dst'}}
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  return %p : !gf_task.partition
}

// -----

func.func @partition_overflowing_ownership(%rp: tensor<?xi64>, %ci: tensor<?xi64>) -> !gf_task.partition {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 100, num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // Owned entities times parts overflows 64 bits: it covers the relation, and
  // the product is never formed.
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 4611686018427387904, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return %p : !gf_task.partition
}

// -----

func.func @launch_before_partition(%r: !gf.relation) -> !gf_storage.event {
  %i = "gf_task.launch"(%p) <{callee = @launch_before_partition, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "interior", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  // expected-error @below {{requires attribute 'version'}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1}> : (!gf.relation) -> !gf_task.partition
  return %i : !gf_storage.event
}

// -----

func.func @exchange_before_pack(%h: !gf_task.halo_plan, %loc: !gf_storage.instance) -> !gf_task.halo_buffer {
  %recv, %got = "gf_task.halo_exchange"(%h, %send, %sent) <{bytes = 300, group = "g", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.event) -> (!gf_task.halo_buffer, !gf_storage.event)
  // expected-error @below {{requires attribute 'bytes'}}
  %send, %sent = "gf_task.halo_pack"(%h, %loc) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return %recv : !gf_task.halo_buffer
}

// -----

func.func @unpack_before_halo(%p: !gf_task.partition, %recv: !gf_task.halo_buffer, %gho: !gf_storage.instance, %got: !gf_storage.event) -> !gf_storage.event {
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  // expected-error @below {{requires attribute 'fields'}}
  %h = "gf_task.halo"(%p) <{depth = 2, strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return %ready : !gf_storage.event
}

// -----

func.func @unpack_before_halo_fields_not_strings(%p: !gf_task.partition, %recv: !gf_task.halo_buffer, %gho: !gf_storage.instance, %got: !gf_storage.event) -> !gf_storage.event {
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  // expected-error @below {{'fields' failed to satisfy constraint}}
  %h = "gf_task.halo"(%p) <{depth = 2, fields = [1, 2], strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return %ready : !gf_storage.event
}

// -----

func.func @unpack_before_partition(%r: !gf.relation, %recv: !gf_task.halo_buffer, %gho: !gf_storage.instance, %got: !gf_storage.event) -> !gf_storage.event {
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  %h = "gf_task.halo"(%p) <{depth = 2, fields = ["x"], strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @below {{requires attribute 'version'}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1}> : (!gf.relation) -> !gf_task.partition
  return %ready : !gf_storage.event
}
