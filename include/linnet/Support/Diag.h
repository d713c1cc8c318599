//===- Diag.h - Diagnostics as values ---------------------------*- C++ -*-===//
//
// Every error, warning and note a command reports is a `Diag`: a level, a
// stable short code, the message and where it is (a source position, a
// file, a JSON pointer into a file), with its notes. The layers that find
// problems (the front end, the importer, the planners, the code
// generators) hand Diags to the `DiagSink` they were given; the sink
// decides the form: text on a stream (`TextDiagSink`, the form users read
// in a terminal), or the CLI's `--diagnostics=json|sarif` records. Nothing
// is rendered to text and read back.
//
// The text form of one Diag:
//
//   file:line:col: error: message        a source position (and the caret
//     <source line>                      excerpt the front end gives)
//     ^
//   file: error: [code] /path: message   a place in a JSON document
//   file: error: message                 a whole file
//   linnet build: error: message         the command itself
//
// Notes follow their diagnostic: located ones in the first form, others
// indented by two spaces. Plain C++ (the parser's fuzzer compiles it alone);
// DiagError.h carries Diags through llvm::Error.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_DIAG_H
#define LINNET_SUPPORT_DIAG_H

#include <cstdint>
#include <iosfwd>
#include <mutex>
#include <string>
#include <vector>

namespace linnet::support {

struct Diag {
  enum class Level { Error, Warning, Note };
  Level level = Level::Error;
  /// Stable short id: "syntax", "sema", "io", "usage", "import", "codegen",
  /// a planning verifier's "plan.*", or the command's name.
  std::string code;
  std::string message;
  std::string file;              // empty: not about a file
  uint32_t line = 0, column = 0; // 0: unknown
  std::string path;              // a JSON pointer into `file` ("/" its root), else empty
  std::string excerpt;           // text form only: the source lines under a located message
  std::vector<Diag> notes;

  static Diag error(std::string code, std::string message);
  static Diag note(std::string message);
  /// An error about `file` as a whole.
  static Diag inFile(std::string code, std::string file, std::string message);
  /// An error at `path` of the JSON document `file`.
  static Diag atPointer(std::string code, std::string file, std::string path, std::string message);
  /// An error at a source position.
  static Diag at(std::string code, std::string file, uint32_t line, uint32_t column, std::string message);
  /// An error at a position the plans record as "file:line:col" (a task's
  /// provenance); about the command when `location` is empty.
  static Diag atLocation(std::string code, const std::string &location, std::string message);

  Diag &withNote(Diag n) {
    n.level = Level::Note;
    notes.push_back(std::move(n));
    return *this;
  }
  Diag &withNote(std::string message) { return withNote(note(std::move(message))); }
  bool located() const { return !file.empty() && line != 0; }
};

const char *levelName(Diag::Level level);

/// The text form (above) of `d` and its notes; `command` names the tool in
/// a message about the command itself ("" for plain `linnet:`).
std::string renderText(const Diag &d, const std::string &command);

/// Where a command's diagnostics go. A Note-level report belongs to the
/// diagnostic reported before it. Reports from several threads (a build's
/// variants) are taken one at a time.
class DiagSink {
public:
  virtual ~DiagSink();
  void report(Diag d);
  unsigned errorCount() const;

protected:
  virtual void handle(Diag d) = 0;

private:
  mutable std::mutex mutex_;
  unsigned errors_ = 0;
};

/// Writes the text form to a stream.
class TextDiagSink : public DiagSink {
public:
  TextDiagSink(std::ostream &os, std::string command) : os_(os), command_(std::move(command)) {}

protected:
  void handle(Diag d) override;

private:
  std::ostream &os_;
  std::string command_;
};

/// Keeps what it is given (tests, and callers that decide later).
class CollectingDiagSink : public DiagSink {
public:
  std::vector<Diag> diags;

protected:
  void handle(Diag d) override;
};

} // namespace linnet::support

#endif // LINNET_SUPPORT_DIAG_H
