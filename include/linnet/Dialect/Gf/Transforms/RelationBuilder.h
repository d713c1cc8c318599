//===- RelationBuilder.h - The routine that builds radius/kNN relations -*- C++ -*-===//
//
// `-gf-build-relations` turns a `radius` or `knn` gf.relation into a call of
// a routine each target provides (the CPU target links
// lib/Target/CPU/RelationBuild.c; a target without one refuses the call at
// the user's line). Its C interface (`llvm.emit_c_interface`):
//
//   void _mlir_ciface_linnet_relation_build(
//       memref<?x?xf64> *pos_dst, memref<?x?xf64> *pos_src,
//       memref<?xi64> *row_ptr /* M + 1 */, memref<?xi64> *col_idx /* M * k */,
//       int64_t kind /* 0 knn, 1 radius */, int64_t k, int64_t exclude_self, double r);
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DIALECT_GF_TRANSFORMS_RELATIONBUILDER_H
#define LINNET_DIALECT_GF_TRANSFORMS_RELATIONBUILDER_H

namespace linnet::gf {

/// The symbol of the relation builder.
inline constexpr const char *kRelationBuilder = "linnet_relation_build";

/// Operand positions of its call.
enum RelationBuilderOperand : unsigned {
  kBuildPosDst = 0,
  kBuildPosSrc = 1,
  kBuildRowPtr = 2,
  kBuildColIdx = 3,
  kBuildKind = 4,
  kBuildK = 5,
  kBuildExcludeSelf = 6,
  kBuildRadius = 7,
};

} // namespace linnet::gf

#endif // LINNET_DIALECT_GF_TRANSFORMS_RELATIONBUILDER_H
