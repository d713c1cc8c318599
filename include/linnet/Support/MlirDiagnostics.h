//===- MlirDiagnostics.h - MLIR diagnostics as users read them --*- C++ -*-===//
//
// An MLIR diagnostic that reaches a user reads `file:line:col: error: ...`:
// the source position of the op (its FileLineColLoc, wherever it sits in a
// fused or call-site location), never MLIR's `loc(...)` form, and without
// the "see current operation" note that prints the IR. Every place that
// runs MLIR on a user's model (import, the pass pipelines, the code
// generators) collects diagnostics through this handler.
//
// Header-only: its users link MLIR already; the Support library does not.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_MLIRDIAGNOSTICS_H
#define LINNET_SUPPORT_MLIRDIAGNOSTICS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace linnet::support {

/// "file:line:col: " of `loc`, or "" when it carries no source position.
inline std::string sourcePrefix(mlir::Location loc) {
  if (auto flc = loc->findInstanceOf<mlir::FileLineColLoc>())
    return flc.getFilename().str() + ":" + std::to_string(flc.getLine()) + ":" +
           std::to_string(flc.getColumn()) + ": ";
  return "";
}

/// Collects the diagnostics MLIR reports while it is alive: all of them
/// (errors with their notes) in `text`, the first error alone in `first`.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *ctx)
      : handler_(ctx, [this](mlir::Diagnostic &d) {
          std::string one = sourcePrefix(d.getLocation()) + severity(d) + d.str();
          if (first.empty() && d.getSeverity() == mlir::DiagnosticSeverity::Error)
            first = one;
          text += one + "\n";
          for (mlir::Diagnostic &note : d.getNotes())
            if (!llvm::StringRef(note.str()).starts_with("see current operation"))
              text += sourcePrefix(note.getLocation()) + "note: " + note.str() + "\n";
          return mlir::success();
        }) {}

  std::string text;  // every diagnostic, one per line, notes after theirs
  std::string first; // the first error, one line

  /// ": <first error>", or "" when there was none.
  std::string suffix() const { return first.empty() ? "" : ": " + first; }

private:
  static std::string severity(const mlir::Diagnostic &d) {
    switch (d.getSeverity()) {
    case mlir::DiagnosticSeverity::Error:
      return "error: ";
    case mlir::DiagnosticSeverity::Warning:
      return "warning: ";
    case mlir::DiagnosticSeverity::Note:
      return "note: ";
    case mlir::DiagnosticSeverity::Remark:
      return "remark: ";
    }
    return "";
  }
  mlir::ScopedDiagnosticHandler handler_;
};

} // namespace linnet::support

#endif
