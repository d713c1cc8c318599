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

#include "linnet/Support/DiagError.h"

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

/// `d` as a value: at its op's source position where it has one.
inline Diag toDiag(const mlir::Diagnostic &d, const std::string &code) {
  Diag out = Diag::error(code, d.str());
  switch (d.getSeverity()) {
  case mlir::DiagnosticSeverity::Warning:
    out.level = Diag::Level::Warning;
    break;
  case mlir::DiagnosticSeverity::Note:
  case mlir::DiagnosticSeverity::Remark:
    out.level = Diag::Level::Note;
    break;
  case mlir::DiagnosticSeverity::Error:
    break;
  }
  if (auto flc = d.getLocation()->findInstanceOf<mlir::FileLineColLoc>()) {
    out.file = flc.getFilename().str();
    out.line = flc.getLine();
    out.column = flc.getColumn();
  }
  return out;
}

/// Collects the diagnostics MLIR reports while it is alive, as values:
/// errors with their notes, never the note that prints the IR. Their text
/// forms (`first`, `text`) are rendered from the values when asked for.
class DiagnosticCollector {
public:
  explicit DiagnosticCollector(mlir::MLIRContext *ctx, std::string code = "codegen")
      : handler_(ctx, [this, code](mlir::Diagnostic &d) {
          Diag value = toDiag(d, code);
          for (mlir::Diagnostic &note : d.getNotes())
            if (!llvm::StringRef(note.str()).starts_with("see current operation"))
              value.withNote(toDiag(note, code));
          diags.push_back(std::move(value));
          return mlir::success();
        }) {}

  std::vector<Diag> diags;

  /// The first error, or nullptr.
  const Diag *firstError() const {
    for (const Diag &d : diags)
      if (d.level == Diag::Level::Error)
        return &d;
    return nullptr;
  }
  /// The first error on one line (`file:line:col: error: ...`), or "".
  std::string first() const { return firstError() ? line(*firstError()) : ""; }
  /// Every diagnostic, one per line, notes after theirs.
  std::string text() const {
    std::string s;
    for (const Diag &d : diags) {
      s += line(d) + "\n";
      for (const Diag &n : d.notes)
        s += line(n) + "\n";
    }
    return s;
  }
  /// ": <first error>", or "" when there was none.
  std::string suffix() const { return firstError() ? ": " + first() : ""; }

  /// An error whose first diagnostic says `what` failed (with `code`) and
  /// whose others are the diagnostics collected.
  llvm::Error error(const std::string &what, const std::string &code = "codegen") const {
    std::vector<Diag> all = {Diag::error(code, diags.empty() ? what : what + ":")};
    all.insert(all.end(), diags.begin(), diags.end());
    return llvm::make_error<DiagError>(std::move(all));
  }

private:
  static std::string line(const Diag &d) {
    std::string at = d.located() ? d.file + ":" + std::to_string(d.line) + ":" + std::to_string(d.column) + ": " : "";
    return at + levelName(d.level) + ": " + d.message;
  }
  mlir::ScopedDiagnosticHandler handler_;
};

} // namespace linnet::support

#endif
