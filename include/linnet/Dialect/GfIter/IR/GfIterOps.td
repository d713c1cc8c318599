//===- GfIterOps.td - gf_iter (Iter IR) dialect --------------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GFITER_IR_GFITEROPS_TD
#define LINNET_DIALECT_GFITER_IR_GFITEROPS_TD

include "linnet/Dialect/Gf/IR/GfBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GfIter_Dialect : Dialect {
  let name = "gf_iter";
  let cppNamespace = "::linnet::gf_iter";
  let summary = "linnet Iter IR: how a relation's coordinates are enumerated";
  let description = [{
    Iter IR fixes the coordinate hierarchy used to enumerate a relation
    (compressed rows, a cartesian product, generated neighborhoods, ranked
    pairs) and the ordering of the enumeration. It still says nothing about
    threads, tiles or memory.
  }];
  let dependentDialects = ["::linnet::gf::GfDialect"];
}

class GfIter_Op<string mnemonic, list<Trait> traits = []>
    : Op<GfIter_Dialect, mnemonic, traits>;

def GfIter_TraverseOp : GfIter_Op<"traverse",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a gf.apply with a chosen coordinate hierarchy and ordering";
  let description = [{
    Same message signature and edge region as the `gf.apply` it came from,
    plus:

    - `coordinate_hierarchy`: "compressed-row" (materialized CSR),
      "cartesian-product" (dense, triangular), "generated-neighborhood"
      (radius), "ranked-pairs" (kNN); it must agree with the relation's
      realization;
    - `ordering`: "destination-major" (all of a destination's edges are
      visited together, so its reduction state stays private).
  }];
  let arguments = !con((ins Gf_RelationType:$relation,
                            Variadic<AnyRankedTensor>:$inputs),
                       GfMessageSignatureArgs,
                       (ins StrAttr:$coordinate_hierarchy, StrAttr:$ordering));
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `coordinate_hierarchy` string as an enum (the op must verify).
    ::linnet::gf::CoordinateHierarchy getCoordinateHierarchyKind();
  }];
}

def GfIter_YieldOp : GfIter_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"TraverseOp">]> {
  let summary = "returns the messages of a gf_iter.traverse region";
  let arguments = (ins Variadic<AnyType>:$values);
}

#endif // LINNET_DIALECT_GFITER_IR_GFITEROPS_TD
