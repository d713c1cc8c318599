//===- GfOps.td - gf (Domain) dialect operations -------------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GF_IR_GFOPS_TD
#define LINNET_DIALECT_GF_IR_GFOPS_TD

include "linnet/Dialect/Gf/IR/GfBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Gf_Op<string mnemonic, list<Trait> traits = []>
    : Op<Gf_Dialect, mnemonic, traits>;

def Gf_ReducerOp : Gf_Op<"reducer", [Symbol, IsolatedFromAbove]> {
  let summary = "a reduction algebra: identity, lift, combine, finalize";
  let description = [{
    Declares a reducer as four single-block regions, each ending in
    `gf.reducer_yield`:

    - identity `() -> state`: the state of a destination with no messages;
    - lift `(message...) -> state`: turns one message into a state;
    - combine `(state..., state...) -> state`: merges two states;
    - finalize `(state...) -> result`: the value stored for a destination.

    `associative` and `commutative` are declared by the author and trusted
    as declared: they license reassociating and reordering `combine`.
    `kind` is "algebraic" (a monoid: requires `associative`) or "ordered"
    (messages must be combined in edge order).

    ```mlir
    "gf.reducer"() <{associative = true, commutative = true, kind = "algebraic",
                     message_types = [f32], result_types = [f32],
                     state_types = [f32], sym_name = "sum"}> ({
      %cst = arith.constant 0.000000e+00 : f32
      "gf.reducer_yield"(%cst) : (f32) -> ()
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
    ```
  }];
  let arguments = (ins
    SymbolNameAttr:$sym_name,
    TypeArrayAttr:$message_types,
    TypeArrayAttr:$state_types,
    TypeArrayAttr:$result_types,
    BoolAttr:$associative,
    BoolAttr:$commutative,
    StrAttr:$kind);
  let regions = (region SizedRegion<1>:$identity, SizedRegion<1>:$lift,
                        SizedRegion<1>:$combine, SizedRegion<1>:$finalize);
  let hasRegionVerifier = 1;
}

def Gf_ReducerYieldOp : Gf_Op<"reducer_yield",
    [Pure, Terminator, ReturnLike, HasParent<"ReducerOp">]> {
  let summary = "returns the values of a gf.reducer region";
  let arguments = (ins Variadic<AnyType>:$values);
}

def Gf_RelationOp : Gf_Op<"relation"> {
  let summary = "a relation with its static facts and optional placement";
  let description = [{
    Binds the topology buffers of a relation to its facts. `realization`
    says how the (destination, source) pairs exist, and so which topology
    operands are expected:

    | realization     | meaning                                  | operands             |
    | --------------- | ---------------------------------------- | -------------------- |
    | `materialized`  | stored CSR edges (row_ptr, col_idx)      | 2 (1-D integer)      |
    | `dense`         | every source for every destination       | 0                    |
    | `triangular`    | sources `j <= i` for destination `i`     | 0                    |
    | `radius`        | sources within `radius` of a destination | positions (see below)|
    | `knn`           | the `k` nearest sources, ranked          | positions (see below)|
    | `paged`         | edges stored in fixed-size pages         | >= 1 (page table...) |

    A `radius` or `knn` relation is built from coordinates (language
    §10.5): one float `[points, axes]` tensor (destinations and sources are
    the same points) or two (destinations, then sources, with the same axis
    count), then the parameters not known at build time as 0-d tensors: a
    float `r` when there is no `radius` attribute, an integer `k` (kNN's
    count, radius's bound on a row) when there is no `k` attribute.
    Distances are squared Euclidean in f64; rows list their sources nearest
    first, ties by the smaller source index; NaN distances rank last and are
    never within a radius; a row has min(k, candidates) kNN sources and at
    most k radius sources (`k` absent on a radius relation: no bound).
    `exclude_self` leaves out the pair (i, i). `-gf-build-relations` builds
    their compressed rows.

    A paged relation with a `page_size` P takes exactly two operands, a
    block table `[M, B]` and row lengths `[M]` (integers): destination `d`
    has `lengths[d]` edges (clamped to `[0, B * P]`), and its `j`-th edge
    comes from source `block_table[d, j / P] * P + j % P` (a slot of a pool
    of pages, as a paged KV cache stores its rows). Edge ids are positions
    in destination-major order, as for CSR. `-gf-expand-paged-relations`
    turns it into a materialized relation; without `page_size` a paged
    relation has no lowering.

    Sizes are entity counts (`-1` when unknown at compile time); degree
    bounds are optional. `mesh_shape` and `mesh_axis` are the placement
    metadata: when present, task planning partitions destinations over
    `mesh_shape[mesh_axis]` parts, balancing by `partition_balance`, with a
    halo of `halo_depth` hops (`-1`: decided at run time).

    The op is deliberately not `Pure`: it anchors the placement facts that
    task planning reads after kernels stopped using the relation value.
  }];
  let arguments = (ins
    Variadic<AnyRankedTensor>:$topology,
    StrAttr:$relation_id,
    LinnetI64Attr:$version,
    LinnetI64Attr:$num_src,
    LinnetI64Attr:$num_dst,
    OptionalAttr<LinnetI64Attr>:$degree_min,
    OptionalAttr<LinnetI64Attr>:$degree_max,
    StrAttr:$realization,
    StrAttr:$origin,
    StrAttr:$lifecycle,
    OptionalAttr<DenseI64ArrayAttr>:$mesh_shape,
    OptionalAttr<LinnetI64Attr>:$mesh_axis,
    OptionalAttr<StrAttr>:$partition_balance,
    OptionalAttr<LinnetI64Attr>:$halo_depth,
    OptionalAttr<F64Attr>:$radius,
    OptionalAttr<LinnetI64Attr>:$k,
    OptionalAttr<LinnetI64Attr>:$page_size,
    UnitAttr:$exclude_self);
  let results = (outs Gf_RelationType:$relation);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// True when the relation carries placement metadata (a mesh).
    bool hasPlacement() { return getMeshShape().has_value(); }
    /// The `realization` string as an enum (the op must verify: the
    /// verifier rejects a string that is not a Realization case).
    ::linnet::gf::Realization getRealizationKind();
    /// The operands of a `radius` or `knn` relation (part of the verifier).
    ::mlir::LogicalResult verifyBuiltTopology();
  }];
}

def Gf_EdgesOp : Gf_Op<"edges", [Pure]> {
  let summary = "a relation's edges as compressed rows";
  let description = [{
    The row offsets `[num_dst + 1]` and column indices (source of each
    edge, destination-major) of `relation`, for code that walks its edges
    itself (a reduction the gf stages do not take, a `src`/`dst` read).
    Of a materialized relation, these are its topology operands (the op
    folds to them); of a `radius` or `knn` relation, `-gf-build-relations`
    builds them once, and every reader shares them.

    ```mlir
    %row_ptr, %col_idx = "gf.edges"(%r) : (!gf.relation) -> (tensor<?xi64>, tensor<?xi64>)
    ```
  }];
  let arguments = (ins Gf_RelationType:$relation);
  let results = (outs AnyRankedTensor:$row_ptr, AnyRankedTensor:$col_idx);
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Gf_ApplyOp : Gf_Op<"apply",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "one message per relation coordinate, reduced per destination";
  let description = [{
    Computes, for every destination of `relation`, the reduction (by the
    `reducers`) of the messages its edge region yields for each incoming
    edge. The edge region's arguments are the scalar elements of the field
    inputs, indexed by their role: `src` inputs by the edge's source, `dst`
    inputs by its destination, `edge` inputs by the edge itself. Results are
    one tensor per reducer result, indexed by destination.

    ```mlir
    %out = "gf.apply"(%rel, %x, %w) <{deterministic = false,
        effects = ["read", "read"], input_names = ["x", "weight"],
        input_roles = ["src", "edge"], input_segment_sizes = array<i64: 2>,
        reducers = [@sum], region_kinds = array<i64: 0>,
        snapshot_versions = array<i64: 3, 3>}> ({
    ^bb0(%xs: f32, %we: f32):
      %m = arith.mulf %xs, %we : f32
      "gf.yield"(%m) : (f32) -> ()
    }) : (!gf.relation, tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    ```
  }];
  let arguments = !con((ins Gf_RelationType:$relation,
                            Variadic<AnyRankedTensor>:$inputs),
                       GfMessageSignatureArgs);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let hasVerifier = 1;
  let hasCanonicalizer = 1;
}

def Gf_YieldOp : Gf_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"ApplyOp">]> {
  let summary = "returns the messages of a gf.apply region";
  let arguments = (ins Variadic<AnyType>:$values);
}

#endif // LINNET_DIALECT_GF_IR_GFOPS_TD
