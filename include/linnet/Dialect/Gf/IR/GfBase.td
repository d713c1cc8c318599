//===- GfBase.td - gf dialect, types and shared argument lists -*- tablegen -*-===//
//
// The `gf` (Domain) dialect: relations, reducers and message applications.
// Kept apart from GfOps.td so the Iter, Kernel and Task dialects can use the
// relation type and the shared message signature without re-emitting gf ops.
//
//===----------------------------------------------------------------------===//

#ifndef LINNET_DIALECT_GF_IR_GFBASE_TD
#define LINNET_DIALECT_GF_IR_GFBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "linnet/Dialect/LinnetBase.td"

def Gf_Dialect : Dialect {
  let name = "gf";
  let cppNamespace = "::linnet::gf";
  let summary = "linnet Domain IR: messages over relations, reduced by algebras";
  let description = [{
    Domain IR states *what* is computed: a `gf.apply` computes one message per
    (source, destination, edge) coordinate of a `gf.relation` and reduces the
    messages per destination with the `gf.reducer` algebras it names. It says
    nothing about traversal order, threads or placement; later dialects do.
  }];
  let useDefaultTypePrinterParser = 1;
  // Canonicalizing an apply over an empty relation materializes empty
  // tensors.
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::tensor::TensorDialect"];
}

class Gf_Type<string name, string typeMnemonic> : TypeDef<Gf_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def Gf_RelationType : Gf_Type<"Relation", "relation"> {
  let summary = "a relation between source and destination entities";
  let description = [{
    The value of a `gf.relation`: topology plus its static facts (sizes,
    degree bounds, realization, placement). Facts live on the defining op so
    that passes can read them without a type per relation.
  }];
}

// The message signature shared by gf.apply, gf_iter.traverse and
// gf_kernel.launch. Lowering copies it unchanged from stage to stage:
//  - reducers: one gf.reducer per group of results (module symbols);
//  - region_kinds: one entry per region; 0 is the edge (message) region;
//  - input_segment_sizes: how many of the field inputs each region reads;
//  - snapshot_versions, effects, input_roles, input_names: one entry per field
//    input: the logical version read, "read"/"write"/"read-write", the role
//    (src, dst, edge) that decides how the input is indexed, and the name the
//    user gave it (used by task planning to name storage and halos).
defvar GfMessageSignatureArgs = (ins
  FlatSymbolRefArrayAttr:$reducers,
  DenseI64ArrayAttr:$region_kinds,
  DenseI64ArrayAttr:$input_segment_sizes,
  DenseI64ArrayAttr:$snapshot_versions,
  StrArrayAttr:$effects,
  BoolAttr:$deterministic,
  StrArrayAttr:$input_roles,
  StrArrayAttr:$input_names);

#endif // LINNET_DIALECT_GF_IR_GFBASE_TD
