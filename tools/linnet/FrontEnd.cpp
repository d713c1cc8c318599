//===- FrontEnd.cpp - Options every command that reads a model shares -----===//
#include "FrontEnd.h"

#include <fmt/format.h>

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
    out[d.substr(0, eq)] = d.substr(eq + 1);
  }
  return out;
}

sema::SemaOptions tool::semaOptions(const std::vector<std::string> &includeDirs) {
  sema::SemaOptions o;
  o.includeDirs = includeDirs;
  o.stdlibDir = sema::defaultStdlibDir("/proc/self/exe");
  return o;
}
