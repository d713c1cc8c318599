//===- DiagnosticsOutput.cpp - --diagnostics=text|json|sarif --------------===//
#include "DiagnosticsOutput.h"

#include "linnet/Config.h"
#include "linnet/Support/AtomicFile.h"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

namespace linnet::tool {

using support::Diag;

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

/// The JSON pointer a record names; a document's root is left out.
std::string pointerOf(const Diag &d) { return d.path == "/" ? std::string() : d.path; }

} // namespace

nlohmann::ordered_json toJson(const Diag &r) {
  nlohmann::ordered_json j = {{"file", orNull(r.file)},           {"line", orNull(r.line)},
                              {"column", orNull(r.column)},       {"severity", support::levelName(r.level)},
                              {"code", r.code},                   {"message", r.message}};
  if (!pointerOf(r).empty())
    j["path"] = pointerOf(r);
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  for (const Diag &n : r.notes)
    notes.push_back({{"file", orNull(n.file)},
                     {"line", orNull(n.line)},
                     {"column", orNull(n.column)},
                     {"message", n.message}});
  j["notes"] = std::move(notes);
  return j;
}

nlohmann::ordered_json toSarif(const std::vector<Diag> &records, const std::string &toolVersion) {
  auto location = [](const Diag &r, bool withMessage) {
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
    if (!pointerOf(r).empty())
      loc["logicalLocations"] =
          nlohmann::ordered_json::array({{{"fullyQualifiedName", pointerOf(r)}, {"kind", "element"}}});
    if (withMessage)
      loc["message"] = {{"text", r.message}};
    return loc;
  };
  nlohmann::ordered_json rules = nlohmann::ordered_json::array(), results = nlohmann::ordered_json::array();
  std::vector<std::string> ruleIds;
  for (const Diag &r : records) {
    auto it = std::find(ruleIds.begin(), ruleIds.end(), r.code);
    size_t index = size_t(it - ruleIds.begin());
    if (it == ruleIds.end()) {
      ruleIds.push_back(r.code);
      rules.push_back({{"id", r.code}});
    }
    nlohmann::ordered_json res = {{"ruleId", r.code},
                          {"ruleIndex", index},
                          {"level", support::levelName(r.level)},
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
  // What a command still writes to std::cerr itself (it should report
  // through this sink) is kept apart, so that stderr holds only the
  // structured form; each such line becomes a record of code
  // "unstructured", word for word.
  savedCerr_ = std::cerr.rdbuf();
  capture_ = std::make_unique<CaptureBuf>(captured_, file_.empty() ? nullptr : savedCerr_);
  std::cerr.rdbuf(capture_.get());
}

void DiagnosticsOutput::flushCaptured() {
  size_t end = captured_.rfind('\n');
  if (end == std::string::npos || end + 1 <= parsedUpTo_)
    return;
  std::string_view text(captured_.data() + parsedUpTo_, end + 1 - parsedUpTo_);
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol + 1);
    if (line.find_first_not_of(" \t\r") != std::string_view::npos)
      records_.push_back(Diag::error("unstructured", std::string(line)));
  }
  parsedUpTo_ = end + 1;
}

void DiagnosticsOutput::handle(Diag d) {
  if (!active_) {
    std::cerr << support::renderText(d, command_) << std::flush;
    return;
  }
  flushCaptured();
  if (!file_.empty() && savedCerr_) {
    std::string text = support::renderText(d, command_);
    savedCerr_->sputn(text.data(), std::streamsize(text.size()));
  }
  d.excerpt.clear();
  for (Diag &n : d.notes)
    n.excerpt.clear();
  if (d.level == Diag::Level::Note && !records_.empty()) {
    records_.back().notes.push_back(std::move(d));
    return;
  }
  records_.push_back(std::move(d));
}

int DiagnosticsOutput::finish(int rc) {
  if (!active_)
    return rc;
  active_ = false;
  std::cerr.flush();
  std::cerr.rdbuf(savedCerr_);
  captured_ += captured_.empty() || captured_.back() == '\n' ? "" : "\n";
  flushCaptured();
  capture_.reset();
  std::string text;
  if (format() == Format::Sarif) {
    text = toSarif(records_, LINNET_VERSION).dump(2) + "\n";
  } else {
    for (const Diag &r : records_)
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

support::DiagSink &diags() { return diagnosticsOutput(); }

} // namespace linnet::tool
