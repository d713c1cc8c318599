// RUN: linnet-opt %s -split-input-file -verify-diagnostics
//
// Verifier diagnostics of the gf_task dialect.

func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf_task.partition' op has mesh_axis = 3 out of range for a mesh of rank 2}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 2, 4>, mesh_axis = 3, owned_entities = 256, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return
}

// -----

func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf_task.partition' op has scheme 'source'; only 'destination' is supported}}
  %p = "gf_task.partition"(%r) <{scheme = "source", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 256, ghost_entities = -1, version = 0}> : (!gf.relation) -> !gf_task.partition
  return
}

// -----

// The parts must together own every destination of the relation.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, mesh_shape = array<i64: 4>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_task.partition' op owns 200 entities in 4 parts, fewer than the relation's 1024 destinations}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 200, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  return
}

// -----

// Owned entities are left to run time only where the relation is sized then.
func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, mesh_shape = array<i64: 4>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  // expected-error @+1 {{'gf_task.partition' op leaves owned_entities to run time, but relation 'mesh' has 1024 destinations}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = -1, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  return
}

// -----

func.func @f(%r: !gf.relation) {
  // expected-error @+1 {{'gf_task.partition' op owned_entities must be non-negative, or -1 when the relation is sized at run time}}
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = -2, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  return
}

// -----

func.func @f(%h: !gf_task.halo_plan, %i: !gf_storage.instance) {
  // expected-error @+1 {{'gf_task.halo_pack' op has bytes = -4; expected a non-negative count, or -1 when the relation is sized at run time}}
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = -4, field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.halo' op has depth = 0; expected a positive depth or -1 (automatic)}}
  %h = "gf_task.halo"(%p) <{depth = 0, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.halo' op needs at least one field}}
  %h = "gf_task.halo"(%p) <{depth = 1, fields = [], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  return
}

// -----

func.func @f(%p: !gf_task.partition, %i: !gf_storage.instance) {
  %h = "gf_task.halo"(%p) <{depth = -1, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @+1 {{'gf_task.halo_pack' op moves field 'y' which its halo plan does not cover}}
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 64, field = "y", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

// -----

func.func @f(%h: !gf_task.halo_plan, %i: !gf_storage.instance) {
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 64, field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  // expected-error @+1 {{'gf_task.halo_exchange' op exchanges 128 bytes but its send buffer was packed with 64}}
  %r, %e = "gf_task.halo_exchange"(%h, %s, %d) <{bytes = 128, group = "mesh", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.event) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

// -----

func.func @f(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %i: !gf_storage.instance) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "mesh", version = 3, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 8, num_dst = 8, mesh_shape = array<i64: 2>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 2>, mesh_axis = 0, owned_entities = 4, ghost_entities = -1, version = 3}> : (!gf.relation) -> !gf_task.partition
  %h = "gf_task.halo"(%p) <{depth = -1, fields = ["x"], strategy = "auto"}> : (!gf_task.partition) -> !gf_task.halo_plan
  // expected-error @+1 {{'gf_task.halo_pack' op moves snapshot version 2 but its partition is of version 3}}
  %s, %d = "gf_task.halo_pack"(%h, %i) <{bytes = 16, field = "x", snapshot_version = 2}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op of kind 'boundary' must depend on the halo unpack event}}
  %e = "gf_task.launch"(%p) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "boundary", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op of kind 'whole' must not take a partition}}
  %e = "gf_task.launch"(%p) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>, reads = [], snapshot_version = 0, task_kind = "whole", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op launches unknown function @missing}}
  %e = "gf_task.launch"(%p) <{callee = @missing, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "interior", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

// -----

func.func @f(%p: !gf_task.partition) {
  // expected-error @+1 {{'gf_task.launch' op has task_kind 'edge'; expected 'interior', 'boundary' or 'whole'}}
  %e = "gf_task.launch"(%p) <{callee = @f, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "edge", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  return
}

// -----

// The strings are the IR spelling, not the C++ enumerators' names.
func.func @f() {
  // expected-error @+1 {{'gf_task.launch' op has task_kind 'Whole'; expected 'interior', 'boundary' or 'whole'}}
  %e = "gf_task.launch"() <{callee = @f, operandSegmentSizes = array<i32: 0, 0>, reads = ["x"], snapshot_version = 0, task_kind = "Whole", writes = ["out"]}> : () -> !gf_storage.event
  return
}

// -----

func.func @f(%x: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'gf_task.planned' marks gf_kernel.launch ops only}}
  %y = arith.negf %x {gf_task.planned} : tensor<?xf32>
  return %y : tensor<?xf32>
}

// -----

func.func @f(%x: f32) -> f32 {
  // expected-error @+1 {{unknown gf_task attribute 'gf_task.plan'}}
  %y = arith.negf %x {gf_task.plan} : f32
  return %y : f32
}
