// Every op, attribute and type of the five dialects round-trips: the printed
// form parses back and prints identically (textually and in bytecode).

"gf.reducer"() <{sym_name = "first", kind = "ordered", associative = false, commutative = false, message_types = [f32, i32], state_types = [f32, i32], result_types = [f32]}> ({
  %z = arith.constant 0.0 : f32
  %n = arith.constant -1 : i32
  "gf.reducer_yield"(%z, %n) : (f32, i32) -> ()
}, {
^bb0(%v: f32, %i: i32):
  "gf.reducer_yield"(%v, %i) : (f32, i32) -> ()
}, {
^bb0(%a: f32, %ai: i32, %b: f32, %bi: i32):
  "gf.reducer_yield"(%a, %ai) : (f32, i32) -> ()
}, {
^bb0(%s: f32, %si: i32):
  "gf.reducer_yield"(%s) : (f32) -> ()
}) : () -> ()

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

func.func @relations(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %pos: tensor<?x3xf32>, %pages: tensor<?x16xi64>) {
  %csr = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "mutable", num_src = -1, num_dst = -1}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %dense = "gf.relation"() <{relation_id = "d", version = 0, realization = "dense", origin = "derived", lifecycle = "frozen", num_src = 64, num_dst = 32, degree_min = 64, degree_max = 64}> : () -> !gf.relation
  %causal = "gf.relation"() <{relation_id = "causal", version = 0, realization = "triangular", origin = "derived", lifecycle = "frozen", num_src = 128, num_dst = 128}> : () -> !gf.relation
  %ball = "gf.relation"(%pos) <{relation_id = "ball", version = 1, realization = "radius", radius = 0.25 : f64, origin = "derived", lifecycle = "frozen", num_src = 4096, num_dst = 4096, degree_max = 32}> : (tensor<?x3xf32>) -> !gf.relation
  %knn = "gf.relation"(%pos) <{relation_id = "knn", version = 1, realization = "knn", k = 8, origin = "derived", lifecycle = "frozen", num_src = 4096, num_dst = 4096}> : (tensor<?x3xf32>) -> !gf.relation
  %paged = "gf.relation"(%pages) <{relation_id = "kv", version = 2, realization = "paged", origin = "external", lifecycle = "mutable", num_src = -1, num_dst = 16, mesh_shape = array<i64: 2>, mesh_axis = 0, partition_balance = "destinations", halo_depth = 2}> : (tensor<?x16xi64>) -> !gf.relation
  return
}

// Vector-valued entities: the region sees one row of a rank-2 input.
func.func @stages(%rp: tensor<?xi64>, %ci: tensor<?xi64>, %x: tensor<?x4xf32>, %w: tensor<?xf32>, %idx: tensor<?xi32>) -> (tensor<?xf32>, tensor<?xf32>, tensor<?xf32>) {
  %r = "gf.relation"(%rp, %ci) <{relation_id = "g", version = 0, realization = "materialized", origin = "external", lifecycle = "frozen", num_src = 100, num_dst = 100}> : (tensor<?xi64>, tensor<?xi64>) -> !gf.relation
  %a = "gf.apply"(%r, %x, %w, %idx) <{reducers = [@first], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 3>, snapshot_versions = array<i64: 0, 0, 0>, effects = ["read", "read-write", "read"], deterministic = true, input_roles = ["src", "edge", "dst"], input_names = ["x", "w", "idx"]}> ({
  ^bb0(%xs: tensor<4xf32>, %we: f32, %id: i32):
    "gf.yield"(%we, %id) : (f32, i32) -> ()
  }) : (!gf.relation, tensor<?x4xf32>, tensor<?xf32>, tensor<?xi32>) -> tensor<?xf32>
  %t = "gf_iter.traverse"(%r, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"], coordinate_hierarchy = "compressed-row", ordering = "destination-major"}> ({
  ^bb0(%we: f32):
    "gf_iter.yield"(%we) : (f32) -> ()
  }) : (!gf.relation, tensor<?xf32>) -> tensor<?xf32>
  %k = "gf_kernel.launch"(%rp, %ci, %w) <{reducers = [@sum], region_kinds = array<i64: 0>, input_segment_sizes = array<i64: 1>, snapshot_versions = array<i64: 0>, effects = ["read"], deterministic = false, input_roles = ["edge"], input_names = ["w"], traversal = "csr-row", num_rows = 100, schedule_kind = "chunked-ragged-row-neighbor", block_rows = 8, block_neighbors = 32, num_warps = 4, pipeline_stages = 2, execution_roles = ["workgroup.destination-rows"], instruction_contracts = ["masked-memory"], schedule_handoffs = ["load.global-to-shared"], schedule_resources = ["input.shared.staged"], target_contract = "provider-neutral-v1"}> ({
  ^bb0(%we: f32):
    "gf_kernel.yield"(%we) : (f32) -> ()
  }) {gf_task.planned} : (tensor<?xi64>, tensor<?xi64>, tensor<?xf32>) -> tensor<?xf32>
  return %a, %t, %k : tensor<?xf32>, tensor<?xf32>, tensor<?xf32>
}

func.func @tasks(%r: !gf.relation, %x: tensor<?xf32>) -> (!gf_task.partition, !gf_storage.event) {
  %p = "gf_task.partition"(%r) <{scheme = "destination", mesh_shape = array<i64: 4>, mesh_axis = 0, owned_entities = 25, ghost_entities = -1, version = 0}> {owner_map_algorithm = "contiguous-destination-block"} : (!gf.relation) -> !gf_task.partition
  %h = "gf_task.halo"(%p) <{depth = 2, fields = ["x"], strategy = "neighbor"}> : (!gf_task.partition) -> !gf_task.halo_plan
  %reg = "gf_storage.region"(%x) <{elements = -1, logical_id = "x", version = 0}> : (tensor<?xf32>) -> !gf_storage.region
  %loc = "gf_storage.instance"(%reg) <{capacity_bytes = 100, device = "local", external = false, layout = "partitioned", memory_space = "host"}> : (!gf_storage.region) -> !gf_storage.instance
  %gho = "gf_storage.instance"(%reg) <{capacity_bytes = 300, device = "ghost", external = false, layout = "partitioned", memory_space = "host"}> : (!gf_storage.region) -> !gf_storage.instance
  %send, %sent = "gf_task.halo_pack"(%h, %loc) <{bytes = 300, field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_storage.instance) -> (!gf_task.halo_buffer, !gf_storage.event)
  %recv, %got = "gf_task.halo_exchange"(%h, %send, %sent) <{bytes = 300, group = "g", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.event) -> (!gf_task.halo_buffer, !gf_storage.event)
  %ready = "gf_task.halo_unpack"(%h, %recv, %gho, %got) <{field = "x", snapshot_version = 0}> : (!gf_task.halo_plan, !gf_task.halo_buffer, !gf_storage.instance, !gf_storage.event) -> !gf_storage.event
  %i = "gf_task.launch"(%p) <{callee = @tasks, operandSegmentSizes = array<i32: 1, 0>, reads = ["x"], snapshot_version = 0, task_kind = "interior", writes = ["out"]}> : (!gf_task.partition) -> !gf_storage.event
  %b = "gf_task.launch"(%p, %ready) <{callee = @tasks, operandSegmentSizes = array<i32: 1, 1>, reads = ["x"], snapshot_version = 0, task_kind = "boundary", writes = ["out"]}> : (!gf_task.partition, !gf_storage.event) -> !gf_storage.event
  %all = "gf_task.launch"() <{callee = @tasks, operandSegmentSizes = array<i32: 0, 0>, reads = [], snapshot_version = 0, task_kind = "whole", writes = ["out"]}> : () -> !gf_storage.event
  %j = "gf_storage.join"(%i, %b, %all) <{snapshot_version = 0}> : (!gf_storage.event, !gf_storage.event, !gf_storage.event) -> !gf_storage.event
  return %p, %j : !gf_task.partition, !gf_storage.event
}
