//===- Diagnostics.h - Errors and notes with source locations ---*- C++ -*-===//
//
// Every diagnostic is rendered as
//
//   file:line:col: error: <message>
//     <source line>
//     ^
//
// The engine counts errors, stops accepting them past a limit, and can either
// print as it goes or keep them for --verify-diagnostics.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SYNTAX_DIAGNOSTICS_H
#define LINNET_SYNTAX_DIAGNOSTICS_H

#include "linnet/Syntax/SourceManager.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace linnet {

enum class Severity { Error, Warning, Note };

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
};

class DiagnosticEngine {
public:
  explicit DiagnosticEngine(const SourceManager &sm, std::ostream *out = nullptr)
      : sm_(sm), out_(out) {}

  void error(SourceLoc loc, std::string message);
  void warning(SourceLoc loc, std::string message);
  void note(SourceLoc loc, std::string message);

  unsigned errorCount() const { return errors_; }
  bool hasErrors() const { return errors_ != 0; }
  /// True once the error limit was reached: callers should stop early.
  bool limitReached() const { return limit_ != 0 && errors_ >= limit_; }
  void setErrorLimit(unsigned limit) { limit_ = limit; }

  /// Keep diagnostics instead of printing them (for verification).
  void setCollect(bool collect) { collect_ = collect; }
  const std::vector<Diagnostic> &collected() const { return collected_; }

  /// Renders one diagnostic in the standard form, with the caret excerpt.
  std::string render(const Diagnostic &d) const;
  const SourceManager &sourceManager() const { return sm_; }

private:
  void emit(Diagnostic d);
  const SourceManager &sm_;
  std::ostream *out_;
  unsigned errors_ = 0;
  unsigned limit_ = 20;
  bool collect_ = false;
  bool suppressNotes_ = false;
  std::vector<Diagnostic> collected_;
};

/// Checks `// expected-error@+N:C {{text}}` style comments in buffer `buffer`
/// against the collected diagnostics. Problems are written to `out`; returns
/// true if every expectation matched and no diagnostic was unexpected.
bool verifyDiagnostics(const SourceManager &sm, uint32_t buffer,
                       const std::vector<Diagnostic> &diags, std::ostream &out);

} // namespace linnet

#endif // LINNET_SYNTAX_DIAGNOSTICS_H
