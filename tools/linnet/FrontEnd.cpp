//===- FrontEnd.cpp - Options every command that reads a model shares -----===//
#include "FrontEnd.h"
#include "DiagnosticsOutput.h"

#include "linnet/Plan/Binding.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>

using namespace linnet;
using support::Diag;

std::optional<std::map<std::string, std::string>>
tool::parseDefines(const std::vector<std::string> &defines) {
  std::map<std::string, std::string> out;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      diags().report(Diag::error("usage", fmt::format("-D expects Name=value, found '{}'", d)));
      return std::nullopt;
    }
    // Last-wins would silently change what is built: a repeat is an error.
    if (!out.emplace(d.substr(0, eq), d.substr(eq + 1)).second) {
      diags().report(Diag::error("usage", fmt::format("-D {} is given twice ('{}={}' and '{}')", d.substr(0, eq),
                                                      d.substr(0, eq), out[d.substr(0, eq)], d)));
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>>
tool::parseInputFiles(const std::vector<std::string> &inputs, const std::vector<std::string> &relations) {
  std::map<std::string, std::string> files;
  auto add = [&](const std::string &name, std::string file, const char *flag) {
    if (!files.emplace(name, file).second) {
      diags().report(Diag::error(
          "usage", fmt::format("input '{}' is given twice ({} '{}' and '{}')", name, flag, files[name], file)));
      return false;
    }
    return true;
  };
  for (const std::string &in : inputs) {
    size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0) {
      diags().report(Diag::error("usage", fmt::format("--input expects NAME=FILE.npy, found '{}'", in)));
      return std::nullopt;
    }
    if (!add(in.substr(0, eq), in.substr(eq + 1), "--input"))
      return std::nullopt;
  }
  for (const std::string &rel : relations) {
    size_t eq = rel.find('='), comma = rel.find(',', eq);
    if (eq == std::string::npos || eq == 0 || comma == std::string::npos) {
      diags().report(
          Diag::error("usage", fmt::format("--relation expects NAME=ROW_PTR.npy,COL_IDX.npy, found '{}'", rel)));
      return std::nullopt;
    }
    std::string name = rel.substr(0, eq);
    if (!add(name + ".row_ptr", rel.substr(eq + 1, comma - eq - 1), "--relation") ||
        !add(name + ".col_idx", rel.substr(comma + 1), "--relation"))
      return std::nullopt;
  }
  return files;
}

std::optional<uint64_t> tool::parseUnsigned(const std::string &text, const char *flag) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || p != text.data() + text.size()) {
    diags().report(
        Diag::error("usage", fmt::format("{} expects an integer from 0 to {}, found '{}'", flag, UINT64_MAX, text)));
    return std::nullopt;
  }
  return v;
}

sema::SemaOptions tool::semaOptions(const std::vector<std::string> &includeDirs) {
  sema::SemaOptions o;
  o.includeDirs = includeDirs;
  o.stdlibDir = sema::defaultStdlibDir();
  return o;
}

bool tool::addConfigDefines(std::vector<std::string> &defines, const std::string &config, const std::string &binding,
                            std::vector<plan::ConstantExpectation> *constants) {
  if (config.empty())
    return true;
  if (binding.empty()) {
    diags().report(Diag::error("usage", fmt::format("--config {} needs --binding: the binding manifest's config "
                                                    "section says which configuration key gives each generic",
                                                    config)));
    return false;
  }
  auto read = [&](const std::string &path, nlohmann::json &out) {
    std::string text, err;
    if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, err)) {
      diags().report(Diag::error("io", fmt::format("cannot read '{}': {}", path, err)));
      return false;
    }
    out = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (out.is_discarded()) {
      diags().report(Diag::inFile("json", path, "$: not valid JSON"));
      return false;
    }
    return true;
  };
  nlohmann::json b, c;
  if (!read(binding, b))
    return false;
  if (config.ends_with(".gguf")) {
    // A GGUF file's metadata is its configuration (llama.embedding_length, ...).
    std::string err;
    std::unique_ptr<rt::SafeTensorsFile> g = rt::SafeTensorsFile::openGgufMetadata(config, err);
    if (!g) {
      diags().report(Diag::error("gguf", err));
      return false;
    }
    c = nlohmann::json::object();
    for (const auto &[k, v] : g->metadataJson())
      c[k] = nlohmann::json::parse(v);
  } else if (!read(config, c)) {
    return false;
  }
  // A generic an explicit -D gives is not read from the configuration
  // (which need not have its key).
  std::map<std::string, std::string> given;
  for (const std::string &d : defines)
    given.emplace(d.substr(0, d.find('=')), d);
  if (b.is_object() && b.contains("config") && b["config"].is_object())
    for (const auto &[name, d] : given)
      b["config"].erase(name);
  std::vector<ir::Problem> problems;
  std::vector<plan::ConstantExpectation> expected = plan::configConstants(b, c, config, problems);
  if (constants)
    *constants = expected;
  std::optional<std::map<std::string, std::string>> values;
  if (b.is_object() && b.contains("config"))
    values = plan::configDefines(b, c, problems);
  else if (!b.is_object() || !b.contains("constants"))
    values = plan::configDefines(b, c, problems); // says what is missing
  else
    values.emplace();
  for (const ir::Problem &p : problems)
    diags().report(Diag::inFile("config", p.path.rfind("config", 0) == 0 ? binding : config, p.str()));
  if (!values || !problems.empty())
    return false;
  for (const auto &[name, value] : *values)
    defines.push_back(name + "=" + value);
  return true;
}
