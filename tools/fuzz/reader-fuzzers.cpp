//===- reader-fuzzers.cpp - libFuzzer targets for linnet's file readers ---===//
//
// One source, one target per reader, chosen by LINNET_FUZZ_TARGET at compile
// time. Every input must be accepted or refused with an error message:
// never a crash, a hang, an uncaught exception or a sanitizer report.
//
//   plan      plan::readPlanText (strict JSON, Core IR, verifier)
//   safetensors  rt::SafeTensorsFile::open
//   shardindex  rt::SafeTensorsFile::open of a shard index
//             (model.safetensors.index.json) beside two valid shards
//   gguf      rt::SafeTensorsFile::open of a .gguf file (as safetensors)
//   npy       rt::readNpy
//   binding   rt::BindingMap::parse and plan::checkBinding against a manifest
//   artifact  rt::parseArtifactManifest and rt::parseArtifactInfo (an
//             artifact's manifest.json and runtime.json, split at the first
//             NUL byte; without one the input is given to both), then every
//             signature dim evaluated with the entry's generics bound
//
//===----------------------------------------------------------------------===//
#include "linnet/Plan/Binding.h"
#include "linnet/Plan/PlanReader.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Input.h"
#include "../../lib/Runtime/DimExpr.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <unistd.h>

using namespace linnet;

namespace {
/// A file or directory under /tmp for the run, removed when the fuzzer
/// exits (libFuzzer returns through exit(): static destructors run).
struct Scratch {
  std::string path;
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

/// The tensor readers take a path: the input goes to one private file,
/// named with `suffix` (the readers choose the format by it).
[[maybe_unused]] std::string writeTemp(const uint8_t *data, size_t size, const std::string &suffix = "") {
  static const Scratch file{[&] {
    std::string tmpl = "/tmp/linnet-fuzz-XXXXXX" + suffix;
    int fd = ::mkstemps(tmpl.data(), int(suffix.size()));
    if (fd < 0)
      std::abort();
    ::close(fd);
    return tmpl;
  }()};
  const std::string &path = file.path;
  FILE *f = std::fopen(path.c_str(), "wb");
  if (!f)
    std::abort();
  if (size)
    std::fwrite(data, 1, size, f);
  std::fclose(f);
  return path;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
#if LINNET_FUZZ_TARGET_plan
  std::vector<ir::Problem> problems;
  std::optional<plan::Plan> p = plan::readPlanText(text, problems);
  if (!p && problems.empty())
    std::abort(); // a refusal always says why
  if (p)
    (void)input::dumpJson(plan::writePlan(*p));
#elif LINNET_FUZZ_TARGET_safetensors || LINNET_FUZZ_TARGET_gguf
  std::string error;
#if LINNET_FUZZ_TARGET_gguf
  const char *suffix = ".gguf"; // the reader chooses GGUF by the name
#else
  const char *suffix = "";
#endif
  std::unique_ptr<rt::SafeTensorsFile> f = rt::SafeTensorsFile::open(writeTemp(data, size, suffix), error);
  if (f)
    for (auto &[name, t] : f->tensors()) // every view lies inside the file
      for (std::byte b : t.data)
        (void)b;
  else if (error.empty())
    std::abort();
#elif LINNET_FUZZ_TARGET_shardindex
  // Two shards, written once, beside the index the input becomes.
  static const Scratch scratch{[] {
    char tmpl[] = "/tmp/linnet-fuzz-index-XXXXXX";
    if (!::mkdtemp(tmpl))
      std::abort();
    static const float a[4] = {1, 2, 3, 4};
    static const int64_t b[2] = {5, 6};
    std::string error;
    rt::TensorView va{rt::DType::F32, {2, 2}, {reinterpret_cast<const std::byte *>(a), sizeof a}};
    rt::TensorView vb{rt::DType::I64, {2}, {reinterpret_cast<const std::byte *>(b), sizeof b}};
    if (!rt::writeSafeTensors(std::string(tmpl) + "/s1.safetensors", {{"a.weight", va}}, error) ||
        !rt::writeSafeTensors(std::string(tmpl) + "/s2.safetensors", {{"b.index", vb}}, error))
      std::abort();
    return std::string(tmpl);
  }()};
  const std::string &dir = scratch.path;
  {
    FILE *f = std::fopen((dir + "/model.safetensors.index.json").c_str(), "wb");
    if (!f)
      std::abort();
    if (size)
      std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  std::string error;
  std::unique_ptr<rt::SafeTensorsFile> f = rt::SafeTensorsFile::open(dir + "/model.safetensors.index.json", error);
  if (f)
    for (auto &[name, t] : f->tensors())
      for (std::byte b : t.data)
        (void)b;
  else if (error.empty())
    std::abort();
#elif LINNET_FUZZ_TARGET_npy
  std::string error;
  std::optional<rt::OwnedTensor> t = rt::readNpy(writeTemp(data, size), error);
  if (!t && error.empty())
    std::abort();
#elif LINNET_FUZZ_TARGET_binding
  std::string error;
  std::unique_ptr<rt::BindingMap> m = rt::BindingMap::parse(text, "fuzz.json", error);
  if (m) {
    (void)m->externalName("cells.0.proj.weight");
    (void)m->maps("head.weight");
  } else if (error.empty()) {
    std::abort();
  }
  static const std::vector<plan::ManifestEntry> manifest = {
      {"cells[*].proj.weight", "param", "f32", nlohmann::json::array({8, 4}), nlohmann::json::array({3}), false},
      {"cells[*].h", "state", "f32", nlohmann::json::array({5}), nlohmann::json::array({3}), false},
      {"head.weight", "param", "bf16", nlohmann::json::array({10, 4}), nlohmann::json::array(), false},
      {"head.bias", "param", "bf16", nlohmann::json::array({10}), nlohmann::json::array(), true},
  };
  std::string where, jerr;
  if (std::optional<nlohmann::json> doc = input::parseJson(text, where, jerr)) {
    std::vector<ir::Problem> problems;
    (void)plan::checkBinding(*doc, manifest, problems);
  }
#elif LINNET_FUZZ_TARGET_artifact
  size_t nul = text.find('\0');
  std::string manifestText = nul == std::string::npos ? text : text.substr(0, nul);
  std::string runtimeText = nul == std::string::npos ? text : text.substr(nul + 1);
  std::string error;
  rt::ArtifactManifest m;
  if (rt::parseArtifactManifest(manifestText, m, error)) {
    for (const rt::ArtifactFileEntry &f : m.files)
      if (!rt::checkArtifactPath(f.path).empty())
        std::abort(); // the reader let a path out of the directory
    if (!m.find(m.library))
      std::abort();
  } else if (error.empty()) {
    std::abort();
  }
  error.clear();
  rt::ArtifactInfo info;
  if (rt::parseArtifactInfo(runtimeText, info, error)) {
    // Accepted signatures evaluate without UB (UBSan watches) for bound
    // generics, small and huge.
    for (const rt::EntrySig &e : info.entries) {
      if (e.symbol != "linnet_entry_" + e.name)
        std::abort(); // only the ABI's own symbols are ever looked up
      for (const auto *list : {&e.inputs, &e.results})
        for (const rt::TensorSig &s : *list)
          for (const rt::SigDim &d : s.shape)
            if (const std::string *text = std::get_if<std::string>(&d))
              for (int64_t v : {int64_t(3), int64_t(1) << 62})
                (void)rt::dimexpr::eval(*text, [&](std::string_view) -> std::optional<int64_t> { return v; });
    }
  } else if (error.empty()) {
    std::abort();
  }
#endif
  return 0;
}
