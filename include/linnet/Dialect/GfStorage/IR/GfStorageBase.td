//===- GfStorageBase.td - gf_storage dialect and types -------*- tablegen -*-===//

#ifndef LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEBASE_TD
#define LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "linnet/Dialect/LinnetBase.td"

def GfStorage_Dialect : Dialect {
  let name = "gf_storage";
  let cppNamespace = "::linnet::gf_storage";
  let summary = "linnet storage: logical regions, physical instances, events";
  let description = [{
    A logical region is one versioned field (`x` at version 3); an instance
    is a physical allocation holding part of it (the locally owned rows, the
    ghost rows); an event is the completion of an operation that produced or
    consumed storage, used to order tasks.
  }];
  let useDefaultTypePrinterParser = 1;
}

class GfStorage_Type<string name, string typeMnemonic>
    : TypeDef<GfStorage_Dialect, name> {
  let mnemonic = typeMnemonic;
}

def GfStorage_RegionType : GfStorage_Type<"Region", "region"> {
  let summary = "a logical, versioned field";
}
def GfStorage_InstanceType : GfStorage_Type<"Instance", "instance"> {
  let summary = "a physical allocation holding part of a logical region";
}
def GfStorage_EventType : GfStorage_Type<"Event", "event"> {
  let summary = "the completion of an asynchronous operation";
}

#endif // LINNET_DIALECT_GFSTORAGE_IR_GFSTORAGEBASE_TD
