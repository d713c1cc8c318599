//===- DiagnosticsOutput.h - --diagnostics=text|json|sarif ------*- C++ -*-===//
//
// `linnet check|plan|build --diagnostics=json` writes one JSON object per
// diagnostic (JSON Lines), `--diagnostics=sarif` one SARIF 2.1.0 log, to
// stderr or to the file `--diagnostics-file` names (then stderr keeps the
// usual text). The exit status is the command's.
//
// Every layer reports support::Diag values to the sink it is given; the
// command's sink is this one (tool::diags()). In text mode it writes their
// text form to stderr as it goes. A line a command still writes to stderr
// itself becomes a record of code "unstructured", word for word.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_TOOLS_DIAGNOSTICSOUTPUT_H
#define LINNET_TOOLS_DIAGNOSTICSOUTPUT_H

#include "linnet/Support/Diag.h"

#include <nlohmann/json.hpp>

#include <CLI/CLI.hpp>

#include <memory>
#include <optional>
#include <streambuf>
#include <string>
#include <vector>

namespace linnet::tool {

/// The JSON Lines object of one diagnostic (docs/ci.md).
nlohmann::ordered_json toJson(const support::Diag &r);
/// A SARIF 2.1.0 log holding `records`.
nlohmann::ordered_json toSarif(const std::vector<support::Diag> &records, const std::string &toolVersion);

class DiagnosticsOutput : public support::DiagSink {
public:
  enum class Format { Text, Json, Sarif };

  /// Registers --diagnostics and --diagnostics-file on `cmd`.
  void addOptions(CLI::App *cmd);
  /// Starts `command`: its name for the text form, and the records when a
  /// structured format was asked for.
  void begin(const std::string &command);
  /// Writes the records (json/sarif). Returns `rc`, or 1 if the diagnostics file could not be written.
  int finish(int rc);
  /// True between begin() and finish() of a json/sarif run.
  bool active() const { return active_; }

protected:
  void handle(support::Diag d) override;

private:
  Format format() const;
  std::string formatName_ = "text";
  std::string file_;
  std::string command_;
  bool active_ = false;
  std::vector<support::Diag> records_;
  std::streambuf *savedCerr_ = nullptr;
  std::unique_ptr<std::streambuf> capture_;
  std::string captured_;
  size_t parsedUpTo_ = 0;
  void flushCaptured();
};

/// The process's one output (the CLI runs one command).
DiagnosticsOutput &diagnosticsOutput();
/// Where the running command reports: diagnosticsOutput().
support::DiagSink &diags();

} // namespace linnet::tool

#endif
