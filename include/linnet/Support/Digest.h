//===- Digest.h - SHA-256 of bytes ------------------------------*- C++ -*-===//
//
// The one SHA-256 of linnet (LLVM Support's): artifact manifests, planning
// digests and the build cache all use it.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_DIGEST_H
#define LINNET_SUPPORT_DIGEST_H

#include <string>
#include <string_view>

namespace linnet::support {

/// The SHA-256 of `data` as 64 lowercase hex digits.
std::string sha256Hex(std::string_view data);

/// True when `s` is 64 lowercase hex digits.
bool isSha256Hex(std::string_view s);

} // namespace linnet::support

#endif
