//===- Diagnostics.h - Errors and notes with source locations ---*- C++ -*-===//
//
// Every diagnostic is rendered as
//
//   file:line:col: error: <message>
//     <source line>
//     ^
//
// The engine counts errors, stops accepting them past a limit, and either
// prints as it goes, keeps them for --verify-diagnostics, or hands them as
// values (support::Diag, with the caret excerpt) to the sink it was given.
//
// Every diagnostic carries a stable short code: the one given at the report,
// else the engine's category when it was reported ("syntax" while the lexer
// and parser run, "sema" otherwise).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SYNTAX_DIAGNOSTICS_H
#define LINNET_SYNTAX_DIAGNOSTICS_H

#include "linnet/Support/Diag.h"
#include "linnet/Syntax/SourceManager.h"

#include <iosfwd>
#include <string>
#include <vector>

namespace linnet {

enum class Severity { Error, Warning, Note };

const char *severityName(Severity s);

struct Diagnostic {
  Severity severity;
  SourceLoc loc;
  std::string message;
  std::string code; // stable short id ("syntax", "sema", ...); notes: their error's
};

class DiagnosticEngine {
public:
  /// Prints to `out` (nullptr: nowhere).
  explicit DiagnosticEngine(const SourceManager &sm, std::ostream *out = nullptr) : sm_(sm), out_(out) {}
  /// Hands every diagnostic to `sink`.
  DiagnosticEngine(const SourceManager &sm, support::DiagSink &sink) : sm_(sm), sink_(&sink) {}

  void error(SourceLoc loc, std::string message, std::string code = {});
  void warning(SourceLoc loc, std::string message, std::string code = {});
  void note(SourceLoc loc, std::string message);

  /// The code of diagnostics reported without one; returns the previous.
  std::string setCategory(std::string category) {
    std::swap(category, category_);
    return category;
  }
  const std::string &category() const { return category_; }


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
  /// One diagnostic as a value: file, line and column, the caret excerpt.
  support::Diag toDiag(const Diagnostic &d) const;
  const SourceManager &sourceManager() const { return sm_; }

private:
  void emit(Diagnostic d);
  const SourceManager &sm_;
  std::ostream *out_ = nullptr;
  support::DiagSink *sink_ = nullptr;
  std::string category_ = "sema";
  std::string lastCode_;
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
