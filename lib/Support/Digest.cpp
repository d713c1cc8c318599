//===- Digest.cpp - SHA-256 of bytes --------------------------------------===//
#include "linnet/Support/Digest.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/SHA256.h"

namespace linnet::support {

std::string sha256Hex(std::string_view data) {
  std::array<uint8_t, 32> h = llvm::SHA256::hash(llvm::ArrayRef<uint8_t>(
      reinterpret_cast<const uint8_t *>(data.data()), data.size()));
  return llvm::toHex(h, /*LowerCase=*/true);
}

bool isSha256Hex(std::string_view s) {
  if (s.size() != 64)
    return false;
  for (char c : s)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')))
      return false;
  return true;
}

} // namespace linnet::support
