//===- InitWeightsCommand.cpp - `linnet init-weights` ---------------------===//
//
// Writes random weights for every required param and buffer of a model's
// manifest, under their canonical paths (arrays of sub blocks expanded:
// `layers[*].w` becomes `layers.0.w`, `layers.1.w`, ...). State members are
// never in weight files. Values are deterministic in (seed, path), so adding
// or removing one tensor does not change the others:
//   rank >= 2: uniform(-1/sqrt(fan_in), 1/sqrt(fan_in)), fan_in = last dim
//              (the range torch.nn.Linear uses);
//   rank <= 1: 1 + uniform(-0.1, 0.1) (norm scales stay near one);
//   integer dtypes: zeros.
//
//===----------------------------------------------------------------------===//
#include "DiagnosticsOutput.h"
#include "linnet/Support/Input.h"
#include "FrontEnd.h"
#include "InitWeightsCommand.h"

#include "linnet/Plan/FrontEnd.h"
#include "linnet/Runtime/Quantize.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Half.h"
#include "linnet/Sema/Instantiate.h"
#include "linnet/Sema/Sema.h"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <iostream>

using namespace linnet;

namespace {
struct Options {
  std::string file, root, output;
  std::vector<std::string> defines, includeDirs;
  std::string seedText = "0";
  uint64_t seed = 0;
  bool withOptional = false;
} gOpts;

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

uint64_t hashPath(const std::string &s, uint64_t seed) {
  uint64_t h = 1469598103934665603ULL ^ seed; // FNV-1a, seeded
  for (unsigned char c : s)
    h = (h ^ c) * 1099511628211ULL;
  return h;
}

/// Expands `[*]` in `path` with every index allowed by `repeat`, in order.
void expandPath(const std::string &path, const std::vector<int64_t> &repeat, size_t k,
                std::vector<std::string> &out) {
  size_t star = path.find("[*]");
  if (star == std::string::npos || k >= repeat.size()) {
    out.push_back(path);
    return;
  }
  for (int64_t i = 0; i < repeat[k]; ++i)
    expandPath(path.substr(0, star) + "." + std::to_string(i) + path.substr(star + 3), repeat,
               k + 1, out);
}

/// Default bound on what init-weights writes; LINNET_MAX_WEIGHTS_BYTES overrides.
constexpr uint64_t kDefaultMaxWeightsBytes = 16ull << 30;

rt::OwnedTensor randomTensor(rt::DType dtype, const std::vector<int64_t> &shape,
                             uint64_t stream) {
  rt::OwnedTensor t;
  t.dtype = dtype;
  t.shape = shape;
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  t.data.assign(static_cast<size_t>(n) * rt::dtypeSize(dtype), std::byte{0});
  bool isFloat = dtype == rt::DType::F16 || dtype == rt::DType::BF16 ||
                 dtype == rt::DType::F32 || dtype == rt::DType::F64;
  if (!isFloat)
    return t;
  double bound = shape.size() >= 2 ? 1.0 / std::sqrt(static_cast<double>(shape.back())) : 0.1;
  double center = shape.size() >= 2 ? 0.0 : 1.0;
  for (int64_t i = 0; i < n; ++i) {
    double u = static_cast<double>(splitmix64(stream) >> 11) * 0x1.0p-53; // [0, 1)
    double v = center + (2 * u - 1) * bound;
    std::byte *p = t.data.data() + static_cast<size_t>(i) * rt::dtypeSize(dtype);
    float f = static_cast<float>(v);
    uint16_t h;
    switch (dtype) {
    case rt::DType::F64: std::memcpy(p, &v, 8); break;
    case rt::DType::F32: std::memcpy(p, &f, 4); break;
    case rt::DType::BF16: h = support::f32ToBF16(f); std::memcpy(p, &h, 2); break;
    case rt::DType::F16: h = support::f32ToF16(f); std::memcpy(p, &h, 2); break;
    default: break;
    }
  }
  return t;
}
} // namespace

CLI::App *tool::addInitWeightsCommand(CLI::App &app) {
  CLI::App *c = app.add_subcommand(
      "init-weights", "Write random weights for every required param and buffer of a model");
  c->add_option("file", gOpts.file, "Model source (.ln)")->required();
  c->add_option("--root", gOpts.root, "Root block (default: the module's only pub block)");
  c->add_option("-D", gOpts.defines, "Bind a root generic: -D Name=value")->allow_extra_args(false);
  c->add_option("-I", gOpts.includeDirs, "Add a module search root")->allow_extra_args(false);
  c->add_option("--seed", gOpts.seedText, "Random seed, an integer from 0 to 2^64 - 1")->default_val("0");
  c->add_flag("--with-optional", gOpts.withOptional, "Also write optional tensors");
  c->add_option("-o", gOpts.output, "Output .safetensors file")->required();
  return c;
}

int tool::runInitWeights() {
  std::optional<uint64_t> seed = parseUnsigned(gOpts.seedText, "--seed");
  if (!seed)
    return 2;
  gOpts.seed = *seed;
  std::optional<std::map<std::string, std::string>> defines = parseDefines(gOpts.defines);
  if (!defines)
    return 2;
  plan::SourceRequest r;
  r.file = gOpts.file;
  r.root = gOpts.root;
  r.defines = std::move(*defines);
  r.sema = semaOptions(gOpts.includeDirs);
  std::optional<plan::CheckedSource> checked = plan::checkSource(r, diags());
  if (!checked)
    return 1;
  const sema::Instantiation *inst = &*checked->instance;

  std::vector<std::pair<std::string, rt::OwnedTensor>> tensors;
  size_t bytes = 0;
  for (const sema::ManifestEntry &e : inst->manifest) {
    if (e.kind == ast::MemberKind::State || (e.optional && !gOpts.withOptional))
      continue;
    std::optional<rt::DType> dt = rt::dtypeFromName(e.dtype.name);
    // A block-quantized param gets f32 values: the runtime and the
    // interpreter quantize them when they load them (`linnet quantize`
    // writes the same blocks into a GGUF file).
    if (!e.dtype.isVar() && rt::blockFormat(e.dtype.name))
      dt = rt::DType::F32;
    if (e.dtype.isVar() || !dt) {
      std::cerr << fmt::format("linnet init-weights: error: '{}' has dtype '{}', which is not "
                               "a concrete dtype after instantiation\n",
                               e.path, e.dtype.name);
      return 1;
    }
    std::vector<int64_t> shape, repeat;
    for (const sema::Unit &u : e.shape) {
      std::optional<int64_t> c = u.isPack() ? std::nullopt : u.dim.constant();
      if (!c) {
        std::cerr << fmt::format("linnet init-weights: error: '{}' has shape {}, which is not "
                                 "constant after instantiation\n",
                                 e.path, sema::shapeStr(e.shape));
        return 1;
      }
      shape.push_back(*c);
    }
    for (const sema::Dim &r : e.repeat)
      repeat.push_back(r.constant().value_or(0));
    // Capacity before allocation: shapes and repeats come from the source
    // and -D, so their product may overflow or exceed memory.
    uint64_t one = rt::dtypeSize(*dt), count = 1;
    bool overflow = false;
    for (int64_t d : shape)
      overflow |= d < 0 || __builtin_mul_overflow(one, static_cast<uint64_t>(d), &one);
    for (int64_t r : repeat)
      overflow |= r < 0 || __builtin_mul_overflow(count, static_cast<uint64_t>(r), &count);
    uint64_t all = 0;
    overflow |= __builtin_mul_overflow(one, count, &all) || __builtin_add_overflow(bytes, all, &all);
    uint64_t limit = input::limitFromEnv("LINNET_MAX_WEIGHTS_BYTES", kDefaultMaxWeightsBytes);
    if (overflow || all > limit) {
      std::cerr << fmt::format("linnet init-weights: error: '{}' ({}[{}], {} time{}) would bring "
                               "the weights to {} bytes, more than the {} byte limit (set "
                               "LINNET_MAX_WEIGHTS_BYTES to raise it)\n",
                               e.path, e.dtype.name, sema::shapeStr(e.shape), count,
                               count == 1 ? "" : "s", overflow ? std::string("over 2^64") : std::to_string(all),
                               limit);
      return 1;
    }
    std::vector<std::string> paths;
    expandPath(e.path, repeat, 0, paths);
    for (const std::string &p : paths) {
      tensors.emplace_back(p, randomTensor(*dt, shape, hashPath(p, gOpts.seed)));
      bytes += tensors.back().second.data.size();
    }
  }
  std::map<std::string, rt::TensorView> views;
  for (auto &[name, t] : tensors)
    views.emplace(name, t.view());
  std::string err;
  if (!rt::writeSafeTensors(gOpts.output, views, err)) {
    std::cerr << "linnet: error: " << err << "\n";
    return 1;
  }
  std::cout << fmt::format("{}: {} tensors, {:.1f} MiB (seed {})\n", gOpts.output, views.size(),
                           static_cast<double>(bytes) / (1 << 20), gOpts.seed);
  return 0;
}
