//===- Diagnostics.cpp ----------------------------------------------------===//
#include "linnet/Syntax/Diagnostics.h"

#include <fmt/format.h>

#include <ostream>
#include <regex>

using namespace linnet;

const char *linnet::severityName(Severity s) {
  switch (s) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  }
  return "error";
}

std::string DiagnosticEngine::render(const Diagnostic &d) const {
  if (!d.loc.isValid())
    return fmt::format("linnet: {}: {}\n", severityName(d.severity), d.message);
  LineCol lc = sm_.lineCol(d.loc);
  std::string s = fmt::format("{}:{}:{}: {}: {}\n", sm_.name(d.loc.buffer),
                              lc.line, lc.col, severityName(d.severity),
                              d.message);
  std::string_view line = sm_.lineText(d.loc);
  s += "  ";
  s += line;
  s += "\n  ";
  // Keep tabs so the caret lines up under the same column in a terminal.
  for (uint32_t i = 0; i + 1 < lc.col && i < line.size(); ++i)
    s += line[i] == '\t' ? '\t' : ' ';
  s += "^\n";
  return s;
}

support::Diag DiagnosticEngine::toDiag(const Diagnostic &d) const {
  support::Diag out = support::Diag::error(d.code, d.message);
  out.level = d.severity == Severity::Error     ? support::Diag::Level::Error
              : d.severity == Severity::Warning ? support::Diag::Level::Warning
                                                : support::Diag::Level::Note;
  if (d.loc.isValid()) {
    LineCol lc = sm_.lineCol(d.loc);
    out.file = std::string(sm_.name(d.loc.buffer));
    out.line = lc.line;
    out.column = lc.col;
    std::string text = render(d);
    out.excerpt = text.substr(text.find('\n') + 1);
  }
  return out;
}

void DiagnosticEngine::emit(Diagnostic d) {
  if (d.severity != Severity::Note)
    lastCode_ = d.code.empty() ? category_ : d.code;
  d.code = lastCode_.empty() ? category_ : lastCode_;
  if (collect_) {
    collected_.push_back(std::move(d));
    return;
  }
  if (sink_)
    sink_->report(toDiag(d));
  else if (out_)
    *out_ << render(d);
}

void DiagnosticEngine::error(SourceLoc loc, std::string message, std::string code) {
  if (limitReached()) {
    suppressNotes_ = true;
    return;
  }
  suppressNotes_ = false;
  ++errors_;
  emit({Severity::Error, loc, std::move(message), std::move(code)});
  if (limitReached())
    emit({Severity::Note, SourceLoc{},
          fmt::format("too many errors ({}), stopping now", limit_), {}});
}

void DiagnosticEngine::warning(SourceLoc loc, std::string message, std::string code) {
  emit({Severity::Warning, loc, std::move(message), std::move(code)});
}

void DiagnosticEngine::note(SourceLoc loc, std::string message) {
  if (suppressNotes_)
    return;
  emit({Severity::Note, loc, std::move(message), {}});
}

namespace {
struct Expectation {
  Severity severity;
  uint32_t line;
  uint32_t col; // 0 = any column
  std::string text;
  uint32_t commentLine;
  bool matched = false;
};
} // namespace

bool linnet::verifyDiagnostics(const SourceManager &sm, uint32_t buffer,
                               const std::vector<Diagnostic> &diags,
                               std::ostream &out) {
  std::string_view text = sm.text(buffer);
  // expected-(error|note|warning)[@(+N|-N|N)][:COL] {{message}}
  static const std::regex re(
      R"(expected-(error|note|warning)(@([+-]?)([0-9]+))?(:([0-9]+))?\s*\{\{(.*?)\}\})");
  std::vector<Expectation> expected;
  std::string all(text);
  for (auto it = std::sregex_iterator(all.begin(), all.end(), re);
       it != std::sregex_iterator(); ++it) {
    const std::smatch &m = *it;
    SourceLoc at{buffer, static_cast<uint32_t>(m.position(0))};
    uint32_t here = sm.lineCol(at).line;
    Expectation e;
    e.severity = m[1] == "error"     ? Severity::Error
                 : m[1] == "note"    ? Severity::Note
                                     : Severity::Warning;
    e.line = here;
    if (m[2].matched) {
      long n = std::stol(m[4]);
      if (m[3] == "+")
        e.line = here + n;
      else if (m[3] == "-")
        e.line = here - n;
      else
        e.line = static_cast<uint32_t>(n);
    }
    e.col = m[5].matched ? static_cast<uint32_t>(std::stoul(m[6])) : 0;
    e.text = m[7];
    e.commentLine = here;
    expected.push_back(std::move(e));
  }

  bool ok = true;
  for (const Diagnostic &d : diags) {
    if (!d.loc.isValid() || d.loc.buffer != buffer) {
      if (d.severity == Severity::Note && !d.loc.isValid())
        continue; // "too many errors" and similar global notes
      out << "unexpected diagnostic without location in this file: "
          << d.message << "\n";
      ok = false;
      continue;
    }
    LineCol lc = sm.lineCol(d.loc);
    bool found = false;
    for (Expectation &e : expected) {
      if (e.matched || e.severity != d.severity || e.line != lc.line)
        continue;
      if (e.col != 0 && e.col != lc.col)
        continue;
      if (d.message.find(e.text) == std::string::npos)
        continue;
      e.matched = found = true;
      break;
    }
    if (!found) {
      out << fmt::format("{}:{}:{}: unexpected {}: {}\n", sm.name(buffer),
                         lc.line, lc.col, severityName(d.severity), d.message);
      ok = false;
    }
  }
  for (const Expectation &e : expected) {
    if (e.matched)
      continue;
    out << fmt::format("{}:{}: expected {} at line {}{} was not produced: {}\n",
                       sm.name(buffer), e.commentLine, severityName(e.severity),
                       e.line, e.col ? fmt::format(":{}", e.col) : "", e.text);
    ok = false;
  }
  return ok;
}
