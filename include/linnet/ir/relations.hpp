//===- relations.hpp - Relations built from coordinates ---------*- C++ -*-===//
//
// std.graph's relations (language §10.5) are built by a routine each target
// provides: the importer calls it, task planning plans it, a target links
// or refuses it. Its C interface (`llvm.emit_c_interface`):
//
//   void _mlir_ciface_linnet_relation_build(
//       memref<?x?xf64> *pos_dst, memref<?x?xf64> *pos_src,
//       memref<?xi64> *row_ptr /* M + 1 */, memref<?xi64> *col_idx /* M * k */,
//       int64_t kind /* 0 knn, 1 radius */, int64_t k, int64_t exclude_self, double r);
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_IR_RELATIONS_HPP
#define LINNET_IR_RELATIONS_HPP

namespace linnet::ir {

/// The symbol of the relation builder.
inline constexpr const char *kRelationBuilder = "linnet_relation_build";

} // namespace linnet::ir

#endif // LINNET_IR_RELATIONS_HPP
