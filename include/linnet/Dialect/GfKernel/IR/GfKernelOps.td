//===- GfKernelOps.td - gf_kernel (Kernel IR) dialect --------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GFKERNEL_IR_GFKERNELOPS_TD
#define LINNET_DIALECT_GFKERNEL_IR_GFKERNELOPS_TD

include "linnet/Dialect/Gf/IR/GfBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GfKernel_Dialect : Dialect {
  let name = "gf_kernel";
  let cppNamespace = "::linnet::gf_kernel";
  let summary = "linnet Kernel IR: a traversal bound to buffers and a schedule";
  let description = [{
    A `gf_kernel.launch` reads the relation's topology buffers directly and,
    once `-gf-select-kernel-schedule` ran, carries a tile shape, a warp count,
    a pipeline depth and the contracts a code generator must honour.
  }];
}

class GfKernel_Op<string mnemonic, list<Trait> traits = []>
    : Op<GfKernel_Dialect, mnemonic, traits>;

def GfKernel_LaunchOp : GfKernel_Op<"launch",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "a kernel over a relation's buffers, optionally scheduled";
  let description = [{
    Operands are the relation's topology buffers followed by the field
    inputs; the field inputs are the last `sum(input_segment_sizes)`
    operands. `traversal` names the loop structure ("csr-row",
    "dense-row", "triangular-row", "radius-cell", "knn-row"), `num_rows`
    the number of destinations and `degree_min`/`degree_max` the per-row
    neighbor bounds copied from the relation.

    The schedule properties (`schedule_kind`, `block_rows`,
    `block_neighbors`, `num_warps`, `pipeline_stages`, `execution_roles`,
    `instruction_contracts`, `schedule_handoffs`, `schedule_resources`,
    `target_contract`) are absent until `-gf-select-kernel-schedule`
    derives them; they are present all together or not at all.
  }];
  let arguments = !con((ins Variadic<AnyRankedTensor>:$args),
                       GfMessageSignatureArgs,
                       (ins StrAttr:$traversal,
                            LinnetI64Attr:$num_rows,
                            OptionalAttr<LinnetI64Attr>:$degree_min,
                            OptionalAttr<LinnetI64Attr>:$degree_max,
                            OptionalAttr<StrAttr>:$schedule_kind,
                            OptionalAttr<LinnetI64Attr>:$block_rows,
                            OptionalAttr<LinnetI64Attr>:$block_neighbors,
                            OptionalAttr<LinnetI64Attr>:$num_warps,
                            OptionalAttr<LinnetI64Attr>:$pipeline_stages,
                            OptionalAttr<StrArrayAttr>:$execution_roles,
                            OptionalAttr<StrArrayAttr>:$instruction_contracts,
                            OptionalAttr<StrArrayAttr>:$schedule_handoffs,
                            OptionalAttr<StrArrayAttr>:$schedule_resources,
                            OptionalAttr<StrAttr>:$target_contract));
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$bodies);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// Number of leading operands that are relation topology buffers.
    unsigned getNumTopologyOperands();
    ::mlir::OperandRange getTopology();
    ::mlir::OperandRange getInputs();
    /// True once a schedule has been selected.
    bool isScheduled() { return getScheduleKind().has_value(); }
    /// The `traversal` string as an enum (the op must verify).
    ::linnet::gf::Traversal getTraversalKind();
  }];
}

def GfKernel_YieldOp : GfKernel_Op<"yield",
    [Pure, Terminator, ReturnLike, HasParent<"LaunchOp">]> {
  let summary = "returns the messages of a gf_kernel.launch region";
  let arguments = (ins Variadic<AnyType>:$values);
}

#endif // LINNET_DIALECT_GFKERNEL_IR_GFKERNELOPS_TD
