//===- Peer.h - Reading another op from a verifier --------------*- C++ -*-===//
//
// MLIR verifies ops one at a time, in block order, and an op may use a value
// defined after it (in a graph region, or before the dominance error that
// follows is reported). So when an op's verifier reads another op -- its
// "peer", such as the gf.relation an apply reads -- that peer is not
// necessarily verified yet: a required attribute may be missing or of another
// kind. The generated accessors (`getNumSrc()`) assume it was checked and
// dereference null. Every verifier of the gf dialects reads peers through
// these helpers instead: a malformed peer gives nothing to check against,
// and its own verifier reports it.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_DIALECT_GF_IR_PEER_H
#define LINNET_DIALECT_GF_IR_PEER_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace linnet::gf {

/// The op defining `v` as an OpT, or null (also for a block argument).
template <typename OpT> OpT peerOp(mlir::Value v) {
  return v ? v.getDefiningOp<OpT>() : OpT();
}

/// Attribute `name` of a peer, or null when it is absent or not an AttrT.
template <typename AttrT> AttrT peerAttr(mlir::Operation *peer, llvm::StringRef name) {
  return peer ? llvm::dyn_cast_or_null<AttrT>(peer->getAttr(name)) : AttrT();
}

/// Integer attribute `name` of a peer, when present and an integer.
inline std::optional<int64_t> peerInt(mlir::Operation *peer, llvm::StringRef name) {
  if (auto a = peerAttr<mlir::IntegerAttr>(peer, name))
    return a.getInt();
  return std::nullopt;
}

/// The facts of a gf.relation that other ops' verifiers check against.
struct RelationFacts {
  llvm::StringRef id, realization;
  int64_t version, numSrc, numDst;

  /// The facts of the gf.relation defining `relation`; nullopt when it is
  /// not defined by a gf.relation or that op lacks one of them.
  static std::optional<RelationFacts> of(mlir::Value relation);
};

} // namespace linnet::gf

#endif
