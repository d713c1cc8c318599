//===- InspectCommand.cpp - `linnet inspect` ------------------------------===//
//
// Lists the tensors of a weights or input file (.safetensors, .npy) after the
// same validation the runtime applies, so a damaged file is diagnosed the
// same way here as at load time.
//
//===----------------------------------------------------------------------===//
#include "InspectCommand.h"

#include "linnet/Runtime/TensorFiles.h"

#include <fmt/format.h>

#include <iostream>

using namespace linnet;

namespace {
std::vector<std::string> gFiles;

void printTensor(const std::string &name, const rt::TensorView &t) {
  std::cout << fmt::format("  {}: {}[{}] ({} bytes)\n", name, rt::dtypeName(t.dtype),
                           fmt::join(t.shape, ", "), t.data.size());
}
} // namespace

CLI::App *tool::addInspectCommand(CLI::App &app) {
  CLI::App *cmd = app.add_subcommand(
      "inspect", "List the tensors of weights (.safetensors, a shard index .json, .gguf) and .npy files "
                 "(validating them)");
  cmd->add_option("files", gFiles, "Tensor files")->required();
  return cmd;
}

int tool::runInspect() {
  bool ok = true;
  for (const std::string &file : gFiles) {
    std::string error;
    bool npy = file.size() >= 4 && file.compare(file.size() - 4, 4, ".npy") == 0;
    if (npy) {
      std::optional<rt::OwnedTensor> t = rt::readNpy(file, error);
      if (!t) {
        std::cerr << "linnet: error: " << error << "\n";
        ok = false;
        continue;
      }
      std::cout << file << ": npy\n";
      printTensor("array", t->view());
      continue;
    }
    std::unique_ptr<rt::SafeTensorsFile> f = rt::SafeTensorsFile::open(file, error);
    if (!f) {
      std::cerr << "linnet: error: " << error << "\n";
      ok = false;
      continue;
    }
    auto endsWith = [&](const char *ext) { return file.ends_with(ext); };
    const char *format = endsWith(".gguf") ? "gguf" : endsWith(".json") ? "sharded safetensors" : "safetensors";
    std::cout << fmt::format("{}: {}, {} tensor{}\n", file, format, f->tensors().size(),
                             f->tensors().size() == 1 ? "" : "s");
    for (auto &[k, v] : f->metadata())
      std::cout << fmt::format("  metadata {} = {}\n", k, v);
    for (auto &[name, t] : f->tensors()) {
      printTensor(name, t);
      if (auto q = f->storedAs().find(name); q != f->storedAs().end())
        std::cout << fmt::format("    stored as {}, dequantized to f32 when read\n", q->second);
    }
  }
  return ok ? 0 : 1;
}
