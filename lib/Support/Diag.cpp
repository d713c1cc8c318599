//===- Diag.cpp - Diagnostics as values -----------------------------------===//
#include "linnet/Support/Diag.h"

#include <fmt/format.h>

#include <ostream>
#include <string>
#include <string_view>

namespace linnet::support {

Diag Diag::error(std::string code, std::string message) {
  Diag d;
  d.code = std::move(code);
  d.message = std::move(message);
  return d;
}

Diag Diag::note(std::string message) {
  Diag d;
  d.level = Level::Note;
  d.message = std::move(message);
  return d;
}

Diag Diag::inFile(std::string code, std::string file, std::string message) {
  Diag d = error(std::move(code), std::move(message));
  d.file = std::move(file);
  return d;
}

Diag Diag::atPointer(std::string code, std::string file, std::string path, std::string message) {
  Diag d = inFile(std::move(code), std::move(file), std::move(message));
  d.path = path.empty() ? "/" : std::move(path);
  return d;
}

Diag Diag::at(std::string code, std::string file, uint32_t line, uint32_t column, std::string message) {
  Diag d = inFile(std::move(code), std::move(file), std::move(message));
  d.line = line;
  d.column = column;
  return d;
}

Diag Diag::atLocation(std::string code, const std::string &location, std::string message) {
  // "file:line:col", the file possibly holding colons itself.
  size_t c2 = location.rfind(':');
  size_t c1 = c2 == std::string::npos || c2 == 0 ? std::string::npos : location.rfind(':', c2 - 1);
  auto number = [](std::string_view s, uint32_t &out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    out = uint32_t(std::stoul(std::string(s)));
    return out != 0;
  };
  uint32_t line = 0, column = 0;
  if (c1 != std::string::npos && c1 > 0 && number(std::string_view(location).substr(c1 + 1, c2 - c1 - 1), line) &&
      number(std::string_view(location).substr(c2 + 1), column))
    return at(std::move(code), location.substr(0, c1), line, column, std::move(message));
  if (location.empty())
    return error(std::move(code), std::move(message));
  return inFile(std::move(code), location, std::move(message));
}

const char *levelName(Diag::Level level) {
  switch (level) {
  case Diag::Level::Error:
    return "error";
  case Diag::Level::Warning:
    return "warning";
  case Diag::Level::Note:
    return "note";
  }
  return "error";
}

namespace {

std::string renderOne(const Diag &d, const std::string &command, bool asNote) {
  const char *level = levelName(d.level);
  std::string s;
  if (d.located())
    s = fmt::format("{}:{}:{}: {}: {}\n", d.file, d.line, d.column, level, d.message);
  else if (!d.file.empty() && !d.path.empty())
    s = fmt::format("{}: {}: [{}] {}: {}\n", d.file, level, d.code, d.path, d.message);
  else if (!d.file.empty())
    s = fmt::format("{}: {}: {}\n", d.file, level, d.message);
  else if (asNote)
    s = fmt::format("  {}\n", d.message);
  else
    s = fmt::format("linnet{}{}: {}: {}\n", command.empty() ? "" : " ", command, level, d.message);
  s += d.excerpt;
  if (!d.excerpt.empty() && d.excerpt.back() != '\n')
    s += '\n';
  return s;
}

} // namespace

std::string renderText(const Diag &d, const std::string &command) {
  std::string s = renderOne(d, command, false);
  for (const Diag &n : d.notes)
    s += renderOne(n, command, true);
  return s;
}

DiagSink::~DiagSink() = default;

void DiagSink::report(Diag d) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (d.level == Diag::Level::Error)
    ++errors_;
  handle(std::move(d));
}

unsigned DiagSink::errorCount() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return errors_;
}

void TextDiagSink::handle(Diag d) { os_ << renderText(d, command_) << std::flush; }

void CollectingDiagSink::handle(Diag d) {
  if (d.level == Diag::Level::Note && !diags.empty()) {
    diags.back().notes.push_back(std::move(d));
    return;
  }
  diags.push_back(std::move(d));
}

} // namespace linnet::support
