//===- DiagError.h - Diagnostics through llvm::Error ------------*- C++ -*-===//
//
// The layers whose interfaces return llvm::Error (the code generators)
// carry their diagnostics as values in a DiagError; reportError hands them
// to a sink (Diag.h).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_DIAGERROR_H
#define LINNET_SUPPORT_DIAGERROR_H

#include "linnet/Support/Diag.h"

#include "llvm/Support/Error.h"

namespace linnet::support {

/// An llvm::Error that carries diagnostics as values (what failed, then
/// the located diagnostics behind it), for the layers whose interfaces
/// return llvm::Error.
class DiagError : public llvm::ErrorInfo<DiagError> {
public:
  static char ID;
  explicit DiagError(std::vector<Diag> diags) : diags_(std::move(diags)) {}
  const std::vector<Diag> &diags() const { return diags_; }
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::vector<Diag> diags_;
};

/// Reports `e` to `sink`: a DiagError's diagnostics as they are, any other
/// error as one diagnostic with `code` and `prefix` before its message.
void reportError(llvm::Error e, DiagSink &sink, const std::string &code, const std::string &prefix = {});

} // namespace linnet::support

#endif // LINNET_SUPPORT_DIAGERROR_H
