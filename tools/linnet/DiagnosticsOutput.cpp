//===- DiagnosticsOutput.cpp - --diagnostics=text|json|sarif --------------===//
#include "DiagnosticsOutput.h"

#include "linnet/Config.h"
#include "linnet/Support/AtomicFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <regex>

namespace linnet::tool {

namespace {

/// Appends what std::cerr receives to a string and, when the diagnostics go
/// to a file, passes it on to the real stderr too.
class CaptureBuf : public std::streambuf {
public:
  CaptureBuf(std::string &into, std::streambuf *passOn) : into_(into), passOn_(passOn) {}

protected:
  int_type overflow(int_type ch) override {
    if (traits_type::eq_int_type(ch, traits_type::eof()))
      return traits_type::not_eof(ch);
    char c = traits_type::to_char_type(ch);
    into_.push_back(c);
    if (passOn_)
      passOn_->sputc(c);
    return ch;
  }
  std::streamsize xsputn(const char *s, std::streamsize n) override {
    into_.append(s, size_t(n));
    if (passOn_)
      passOn_->sputn(s, n);
    return n;
  }
  int sync() override { return passOn_ ? passOn_->pubsync() : 0; }

private:
  std::string &into_;
  std::streambuf *passOn_;
};

nlohmann::ordered_json orNull(const std::string &s) { return s.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(s); }
nlohmann::ordered_json orNull(uint32_t n) { return n == 0 ? nlohmann::ordered_json() : nlohmann::ordered_json(n); }

/// The code of a tool message without one: reading and writing files is
/// "io", a malformed flag value "usage", anything else the command's name.
std::string toolCode(const std::string &message, const std::string &command) {
  if (message.starts_with("cannot read") || message.starts_with("cannot write") ||
      message.starts_with("cannot open") || message.starts_with("cannot create"))
    return "io";
  static const std::regex usage(R"(^(-D|--[a-z-]+) (expects|is given twice)|needs -o|^-D )");
  if (std::regex_search(message, usage))
    return "usage";
  return command.empty() ? "linnet" : command;
}

} // namespace

nlohmann::ordered_json toJson(const DiagRecord &r) {
  nlohmann::ordered_json j = {{"file", orNull(r.file)},   {"line", orNull(r.line)}, {"column", orNull(r.column)},
                      {"severity", r.severity},   {"code", r.code},         {"message", r.message}};
  if (!r.path.empty())
    j["path"] = r.path;
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const DiagRecord &n : r.notes)
    notes.push_back({{"file", orNull(n.file)},
                     {"line", orNull(n.line)},
                     {"column", orNull(n.column)},
                     {"message", n.message}});
  j["notes"] = std::move(notes);
  return j;
}

nlohmann::ordered_json toSarif(const std::vector<DiagRecord> &records, const std::string &toolVersion) {
  auto location = [](const DiagRecord &r, bool withMessage) {
    nlohmann::ordered_json loc = nlohmann::ordered_json::object();
    if (!r.file.empty()) {
      nlohmann::ordered_json phys = {{"artifactLocation", {{"uri", r.file}}}};
      if (r.line) {
        phys["region"] = {{"startLine", r.line}};
        if (r.column)
          phys["region"]["startColumn"] = r.column;
      }
      loc["physicalLocation"] = std::move(phys);
    }
    if (!r.path.empty())
      loc["logicalLocations"] = nlohmann::ordered_json::array({{{"fullyQualifiedName", r.path}, {"kind", "element"}}});
    if (withMessage)
      loc["message"] = {{"text", r.message}};
    return loc;
  };
  nlohmann::ordered_json rules = nlohmann::ordered_json::array(), results = nlohmann::ordered_json::array();
  std::vector<std::string> ruleIds;
  for (const DiagRecord &r : records) {
    auto it = std::find(ruleIds.begin(), ruleIds.end(), r.code);
    size_t index = size_t(it - ruleIds.begin());
    if (it == ruleIds.end()) {
      ruleIds.push_back(r.code);
      rules.push_back({{"id", r.code}});
    }
    nlohmann::ordered_json res = {{"ruleId", r.code},
                          {"ruleIndex", index},
                          {"level", r.severity == "warning" ? "warning" : r.severity == "note" ? "note" : "error"},
                          {"message", {{"text", r.message}}}};
    nlohmann::ordered_json loc = location(r, false);
    if (!loc.empty())
      res["locations"] = nlohmann::ordered_json::array({loc});
    if (!r.notes.empty()) {
      nlohmann::ordered_json related = nlohmann::ordered_json::array();
      for (size_t i = 0; i < r.notes.size(); ++i) {
        nlohmann::ordered_json l = location(r.notes[i], true);
        l["id"] = i;
        related.push_back(std::move(l));
      }
      res["relatedLocations"] = std::move(related);
    }
    results.push_back(std::move(res));
  }
  return {{"$schema", "https://json.schemastore.org/sarif-2.1.0.json"},
          {"version", "2.1.0"},
          {"runs",
           nlohmann::ordered_json::array({{{"tool",
                                    {{"driver",
                                      {{"name", "linnet"},
                                       {"version", toolVersion},
                                       {"informationUri", "https://github.com/linnet-lang/linnet"},
                                       {"rules", rules}}}}},
                                   {"results", results}}})}};
}

std::vector<DiagRecord> parseDiagnosticText(const std::string &text, const std::string &command) {
  // file:line:col: severity: message
  static const std::regex located(R"(^(.+?):([0-9]+):([0-9]+): (error|warning|note): (.*)$)");
  // file: error: [code] /json/path: message (planning reports)
  static const std::regex planning(R"(^(.+?): (error|warning|note): \[([A-Za-z0-9_.-]+)\] (/[^ ]*): (.*)$)");
  // linnet[ command]: severity: message
  static const std::regex tool(R"(^linnet(?: [a-z-]+)?: (error|warning|note|internal error): (.*)$)");
  // linnet: message (an exception's text)
  static const std::regex toolBare(R"(^linnet(?: [a-z-]+)?: (.*)$)");
  // file: severity: message
  static const std::regex fileLevel(R"(^(.+?): (error|warning|note): (.*)$)");
  // file: N errors (the summary of check)
  static const std::regex summary(R"(^.+: [0-9]+ errors?$)");
  static const std::regex caret(R"(^\s*\^\s*$)");

  std::vector<DiagRecord> out;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string::npos)
      eol = text.size();
    std::string line = text.substr(pos, eol - pos);
    pos = eol + 1;
    if (!line.empty() && line.back() == '\r')
      line.pop_back();
    if (line.find_first_not_of(" \t") == std::string::npos || std::regex_match(line, caret) ||
        std::regex_match(line, summary))
      continue;
    std::smatch m;
    DiagRecord r;
    if (line[0] == ' ' || line[0] == '\t') {
      // Indented: a detail of the diagnostic above (a source excerpt is
      // followed by a caret line, and is left out with it).
      if (pos < text.size()) {
        size_t next = text.find('\n', pos);
        std::string after = text.substr(pos, next == std::string::npos ? std::string::npos : next - pos);
        if (std::regex_match(after, caret)) {
          pos = next == std::string::npos ? text.size() : next + 1;
          continue;
        }
      }
      std::string detail = line.substr(line.find_first_not_of(" \t"));
      if (!out.empty()) {
        DiagRecord n;
        n.severity = "note";
        n.message = detail;
        if (std::regex_match(detail, m, located)) {
          n.file = m[1];
          n.line = uint32_t(std::stoul(m[2]));
          n.column = uint32_t(std::stoul(m[3]));
          n.message = m[5];
        }
        out.back().notes.push_back(std::move(n));
        continue;
      }
      line = detail;
    }
    if (std::regex_match(line, m, tool)) {
      r.severity = m[1] == "internal error" ? "error" : std::string(m[1]);
      r.message = m[2];
      r.code = m[1] == "internal error" ? "internal" : toolCode(r.message, command);
    } else if (std::regex_match(line, m, located)) {
      r.file = m[1];
      r.line = uint32_t(std::stoul(m[2]));
      r.column = uint32_t(std::stoul(m[3]));
      r.severity = m[4];
      r.message = m[5];
      r.code = command.empty() ? "linnet" : command;
    } else if (std::regex_match(line, m, planning)) {
      r.file = m[1];
      r.severity = m[2];
      r.code = m[3];
      r.path = m[4] == "/" ? std::string() : std::string(m[4]);
      r.message = m[5];
    } else if (std::regex_match(line, m, fileLevel)) {
      r.file = m[1];
      r.severity = m[2];
      r.message = m[3];
      r.code = toolCode(r.message, command);
    } else if (std::regex_match(line, m, toolBare)) {
      r.severity = "error";
      r.message = m[1];
      r.code = command.empty() ? "linnet" : command;
    } else if (!out.empty() && out.back().severity != "note") {
      // An unindented continuation (a message printed over several lines).
      DiagRecord n;
      n.severity = "note";
      n.message = line;
      out.back().notes.push_back(std::move(n));
      continue;
    } else {
      r.severity = "note";
      r.message = line;
      r.code = command.empty() ? "linnet" : command;
    }
    if (r.severity == "note" && !out.empty() && r.file.empty() == false) {
      // A located note belongs to the diagnostic before it.
      out.back().notes.push_back(std::move(r));
      continue;
    }
    out.push_back(std::move(r));
  }
  return out;
}

DiagnosticsOutput &diagnosticsOutput() {
  static DiagnosticsOutput d;
  return d;
}

void DiagnosticsOutput::addOptions(CLI::App *cmd) {
  cmd->add_option("--diagnostics", formatName_,
                  "How to report errors: text (default), json (one JSON object per line), sarif (SARIF 2.1.0)")
      ->check(CLI::IsMember({"text", "json", "sarif"}));
  cmd->add_option("--diagnostics-file", file_,
                  "Write the json/sarif diagnostics to FILE (stderr keeps the text; default format json)");
}

DiagnosticsOutput::Format DiagnosticsOutput::format() const {
  if (formatName_ == "sarif")
    return Format::Sarif;
  if (formatName_ == "json" || !file_.empty())
    return Format::Json;
  return Format::Text;
}

void DiagnosticsOutput::begin(const std::string &command) {
  command_ = command;
  if (format() == Format::Text)
    return;
  active_ = true;
  savedCerr_ = std::cerr.rdbuf();
  capture_ = std::make_unique<CaptureBuf>(captured_, file_.empty() ? nullptr : savedCerr_);
  std::cerr.rdbuf(capture_.get());
  DiagnosticEngine::defaultConsumer() = this;
}

void DiagnosticsOutput::flushCaptured() {
  size_t end = captured_.rfind('\n');
  if (end == std::string::npos || end + 1 <= parsedUpTo_)
    return;
  for (DiagRecord &r : parseDiagnosticText(captured_.substr(parsedUpTo_, end + 1 - parsedUpTo_), command_))
    records_.push_back(std::move(r));
  parsedUpTo_ = end + 1;
}

void DiagnosticsOutput::handle(const DiagnosticEngine &engine, const Diagnostic &d) {
  flushCaptured();
  const SourceManager &sm = engine.sourceManager();
  if (!file_.empty() && savedCerr_) {
    std::string text = engine.render(d);
    savedCerr_->sputn(text.data(), std::streamsize(text.size()));
  }
  DiagRecord r;
  r.severity = severityName(d.severity);
  r.code = d.code;
  r.message = d.message;
  if (d.loc.isValid()) {
    LineCol lc = sm.lineCol(d.loc);
    r.file = sm.name(d.loc.buffer);
    r.line = lc.line;
    r.column = lc.col;
  }
  if (d.severity == Severity::Note && !records_.empty()) {
    records_.back().notes.push_back(std::move(r));
    return;
  }
  records_.push_back(std::move(r));
}

int DiagnosticsOutput::finish(int rc) {
  if (!active_)
    return rc;
  active_ = false;
  DiagnosticEngine::defaultConsumer() = nullptr;
  std::cerr.flush();
  std::cerr.rdbuf(savedCerr_);
  captured_ += captured_.empty() || captured_.back() == '\n' ? "" : "\n";
  flushCaptured();
  capture_.reset();
  std::string text;
  if (format() == Format::Sarif) {
    text = toSarif(records_, LINNET_VERSION).dump(2) + "\n";
  } else {
    for (const DiagRecord &r : records_)
      text += toJson(r).dump() + "\n";
  }
  if (file_.empty()) {
    std::cerr << text;
    return rc;
  }
  std::string err;
  if (!support::writeFileAtomic(file_, text, err)) {
    std::cerr << fmt::format("linnet {}: error: cannot write the diagnostics to '{}': {}\n", command_, file_, err);
    return rc ? rc : 1;
  }
  return rc;
}

} // namespace linnet::tool
