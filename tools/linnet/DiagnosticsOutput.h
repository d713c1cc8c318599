//===- DiagnosticsOutput.h - --diagnostics=text|json|sarif ------*- C++ -*-===//
//
// `linnet check|plan|build --diagnostics=json` writes one JSON object per
// diagnostic (JSON Lines), `--diagnostics=sarif` one SARIF 2.1.0 log, to
// stderr or to the file `--diagnostics-file` names (then stderr keeps the
// usual text). The exit status is the command's.
//
// Sources: the front end's DiagnosticEngine (structured, with its notes and
// codes "syntax"/"sema"), and every other message the command writes to
// std::cerr ("file:line:col: error: ...", "file: error: [code] /path: ...",
// "linnet build: error: ..."), parsed line by line: indented lines that
// follow become the notes of the diagnostic before them. docs/ci.md.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TOOLS_DIAGNOSTICSOUTPUT_H
#define LINNET_TOOLS_DIAGNOSTICSOUTPUT_H

#include "linnet/Syntax/Diagnostics.h"

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

namespace linnet::tool {

struct DiagRecord {
  std::string file;              // empty: not about a file
  uint32_t line = 0, column = 0; // 0: unknown
  std::string severity;          // error | warning | note
  std::string code;
  std::string message;
  std::string path; // a JSON pointer into `file` (plans), else empty
  std::vector<DiagRecord> notes;
};

/// The JSON Lines object of one diagnostic (docs/ci.md).
nlohmann::ordered_json toJson(const DiagRecord &r);
/// A SARIF 2.1.0 log holding `records`.
nlohmann::ordered_json toSarif(const std::vector<DiagRecord> &records, const std::string &toolVersion);
/// Structured records of text diagnostics, one line at a time: located
/// errors, planning reports, "linnet CMD: error: ..." and the indented notes
/// under them. `command` names the code of tool messages ("build", ...).
std::vector<DiagRecord> parseDiagnosticText(const std::string &text, const std::string &command);

class DiagnosticsOutput : public DiagnosticConsumer {
public:
  enum class Format { Text, Json, Sarif };

  /// Registers --diagnostics and --diagnostics-file on `cmd`.
  void addOptions(CLI::App *cmd);
  /// Installs the capture for `command` when a structured format was asked
  /// for; in text mode does nothing.
  void begin(const std::string &command);
  /// Restores std::cerr, turns what it caught into records and writes them
  /// all. Returns `rc`, or 1 if the diagnostics file could not be written.
  int finish(int rc);
  /// True between begin() and finish() of a json/sarif run.
  bool active() const { return active_; }

  void handle(const DiagnosticEngine &engine, const Diagnostic &d) override;

private:
  Format format() const;
  std::string formatName_ = "text";
  std::string file_;
  std::string command_;
  bool active_ = false;
  std::vector<DiagRecord> records_;
  std::streambuf *savedCerr_ = nullptr;
  std::unique_ptr<std::streambuf> capture_;
  std::string captured_;
  size_t parsedUpTo_ = 0;
  void flushCaptured();
};

/// The process's one output (the CLI runs one command).
DiagnosticsOutput &diagnosticsOutput();

} // namespace linnet::tool

#endif
