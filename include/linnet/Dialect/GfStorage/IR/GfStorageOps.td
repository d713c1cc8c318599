//===- GfStorageOps.td - gf_storage operations ---------------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEOPS_TD
#define LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEOPS_TD

include "linnet/Dialect/GfStorage/IR/GfStorageBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class GfStorage_Op<string mnemonic, list<Trait> traits = []>
    : Op<GfStorage_Dialect, mnemonic, traits>;

def GfStorage_RegionOp : GfStorage_Op<"region"> {
  let summary = "names a tensor as a logical, versioned region";
  let description = [{
    `logical_id` is the field's name, `elements` its entity count (`-1` when
    unknown) and `version` the snapshot it holds.
  }];
  let arguments = (ins AnyRankedTensor:$value, StrAttr:$logical_id,
                       LinnetI64Attr:$elements, LinnetI64Attr:$version);
  let results = (outs GfStorage_RegionType:$region);
  let hasVerifier = 1;
}

def GfStorage_InstanceOp : GfStorage_Op<"instance"> {
  let summary = "a physical allocation for part of a logical region";
  let description = [{
    `device` says which part it holds ("local": owned entities, "ghost":
    copies of remote entities, "replica": everything), `memory_space` where
    it lives ("device" or "host"), `layout` how it is laid out
    ("partitioned" or "replicated"), `capacity_bytes` its size (an upper
    bound when the ghost count is only known at run time; `-1` when the
    relation itself is sized at run time, so only the runtime can size the
    instance) and `external`
    whether its memory is provided by the caller.
  }];
  let arguments = (ins GfStorage_RegionType:$region, LinnetI64Attr:$capacity_bytes,
                       StrAttr:$device, BoolAttr:$external, StrAttr:$layout,
                       StrAttr:$memory_space);
  let results = (outs GfStorage_InstanceType:$instance);
  let hasVerifier = 1;
}

def GfStorage_JoinOp : GfStorage_Op<"join", [Pure]> {
  let summary = "an event that completes when all its operands completed";
  let arguments = (ins Variadic<GfStorage_EventType>:$events,
                       LinnetI64Attr:$snapshot_version);
  let results = (outs GfStorage_EventType:$done);
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

#endif // LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEOPS_TD
