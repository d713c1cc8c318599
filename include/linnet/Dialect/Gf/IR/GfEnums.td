//===- GfEnums.td - kinds of the gf dialects as C++ enums ----*- tablegen -*-===//
//
// The kinds the gf dialects name by string: a gf.relation's `realization`,
// a gf_iter.traverse's `coordinate_hierarchy`, a gf_kernel.launch's
// `traversal` and a gf_task.launch's `task_kind`. The attributes stay
// StrAttr (the printed IR is unchanged: `realization = "dense"`); these
// definitions only generate the C++ enums with their symbolize/stringify
// functions (`genSpecializedAttr = 0`: no attribute classes), so that the
// verifiers check a string against one list and the passes switch on an
// enum instead of comparing strings.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_GF_IR_GFENUMS_TD
#define LINNET_DIALECT_GF_IR_GFENUMS_TD

include "mlir/IR/EnumAttr.td"

def Gf_Realization : I32EnumAttr<"Realization",
    "how the (destination, source) pairs of a gf.relation exist", [
      I32EnumAttrCase<"Materialized", 0, "materialized">,
      I32EnumAttrCase<"Dense", 1, "dense">,
      I32EnumAttrCase<"Triangular", 2, "triangular">,
      I32EnumAttrCase<"Radius", 3, "radius">,
      I32EnumAttrCase<"Knn", 4, "knn">,
      I32EnumAttrCase<"Paged", 5, "paged">]> {
  let cppNamespace = "::linnet::gf";
  let genSpecializedAttr = 0;
}

def Gf_CoordinateHierarchy : I32EnumAttr<"CoordinateHierarchy",
    "how a gf_iter.traverse enumerates the coordinates of its relation", [
      I32EnumAttrCase<"CompressedRow", 0, "compressed-row">,
      I32EnumAttrCase<"CartesianProduct", 1, "cartesian-product">,
      I32EnumAttrCase<"GeneratedNeighborhood", 2, "generated-neighborhood">,
      I32EnumAttrCase<"RankedPairs", 3, "ranked-pairs">]> {
  let cppNamespace = "::linnet::gf";
  let genSpecializedAttr = 0;
}

def Gf_Traversal : I32EnumAttr<"Traversal",
    "the loop structure of a gf_kernel.launch", [
      I32EnumAttrCase<"CsrRow", 0, "csr-row">,
      I32EnumAttrCase<"DenseRow", 1, "dense-row">,
      I32EnumAttrCase<"TriangularRow", 2, "triangular-row">,
      I32EnumAttrCase<"RadiusCell", 3, "radius-cell">,
      I32EnumAttrCase<"KnnRow", 4, "knn-row">]> {
  let cppNamespace = "::linnet::gf";
  let genSpecializedAttr = 0;
}

def GfTask_TaskKind : I32EnumAttr<"TaskKind",
    "which destinations of a kernel a gf_task.launch runs", [
      I32EnumAttrCase<"Interior", 0, "interior">,
      I32EnumAttrCase<"Boundary", 1, "boundary">,
      I32EnumAttrCase<"Whole", 2, "whole">]> {
  let cppNamespace = "::linnet::gf_task";
  let genSpecializedAttr = 0;
}

#endif // LINNET_DIALECT_GF_IR_GFENUMS_TD
