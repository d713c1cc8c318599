//===- FrontEnd.cpp - Options every command that reads a model shares -----===//
#include "FrontEnd.h"

#include <fmt/format.h>

#include <charconv>
#include <cstdint>
#include <iostream>

using namespace linnet;

std::optional<std::map<std::string, std::string>>
tool::parseDefines(const std::vector<std::string> &defines, const char *command) {
  std::map<std::string, std::string> out;
  for (const std::string &d : defines) {
    size_t eq = d.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << fmt::format("linnet {}: error: -D expects Name=value, found '{}'\n", command, d);
      return std::nullopt;
    }
    // Last-wins would silently change what is built: a repeat is an error.
    if (!out.emplace(d.substr(0, eq), d.substr(eq + 1)).second) {
      std::cerr << fmt::format("linnet {}: error: -D {} is given twice ('{}={}' and '{}')\n", command,
                               d.substr(0, eq), d.substr(0, eq), out[d.substr(0, eq)], d);
      return std::nullopt;
    }
  }
  return out;
}

std::optional<std::map<std::string, std::string>>
tool::parseInputFiles(const std::vector<std::string> &inputs, const std::vector<std::string> &relations,
                      const char *command) {
  std::map<std::string, std::string> files;
  auto add = [&](const std::string &name, std::string file, const char *flag) {
    if (!files.emplace(name, file).second) {
      std::cerr << fmt::format("linnet {}: error: input '{}' is given twice ({} '{}' and '{}')\n", command,
                               name, flag, files[name], file);
      return false;
    }
    return true;
  };
  for (const std::string &in : inputs) {
    size_t eq = in.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << fmt::format("linnet {}: error: --input expects NAME=FILE.npy, found '{}'\n", command, in);
      return std::nullopt;
    }
    if (!add(in.substr(0, eq), in.substr(eq + 1), "--input"))
      return std::nullopt;
  }
  for (const std::string &rel : relations) {
    size_t eq = rel.find('='), comma = rel.find(',', eq);
    if (eq == std::string::npos || eq == 0 || comma == std::string::npos) {
      std::cerr << fmt::format("linnet {}: error: --relation expects NAME=ROW_PTR.npy,COL_IDX.npy, found '{}'\n",
                               command, rel);
      return std::nullopt;
    }
    std::string name = rel.substr(0, eq);
    if (!add(name + ".row_ptr", rel.substr(eq + 1, comma - eq - 1), "--relation") ||
        !add(name + ".col_idx", rel.substr(comma + 1), "--relation"))
      return std::nullopt;
  }
  return files;
}

std::optional<uint64_t> tool::parseUnsigned(const std::string &text, const char *flag, const char *command) {
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || text[0] == '-' || text[0] == '+' || ec != std::errc() || p != text.data() + text.size()) {
    std::cerr << fmt::format("linnet {}: error: {} expects an integer from 0 to {}, found '{}'\n", command, flag,
                             UINT64_MAX, text);
    return std::nullopt;
  }
  return v;
}

sema::SemaOptions tool::semaOptions(const std::vector<std::string> &includeDirs) {
  sema::SemaOptions o;
  o.includeDirs = includeDirs;
  o.stdlibDir = sema::defaultStdlibDir("/proc/self/exe");
  return o;
}
