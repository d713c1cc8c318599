// -gf-plan-distributed-tasks partitions each kernel whose relation carries
// placement metadata (mesh_shape/mesh_axis), plans a halo for the fields read
// through the src role, and splits the work into interior and boundary
// tasks. A relation without placement gets no tasks. (The fixture in
// test/mlir/distributed-plan.mlir pins the complete output of one case.)
//
// Planning twice plans nothing new.
// The halo strategy is an option of the pass:
// NEIGHBOR: "gf_task.halo"{{.*}}strategy = "neighbor"
// BADSTRATEGY: error: unknown halo strategy 'gossip'; expected auto, alltoall or neighbor

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

// No placement metadata: no tasks.
func.func @local(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1024, num_dst = 1024, degree_min = 4, degree_max = 16}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Two remote fields (one of 4-float rows), a dst field that stays local, 3
// parts that do not divide 1,000 rows, a 2-hop halo, rows balanced evenly.
func.func @two_fields(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %h: tensor<?x4xf32>, %s: tensor<?xf32>, %d: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "ring", version = 7, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 1000, num_dst = 1000, degree_min = 1, degree_max = 2, mesh_shape = array<i64: 3>, mesh_axis = 0, partition_balance = "destinations", halo_depth = 2}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %h, %s, %d) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 3>, snapshot_versions = array<i64: 7, 7, 7>, effects = ["read", "read", "read"], deterministic = false, input_roles = ["src", "src", "dst"], input_names = ["h", "s", "d"]}> ({
  ^bb0(%hv: tensor<4xf32>, %sv: f32, %dv: f32):
    %m = arith.mulf %sv, %dv : f32
    "gf.yield"(%m) : (f32) -> ()
  }) : (!gf.relation, tensor<?x4xf32>, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Only edge data: nothing remote is read, so every row is interior.
func.func @edges_only(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %w: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 64, num_dst = 64, mesh_shape = array<i64: 2, 2>, mesh_axis = 0}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %o = "gf.apply"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}

// Dense: the ghost count is known statically (every other part's sources).
func.func @dense(%x: tensor<?xf32>) -> tensor<?xf32> {
  %r = "gf.relation"() <{relation_id = "all", version = 1, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 64, num_dst = 64, mesh_shape = array<i64: 4>, mesh_axis = 0}> : () -> !gf.relation
  %o = "gf.apply"(%r, %x) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 1>, effects = ["read"], deterministic = false, input_roles = ["src"], input_names = ["x"]}> ({
  ^bb0(%v: f32):
    "gf.yield"(%v) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  return %o : tensor<?xf32>
}


// 1,000 rows over 3 parts: 334 owned. Worst-case ghosts: min(1000 - 334,
// 334 rows * 2^2 neighbors within 2 hops) = 666 entities: 666 * 16 bytes
// for h (4 floats per entity), 666 * 4 for s. d (dst role) stays local.

// Edge data moves with its destination rows: no halo, one interior task.

// Dense: every row reads all 48 remote sources, known statically; no
// interior task.
