//===- linnet-device-run.cpp - Run prepared cases on a device ---------------===//
//
// The runner of scripts/device-check on a machine that has a GPU and its
// driver and nothing of linnet's toolchain: it links the runtime and the
// device backends only (no MLIR, no LLVM). Each case is an artifact, its
// weights, an entry, its inputs in order and the results the reference
// interpreter computed beforehand; the runner calls the entry and compares.
//
//   linnet-device-run CASES.json
//   linnet-device-run --bench BENCH.json   times cases (bench/cuda)
//   linnet-device-run --probe      the GPU it would run on, or why none
//
// CASES.json: {"cases": [{"name", "artifact", "weights"?, "entry",
//   "inputs": [NPY...], "expected": [NPY...], "repeat"?, "rtol"?, "atol"?}]}
// (paths relative to CASES.json's folder). Prints a line per case and
// "N passed, N failed"; exit 1 when one failed.
//
// BENCH.json: {"benches": [{"name", "artifact", "weights"?, "entry",
//   "inputs": [NPY...], "warmup"?, "iterations"?, "output"?: NPY}]}: each
// entry called warmup + iterations times; prints one line a bench,
// `BENCH {"name", "wall_ms", "device_ms", "commands"}` with medians over
// the timed calls: the wall time of a call (its copies in and out
// included) and, for an artifact built with --profile, the time inside
// its timed commands (CUDA events on a GPU), in all and by command.
// "output" keeps the last call's first result.
//
//===----------------------------------------------------------------------===//

#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Target/CUDA/CudaRuntime.h"
#include "linnet/Target/CUDA/Driver.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <functional>
#include <map>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>

using namespace linnet;
namespace fs = std::filesystem;

namespace {

double element(const rt::TensorView &v, int64_t i) {
  const std::byte *p = v.data.data() + i * rt::dtypeSize(v.dtype);
  auto get = [&](auto t) {
    decltype(t) x;
    std::memcpy(&x, p, sizeof x);
    return double(x);
  };
  switch (v.dtype) {
  case rt::DType::Bool:
  case rt::DType::U8: return get(uint8_t());
  case rt::DType::I8: return get(int8_t());
  case rt::DType::I16: return get(int16_t());
  case rt::DType::I32: return get(int32_t());
  case rt::DType::I64: return get(int64_t());
  case rt::DType::F32: return get(float());
  case rt::DType::F64: return get(double());
  case rt::DType::BF16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    uint32_t bits = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &bits, 4);
    return f;
  }
  case rt::DType::F16: {
    uint16_t h;
    std::memcpy(&h, p, 2);
    int exp = (h >> 10) & 0x1f, man = h & 0x3ff;
    double mag = exp == 0x1f ? (man ? NAN : INFINITY)
                 : exp ? std::ldexp(1.0 + man / 1024.0, exp - 15)
                       : std::ldexp(man / 1024.0, -14);
    return (h & 0x8000) ? -mag : mag;
  }
  default: return NAN;
  }
}

/// Empty when `got` agrees with `want` (floats within rtol/atol, NaN where
/// NaN; integers exactly); otherwise the first difference.
std::string compare(const rt::OwnedTensor &got, const rt::OwnedTensor &want, double rtol, double atol) {
  auto half = [](rt::DType t) { return t == rt::DType::F16 || t == rt::DType::BF16; };
  // A 16-bit float result is expected as float32 (.npy has no bf16; the
  // interpreter writes its values exactly).
  bool widened = half(got.dtype) && want.dtype == rt::DType::F32;
  if ((got.dtype != want.dtype && !widened) || got.shape != want.shape)
    return fmt::format("expected {}{}, found {}{}", rt::dtypeName(want.dtype), rt::shapeString(want.shape),
                       rt::dtypeName(got.dtype), rt::shapeString(got.shape));
  rt::TensorView g = got.view(), w = want.view();
  bool isFloat = got.dtype == rt::DType::F32 || got.dtype == rt::DType::F64 || half(got.dtype);
  if (!isFloat) {
    for (int64_t i = 0; i < g.numElements(); ++i)
      if (element(g, i) != element(w, i))
        return fmt::format("element {}: expected {}, found {}", i, element(w, i), element(g, i));
    return "";
  }
  for (int64_t i = 0; i < g.numElements(); ++i) {
    double a = element(g, i), b = element(w, i);
    if (std::isnan(a) && std::isnan(b))
      continue;
    if (!(std::fabs(a - b) <= atol + rtol * std::fabs(b)))
      return fmt::format("element {}: expected {}, found {}", i, b, a);
  }
  return "";
}

} // namespace

/// A case's model and inputs, read as CASES.json and BENCH.json name them.
struct Loaded {
  std::unique_ptr<rt::Model> model;
  std::vector<rt::OwnedTensor> inputs;
  std::vector<rt::TensorView> views;
};

bool load(const nlohmann::json &c, const std::function<std::string(const nlohmann::json &)> &at, Loaded &out,
          std::string &error) {
  rt::LoadOptions opts;
  if (c.contains("weights"))
    opts.weightsPath = at(c["weights"]);
  out.model = rt::Model::load(at(c["artifact"]), opts, error);
  if (!out.model)
    return false;
  // The entry's input dtypes: a bf16 input comes as f32 values that are
  // bf16 values (numpy has no bf16).
  std::vector<rt::DType> dtypes;
  for (const rt::EntrySig &e : out.model->info().entries)
    if (e.name == c.value("entry", ""))
      for (const rt::TensorSig &in : e.inputs)
        dtypes.push_back(in.dtype);
  for (const nlohmann::json &f : c.value("inputs", nlohmann::json::array())) {
    size_t k = out.inputs.size();
    std::optional<rt::OwnedTensor> t =
        k < dtypes.size() ? rt::readNpyFor(at(f), dtypes[k], error) : rt::readNpy(at(f), error);
    if (!t)
      return false;
    out.inputs.push_back(std::move(*t));
  }
  for (const rt::OwnedTensor &t : out.inputs)
    out.views.push_back(t.view());
  return true;
}

double median(std::vector<double> v) {
  if (v.empty())
    return NAN;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/// --bench: each bench's calls timed; a line of JSON per bench.
int bench(const nlohmann::json &doc, const std::function<std::string(const nlohmann::json &)> &at) {
  int failed = 0;
  for (const nlohmann::json &c : doc["benches"]) {
    std::string name = c.value("name", "?"), error;
    Loaded l;
    std::vector<rt::OwnedTensor> results;
    std::string entry = c.value("entry", "");
    int warmup = std::max(0, c.value("warmup", 3)), iterations = std::max(1, c.value("iterations", 20));
    bool ok = load(c, at, l, error);
    for (int i = 0; ok && i < warmup; ++i)
      ok = l.model->call(entry, l.views, results, error);
    uint64_t dropped = 0;
    if (ok)
      l.model->takeProfile(dropped);
    static const rt::ArtifactInfo none;
    const rt::ArtifactInfo &info = ok ? l.model->info() : none;
    std::vector<double> wall, device;
    std::map<std::string, std::vector<double>> commands;
    for (int i = 0; ok && i < iterations; ++i) {
      auto t0 = std::chrono::steady_clock::now();
      ok = l.model->call(entry, l.views, results, error);
      wall.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      if (!ok || !l.model->profiled())
        continue;
      std::vector<rt::ProfileEvent> events = l.model->takeProfile(dropped);
      double inside = 0;
      std::map<std::string, double> perCall;
      for (const rt::TimedCommand &t : rt::pairProfileEvents(events, info.profileTasks.size())) {
        double ms = double(t.end - t.begin) / 1e6;
        inside += ms;
        perCall[info.profileTasks[t.task]] += ms;
      }
      device.push_back(inside);
      for (const auto &[task, ms] : perCall)
        commands[task].push_back(ms);
    }
    if (ok && c.contains("output") && !results.empty())
      ok = rt::writeNpy(at(c["output"]), results[0].view(), error);
    if (!ok) {
      ++failed;
      std::cout << fmt::format("{}: FAILED: {}\n", name, error);
      continue;
    }
    nlohmann::json line = {{"name", name}, {"wall_ms", median(wall)}, {"iterations", iterations}};
    if (!device.empty()) {
      line["device_ms"] = median(device);
      for (auto &[task, ms] : commands)
        line["commands"][task] = median(ms);
    }
    std::cout << "BENCH " << line.dump() << std::endl;
  }
  return failed ? 1 : 0;
}

int main(int argc, char **argv) {
  bool benchMode = argc == 3 && std::string(argv[1]) == "--bench";
  if (argc != 2 && !benchMode) {
    std::cerr << "usage: linnet-device-run CASES.json | --bench BENCH.json | --probe\n";
    return 2;
  }
  if (std::string(argv[1]) == "--probe") {
    std::string error;
    std::unique_ptr<cuda::Device> device = cuda::Device::open(error);
    if (!device) {
      std::cout << "no GPU: " << error << "\n";
      return 1;
    }
    std::cout << fmt::format("GPU: {} (sm_{}{})\n", device->name(), device->ccMajor(), device->ccMinor());
    std::cout << cuda::describeLibraries() << "\n";
    return 0;
  }
  cuda::registerCudaRuntime();
  fs::path casesPath = argv[benchMode ? 2 : 1], base = casesPath.parent_path();
  std::ifstream in(casesPath);
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  const char *list = benchMode ? "benches" : "cases";
  if (!in || doc.is_discarded() || !doc.contains(list) || !doc[list].is_array()) {
    std::cerr << fmt::format("linnet-device-run: {}: not a {} list\n", casesPath.string(),
                             benchMode ? "bench" : "case");
    return 2;
  }
  std::function<std::string(const nlohmann::json &)> at = [&](const nlohmann::json &j) {
    return (base / j.get<std::string>()).string();
  };
  if (benchMode)
    return bench(doc, at);
  int passed = 0, failed = 0;
  for (const nlohmann::json &c : doc["cases"]) {
    std::string name = c.value("name", "?"), error, why;
    auto t0 = std::chrono::steady_clock::now();
    Loaded l;
    std::vector<rt::OwnedTensor> results;
    if (!load(c, at, l, error))
      why = error;
    for (int r = 0; r < std::max(1, c.value("repeat", 1)) && why.empty(); ++r)
      if (!l.model->call(c["entry"].get<std::string>(), l.views, results, error))
        why = error;
    const nlohmann::json expected = c.value("expected", nlohmann::json::array());
    for (size_t k = 0; why.empty() && k < expected.size(); ++k) {
      std::optional<rt::OwnedTensor> want = rt::readNpy(at(expected[k]), error);
      if (!want)
        why = error;
      else if (k >= results.size())
        why = fmt::format("the entry returned {} results, {} expected", results.size(), expected.size());
      else if (std::string d = compare(results[k], *want, c.value("rtol", 1e-4), c.value("atol", 1e-5)); !d.empty())
        why = fmt::format("result {}: {}", k, d);
    }
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    if (why.empty()) {
      ++passed;
      std::cout << fmt::format("{}: agree ({:.1f} ms)\n", name, ms);
    } else {
      ++failed;
      std::cout << fmt::format("{}: FAILED: {}\n", name, why);
    }
  }
  std::cout << fmt::format("{} passed, {} failed\n", passed, failed);
  return failed ? 1 : 0;
}
