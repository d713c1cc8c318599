//===- LinnetBase.td - constraints shared by linnet's dialects -*- tablegen -*-===//

#ifndef LINNET_DIALECT_LINNETBASE_TD
#define LINNET_DIALECT_LINNETBASE_TD

include "mlir/IR/CommonAttrConstraints.td"

// An i64 attribute read back as a *signed* int64_t. Upstream I64Attr returns
// uint64_t (zero-extended), but linnet uses -1 for "unknown" / "automatic"
// (num_src, halo_depth, ghost_entities), so getters must sign-extend.
def LinnetI64Attr : TypedSignlessIntegerAttrBase<
    I64, "int64_t", "64-bit signless integer attribute"> {
  let convertFromStorage = "$_self.getValue().getSExtValue()";
}

#endif // LINNET_DIALECT_LINNETBASE_TD
