//===- ArtifactCache.cpp - Build .ln models on demand for run/generate ----===//
//
// The cache key is a SHA-256 over everything the build reads: the compiler
// (version and commit), the model file's path and text, the text of every
// .ln file the module search could reach (the model's folder, -I folders,
// the standard library), the options, and the names of the tensors in the
// weights (they decide which optional tensors are compiled in). A hit is a
// directory that finished building: builds go to a staging directory that
// is renamed into place (linnet/Support/AtomicFile.h).
//
//===----------------------------------------------------------------------===//
#include "ArtifactCache.h"

#include "BuildCommand.h"
#include "BuildCpu.h"
#include "linnet/Config.h"
#include "linnet/Planning/Common.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Sema/Sema.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;
using namespace linnet;

namespace {
std::string readAll(const fs::path &p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// Every .ln file directly in `dir` or below it (sorted), with its text.
void addSources(const fs::path &dir, std::string &key) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    return;
  std::vector<fs::path> files;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".ln")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  for (const fs::path &f : files)
    key += fmt::format("\nsource {}\n{}", f.string(), readAll(f));
}

fs::path cacheRoot() {
  if (const char *x = std::getenv("LINNET_CACHE_DIR"); x && *x)
    return x;
  if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    return fs::path(x) / "linnet";
  if (const char *h = std::getenv("HOME"); h && *h)
    return fs::path(h) / ".cache" / "linnet";
  return fs::temp_directory_path() / "linnet-cache";
}
} // namespace

void tool::addSourceOptions(CLI::App *cmd, SourceOptions &opts) {
  cmd->add_option("--root", opts.root, "For a .ln model: the root block");
  cmd->add_option("-D", opts.defines, "For a .ln model: bind a root generic, Name=value")
      ->allow_extra_args(false);
  cmd->add_option("-I", opts.includeDirs, "For a .ln model: a module search root")
      ->allow_extra_args(false);
  cmd->add_option("--target", opts.target, "For a .ln model: the target it is built for (cpu, cuda)")
      ->default_val("cpu");
  cmd->add_flag("--emulate", opts.emulate,
                "For a .ln model built for cuda: its GPU kernels run on the CPU (tests without a GPU)");
}

std::optional<std::string> tool::resolveArtifact(const std::string &model, const SourceOptions &opts,
                                                 const std::string &weights,
                                                 const std::string &binding, const char *command) {
  std::error_code ec;
  if (fs::is_directory(model, ec))
    return model;
  if (fs::path(model).extension() != ".ln" || !fs::is_regular_file(model, ec)) {
    std::cerr << fmt::format("linnet {}: error: '{}' is neither an artifact directory nor a .ln "
                             "model\n",
                             command, model);
    return std::nullopt;
  }
  fs::path source = fs::absolute(model);
  std::string key = fmt::format("linnet {} {}\nmodel {}\n{}", LINNET_VERSION, LINNET_GIT_COMMIT,
                                source.string(), readAll(source));
  addSources(source.parent_path(), key);
  for (const std::string &d : opts.includeDirs)
    addSources(d, key);
  addSources(sema::defaultStdlibDir("/proc/self/exe"), key);
  key += fmt::format("\nroot {}\ntarget {}{}\n", opts.root, opts.target, opts.emulate ? " emulated" : "");
  for (const std::string &d : opts.defines)
    key += "define " + d + "\n";
  if (!binding.empty())
    key += "binding\n" + readAll(binding);
  if (!weights.empty()) {
    std::string err;
    auto w = rt::SafeTensorsFile::open(weights, err);
    if (!w) {
      std::cerr << fmt::format("linnet {}: error: {}\n", command, err);
      return std::nullopt;
    }
    for (auto &[name, t] : w->tensors())
      key += "tensor " + name + "\n";
  }
  fs::path dir = cacheRoot() / planning::sha256Hex(key).substr(0, 32);
  if (fs::exists(dir / "runtime.json", ec) && fs::exists(dir / "manifest.json", ec))
    return dir.string();

  fs::create_directories(cacheRoot(), ec);
  BuildCpuOptions b;
  b.file = model;
  b.root = opts.root;
  b.defines = opts.defines;
  b.includeDirs = opts.includeDirs;
  b.weights = weights;
  b.binding = binding;
  b.emulate = opts.emulate;
  // The build stages beside `dir` and renames into place: a concurrent
  // build of the same key replaces it with an identical whole artifact.
  b.output = dir.string();
  std::cerr << fmt::format("linnet {}: building {} into {}\n", command, model, dir.string());
  if (buildArtifact(b, opts.target) != 0)
    return std::nullopt;
  return dir.string();
}
