//===- DiagError.cpp - Diagnostics through llvm::Error --------------------===//
#include "linnet/Support/DiagError.h"

namespace linnet::support {

char DiagError::ID = 0;

void DiagError::log(llvm::raw_ostream &os) const {
  for (size_t i = 0; i < diags_.size(); ++i) {
    std::string text = renderText(diags_[i], "");
    if (i == 0 && !diags_[i].located() && diags_[i].file.empty())
      text = diags_[i].message + "\n" + text.substr(text.find('\n') + 1);
    if (i + 1 == diags_.size() && !text.empty() && text.back() == '\n')
      text.pop_back();
    os << text;
  }
}

void reportError(llvm::Error e, DiagSink &sink, const std::string &code, const std::string &prefix) {
  llvm::handleAllErrors(
      std::move(e),
      [&](const DiagError &de) {
        bool first = true;
        for (Diag d : de.diags()) {
          if (first && !d.located() && d.file.empty())
            d.message = prefix + d.message;
          first = false;
          sink.report(std::move(d));
        }
      },
      [&](const llvm::ErrorInfoBase &other) { sink.report(Diag::error(code, prefix + other.message())); });
}

} // namespace linnet::support
