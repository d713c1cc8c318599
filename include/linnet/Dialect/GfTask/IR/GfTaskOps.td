//===- GfTaskOps.td - gf_task (Task IR) dialect --------------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GFTASK_IR_GFTASKOPS_TD
#define LINNET_DIALECT_GFTASK_IR_GFTASKOPS_TD

include "linnet/Dialect/Gf/IR/GfBase.td"
include "linnet/Dialect/GfStorage/IR/GfStorageBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def GfTask_Dialect : Dialect {
  let name = "gf_task";
  let cppNamespace = "::linnet::gf_task";
  let summary = "linnet Task IR: partitions, halo exchange and task launches";
  let description = [{
    Task IR splits a kernel's destinations over the parts of a mesh and
    states the dependencies between the pieces: halo pack, exchange and
    unpack of remote source values, the interior launch (no remote data)
    and the boundary launch (waits for the halo), joined by an event.
  }];
  let useDefaultTypePrinterParser = 1;
  // `gf_task.planned` marks a gf_kernel.launch that task planning handled.
  let hasOperationAttrVerify = 1;
  let dependentDialects = ["::linnet::gf::GfDialect",
                           "::linnet::gf_storage::GfStorageDialect"];
}

class GfTask_Type<string name, string typeMnemonic>
    : TypeDef<GfTask_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def GfTask_PartitionType : GfTask_Type<"Partition", "partition"> {
  let summary = "one rank's share of a partitioned relation";
}
def GfTask_HaloPlanType : GfTask_Type<"HaloPlan", "halo_plan"> {
  let summary = "which remote entities of which fields a partition needs";
}
def GfTask_HaloBufferType : GfTask_Type<"HaloBuffer", "halo_buffer"> {
  let summary = "a packed send or receive buffer of halo values";
}

class GfTask_Op<string mnemonic, list<Trait> traits = []>
    : Op<GfTask_Dialect, mnemonic, traits>;

def GfTask_PartitionOp : GfTask_Op<"partition"> {
  let summary = "partitions a relation over one mesh axis";
  let description = [{
    `scheme` = "destination": each part owns a contiguous range of
    destinations (and their incoming edges); `owned_entities` is the
    per-part share (`-1`: the relation is sized at run time, so the runtime
    splits it), `ghost_entities` the number of remote sources it reads
    (`-1`: known only at run time). Run-time algorithm choices are recorded
    as discardable attributes (`owner_map_algorithm`, `ghost_map_algorithm`,
    `neighbor_discovery`).
  }];
  let arguments = (ins Gf_RelationType:$relation, StrAttr:$scheme,
                       DenseI64ArrayAttr:$mesh_shape, LinnetI64Attr:$mesh_axis,
                       LinnetI64Attr:$owned_entities, LinnetI64Attr:$ghost_entities,
                       LinnetI64Attr:$version);
  let results = (outs GfTask_PartitionType:$partition);
  let hasVerifier = 1;
}

def GfTask_HaloOp : GfTask_Op<"halo"> {
  let summary = "the halo plan of a partition for some fields";
  let arguments = (ins GfTask_PartitionType:$partition, LinnetI64Attr:$depth,
                       StrArrayAttr:$fields, StrAttr:$strategy);
  let results = (outs GfTask_HaloPlanType:$plan);
  let hasVerifier = 1;
}

def GfTask_HaloPackOp : GfTask_Op<"halo_pack",
    [DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "packs the owned values other parts need into a send buffer";
  let description = [{
    `bytes` is the send buffer's size (an upper bound when the ghost count
    is known only at run time), or `-1` when the relation is sized at run
    time: the runtime sizes it from the partition it computes.
  }];
  let arguments = (ins GfTask_HaloPlanType:$plan,
                       GfStorage_InstanceType:$source, StrAttr:$field,
                       LinnetI64Attr:$bytes, LinnetI64Attr:$snapshot_version);
  let results = (outs GfTask_HaloBufferType:$send, GfStorage_EventType:$done);
  let hasVerifier = 1;
}

def GfTask_HaloExchangeOp : GfTask_Op<"halo_exchange",
    [DeclareOpInterfaceMethods<OpAsmOpInterface, ["getAsmResultNames"]>]> {
  let summary = "exchanges halo buffers within a communication group";
  let arguments = (ins GfTask_HaloPlanType:$plan,
                       GfTask_HaloBufferType:$send, GfStorage_EventType:$ready,
                       LinnetI64Attr:$bytes, StrAttr:$group,
                       LinnetI64Attr:$snapshot_version);
  let results = (outs GfTask_HaloBufferType:$receive,
                      GfStorage_EventType:$done);
  let hasVerifier = 1;
}

def GfTask_HaloUnpackOp : GfTask_Op<"halo_unpack"> {
  let summary = "unpacks received halo values into the ghost instance";
  let arguments = (ins GfTask_HaloPlanType:$plan,
                       GfTask_HaloBufferType:$receive,
                       GfStorage_InstanceType:$ghosts,
                       GfStorage_EventType:$ready, StrAttr:$field,
                       LinnetI64Attr:$snapshot_version);
  let results = (outs GfStorage_EventType:$done);
  let hasVerifier = 1;
}

def GfTask_LaunchOp : GfTask_Op<"launch",
    [AttrSizedOperandSegments,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "runs part of a function's kernels on one partition";
  let description = [{
    `task_kind` is "interior" (destinations whose sources are all owned:
    may start at once) or "boundary" (destinations reading ghosts: must
    depend on the halo unpack), both on a `partition`; or "whole" (every
    destination, no partition). `reads`/`writes` name the logical fields.
    The partition is optional only so that "whole" tasks need none; the
    operand segments are therefore explicit (`operandSegmentSizes`).
  }];
  let arguments = (ins Optional<GfTask_PartitionType>:$partition,
                       Variadic<GfStorage_EventType>:$dependencies,
                       FlatSymbolRefAttr:$callee, StrAttr:$task_kind,
                       StrArrayAttr:$reads, StrArrayAttr:$writes,
                       LinnetI64Attr:$snapshot_version);
  let results = (outs GfStorage_EventType:$done);
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The `task_kind` string as an enum (the op must verify).
    ::linnet::gf_task::TaskKind getTaskKindEnum();
  }];
}

#endif // LINNET_DIALECT_GFTASK_IR_GFTASKOPS_TD
