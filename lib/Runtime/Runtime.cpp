//===- Runtime.cpp - Load and run a CPU ProgramArtifact -------------------===//
#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/Artifact.h"

#include "DimExpr.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <functional>
#include <fstream>
#include <mutex>
#include <set>
#include <sstream>

using namespace linnet::rt;
using json = nlohmann::json;

namespace {


std::string sigShapeStr(const std::vector<SigDim> &s) {
  std::vector<std::string> parts;
  for (const SigDim &d : s)
    parts.push_back(std::holds_alternative<int64_t>(d) ? std::to_string(std::get<int64_t>(d))
                                                       : std::get<std::string>(d));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

/// Generic values bound so far, with the input each came from.
using DimBindings = std::map<std::string, std::pair<int64_t, std::string>>;

/// Evaluates a signature dim (DimExpr.h): nullopt if a name is unbound,
/// a divisor is zero, the arithmetic overflows or the text is malformed.
std::optional<int64_t> evalExpr(std::string_view text, const DimBindings &b) {
  return dimexpr::eval(text, [&](std::string_view n) -> std::optional<int64_t> {
    auto it = b.find(std::string(n));
    if (it == b.end())
      return std::nullopt;
    return it->second.first;
  });
}

std::optional<int64_t> evalDim(const SigDim &d, const DimBindings &b) {
  if (std::holds_alternative<int64_t>(d))
    return std::get<int64_t>(d);
  return evalExpr(std::get<std::string>(d), b);
}

/// Element `k` of an integer input (inputs were checked against the
/// signature's dtype and shape already); nullopt for other dtypes.
std::optional<int64_t> intElement(const TensorView &v, int64_t k) {
  size_t size = dtypeSize(v.dtype);
  if (k < 0 || (size_t(k) + 1) * size > v.data.size())
    return std::nullopt;
  auto as = [&](auto x) {
    std::memcpy(&x, v.data.data() + size_t(k) * size, sizeof x);
    return static_cast<int64_t>(x);
  };
  switch (v.dtype) {
  case DType::U8: return as(uint8_t{});
  case DType::I8: return as(int8_t{});
  case DType::I16: return as(int16_t{});
  case DType::I32: return as(int32_t{});
  case DType::I64: return as(int64_t{});
  default: return std::nullopt;
  }
}

/// The value of a rank-0 integer input.
std::optional<int64_t> scalarValue(const TensorView &v) {
  if (!v.shape.empty())
    return std::nullopt;
  return intElement(v, 0);
}

std::vector<std::string> namesIn(const std::string &text) { return dimexpr::names(text); }

/// `[i, j]`: the index of element `k` of a row-major tensor of `shape`.
std::string elementIndex(const std::vector<int64_t> &shape, int64_t k) {
  std::vector<int64_t> at(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    at[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
  return fmt::format("[{}]", fmt::join(at, ", "));
}

/// Checks the entry's `where` clause with its generics and its integer
/// scalar inputs bound, before anything runs. A constraint that names an
/// integer tensor input holds for each of its elements (the first that
/// fails is named).
bool checkWhere(const EntrySig &sig, std::span<const TensorView> inputs, DimBindings b,
                std::string &error) {
  std::map<std::string, const TensorView *> tensors;
  for (size_t i = 0; i < inputs.size() && i < sig.inputs.size(); ++i) {
    if (std::optional<int64_t> v = scalarValue(inputs[i]))
      b[sig.inputs[i].name] = {*v, sig.inputs[i].name};
    else if (DType d = inputs[i].dtype; !inputs[i].shape.empty() && (d == DType::U8 || d == DType::I8 ||
                                                                       d == DType::I16 || d == DType::I32 ||
                                                                       d == DType::I64))
      tensors[sig.inputs[i].name] = &inputs[i];
  }
  for (const WhereSig &w : sig.where) {
    std::string each; // the tensor input the constraint ranges over
    for (const std::string &name : namesIn(w.text))
      if (tensors.count(name))
        each = name;
    const TensorView *t = each.empty() ? nullptr : tensors.at(each);
    int64_t count = t ? t->numElements() : 1;
    for (int64_t k = 0; k < count; ++k) {
      if (t)
        b[each] = {*intElement(*t, k), each};
      std::optional<int64_t> l = evalDim(w.lhs, b), r = evalDim(w.rhs, b);
      if (!l || !r) {
        error = fmt::format("entry '{}': cannot evaluate its constraint `{}` from the inputs",
                            sig.name, w.text);
        return false;
      }
      bool ok = w.op == "==" ? *l == *r : w.op == "!=" ? *l != *r : w.op == "<" ? *l < *r
              : w.op == "<=" ? *l <= *r : w.op == ">" ? *l > *r : *l >= *r;
      if (ok)
        continue;
      std::vector<std::string> with;
      std::set<std::string> shown;
      for (const std::string &name : namesIn(w.text))
        if (auto it = b.find(name); it != b.end() && shown.insert(name).second)
          with.push_back(name == each ? fmt::format("{}{} = {}", name, elementIndex(t->shape, k), it->second.first)
                                      : fmt::format("{} = {}", name, it->second.first));
      // A root generic fixed at build time is a constant here; a side that
      // names one alone (`pos < MaxSeq`) shows its value: the bound by name.
      if (size_t at = w.text.find(" " + w.op + " "); at != std::string::npos)
        for (auto [side, text] : {std::pair{&w.lhs, w.text.substr(0, at)},
                                  std::pair{&w.rhs, w.text.substr(at + w.op.size() + 2)}})
          if (std::holds_alternative<int64_t>(*side) && namesIn(text) == std::vector<std::string>{text} &&
              shown.insert(text).second)
            with.push_back(fmt::format("{} = {}", text, std::get<int64_t>(*side)));
      error = fmt::format("entry '{}': the constraint `{}` does not hold{} ({} {} {}{}{})", sig.name, w.text,
                          t ? fmt::format(" for element {} of '{}'", elementIndex(t->shape, k), each) : "", *l,
                          w.op, *r, with.empty() ? "" : " with ", fmt::join(with, ", "));
      return false;
    }
    if (t)
      b.erase(each);
  }
  return true;
}


/// Binds or checks one input axis against its signature dim. Returns 1 if a
/// generic was bound, 0 if nothing changed (checked, or not yet solvable),
/// -1 on a mismatch (with `why` set when it names a conflict).
int bindDim(const SigDim &d, int64_t actual, const std::string &input, DimBindings &b,
            std::string &why) {
  if (std::optional<int64_t> v = evalDim(d, b)) {
    if (*v == actual)
      return 0;
    if (std::holds_alternative<std::string>(d)) {
      const std::string &text = std::get<std::string>(d);
      for (const std::string &n : namesIn(text)) {
        auto it = b.find(n);
        if (it != b.end() && it->second.second != input) {
          why = fmt::format("inputs disagree on generic '{}': {} from '{}', but '{}' has an axis "
                            "{} where {} = {} is expected",
                            n, it->second.first, it->second.second, input, actual, text, *v);
          return -1;
        }
      }
    }
    return -1;
  }
  const std::string &text = std::get<std::string>(d);
  std::vector<std::string> unknown;
  for (const std::string &n : namesIn(text))
    if (!b.count(n) && std::find(unknown.begin(), unknown.end(), n) == unknown.end())
      unknown.push_back(n);
  if (unknown.size() != 1)
    return 0;
  // Solve f(x) = actual for a dim linear in its one unknown.
  DimBindings trial = b;
  trial[unknown[0]] = {0, input};
  std::optional<int64_t> f0 = evalExpr(text, trial);
  trial[unknown[0]] = {1, input};
  std::optional<int64_t> f1 = evalExpr(text, trial);
  int64_t num, den;
  if (!f0 || !f1 || __builtin_sub_overflow(actual, *f0, &num) || __builtin_sub_overflow(*f1, *f0, &den) ||
      den == 0 || (den == -1 && num == INT64_MIN) || num % den != 0)
    return 0;
  int64_t x = num / den;
  trial[unknown[0]] = {x, input};
  if (x < 0 || evalExpr(text, trial) != actual)
    return -1;
  b[unknown[0]] = {x, input};
  return 1;
}

template <typename T> T load(const TensorView &v, int64_t i) {
  T x;
  std::memcpy(&x, v.data.data() + static_cast<size_t>(i) * sizeof(T), sizeof(T));
  return x;
}

/// A CSR relation arrives as `<name>.row_ptr` and `<name>.col_idx`; the
/// generated code trusts them, so check them here: row_ptr starts at 0,
/// never decreases and ends at len(col_idx); every source is in range.
bool checkRelations(const EntrySig &sig, const std::vector<TensorView> &inputs,
                    const DimBindings &b, std::string &error) {
  for (size_t i = 0; i < sig.inputs.size(); ++i) {
    const TensorSig &rp = sig.inputs[i];
    if (rp.relation.empty() || rp.name != rp.relation + ".row_ptr")
      continue;
    size_t ci = i + 1;
    if (ci >= sig.inputs.size() || sig.inputs[ci].name != rp.relation + ".col_idx")
      continue;
    const TensorView &r = inputs[i], &c = inputs[ci];
    int64_t rows = r.shape.empty() ? 0 : r.shape[0], edges = c.shape.empty() ? 0 : c.shape[0];
    auto fail = [&](std::string what) {
      error = fmt::format("relation '{}': {}", rp.relation, what);
      return false;
    };
    if (rows < 1)
      return fail("row_ptr is empty (it needs num_dst + 1 offsets)");
    if (load<int64_t>(r, 0) != 0)
      return fail(fmt::format("row_ptr[0] is {}, expected 0", load<int64_t>(r, 0)));
    for (int64_t k = 1; k < rows; ++k)
      if (load<int64_t>(r, k) < load<int64_t>(r, k - 1))
        return fail(fmt::format("row_ptr decreases at {} ({} after {})", k, load<int64_t>(r, k),
                                load<int64_t>(r, k - 1)));
    if (load<int64_t>(r, rows - 1) != edges)
      return fail(fmt::format("row_ptr ends at {}, but col_idx has {} edges",
                              load<int64_t>(r, rows - 1), edges));
    // -1: the source count is not known (an artifact without num_src).
    int64_t numSrc = sig.inputs[ci].numSrc.empty()
                         ? -1
                         : evalExpr(sig.inputs[ci].numSrc, b).value_or(-1);
    for (int64_t e = 0; e < edges; ++e) {
      int64_t s = load<int64_t>(c, e);
      if (s < 0 || (numSrc >= 0 && s >= numSrc))
        return fail(fmt::format("col_idx[{}] = {} is not a source node (0 <= src < {})", e, s,
                                numSrc >= 0 ? std::to_string(numSrc) : std::string("?")));
    }
  }
  return true;
}
} // namespace

namespace {
/// Opens the library from its verified bytes, so that what runs is exactly
/// what was hashed: an anonymous memory file (memfd) opened through
/// /proc/self/fd, or where memfd is unavailable a private temporary copy.
/// `fd` stays open while the library is loaded: glibc recognizes a loaded
/// object by its path, and a live fd's number is not reused.
void *openLibraryBytes(const std::string &bytes, const std::string &label, int &fd, std::string &error) {
  auto writeAll = [&](int f) {
    for (size_t off = 0; off < bytes.size();) {
      ssize_t n = ::write(f, bytes.data() + off, bytes.size() - off);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return false;
      off += static_cast<size_t>(n);
    }
    return true;
  };
  fd = ::memfd_create("linnet-model.so", MFD_CLOEXEC);
  std::string path, tmp;
  if (fd >= 0) {
    path = fmt::format("/proc/self/fd/{}", fd);
  } else {
    const char *dir = std::getenv("TMPDIR");
    tmp = fmt::format("{}/linnet-model-XXXXXX", dir && *dir ? dir : "/tmp");
    fd = ::mkstemp(tmp.data());
    if (fd < 0) {
      error = fmt::format("{}: cannot stage the verified library: {}", label, std::strerror(errno));
      return nullptr;
    }
    path = tmp;
  }
  if (!writeAll(fd)) {
    error = fmt::format("{}: cannot stage the verified library: {}", label, std::strerror(errno));
    ::close(fd);
    fd = -1;
    if (!tmp.empty())
      ::unlink(tmp.c_str());
    return nullptr;
  }
  void *h = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!tmp.empty()) { // the private copy is unlinked once mapped
    ::unlink(tmp.c_str());
    ::close(fd);
    fd = -1;
  }
  if (!h) {
    const char *why = ::dlerror();
    error = fmt::format("{}: cannot load: {}", label, why ? why : "unknown error");
    if (fd >= 0)
      ::close(fd);
    fd = -1;
  }
  return h;
}
} // namespace

std::vector<int64_t> linnet::rt::memrefDescriptor(const void *data, const std::vector<int64_t> &shape) {
  std::vector<int64_t> d(3 + 2 * shape.size());
  d[0] = static_cast<int64_t>(reinterpret_cast<uintptr_t>(data));
  d[1] = d[0];
  d[2] = 0;
  int64_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    d[3 + i] = shape[i];
    d[3 + shape.size() + i] = stride;
    stride *= shape[i];
  }
  return d;
}

Model::~Model() {
  device_.reset(); // it holds the library's host hooks
  if (library_)
    ::dlclose(library_);
  if (libraryFd_ >= 0) {
    // A library that stays mapped (dlclose may keep it) keeps its fd, so
    // that no later library is mistaken for it by path.
    std::string path = fmt::format("/proc/self/fd/{}", libraryFd_);
    if (void *still = ::dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD))
      ::dlclose(still);
    else
      ::close(libraryFd_);
  }
}

const EntrySig *Model::findEntry(const std::string &name) const {
  for (const EntrySig &e : info_.entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

const OwnedTensor *Model::state(const std::string &path) const {
  auto it = state_.find(path);
  if (it == state_.end())
    return nullptr;
  if (device_) {
    // The device holds the state; the host copy is refreshed on request.
    std::span<std::byte> bytes(it->second.data.data(), it->second.data.size());
    for (size_t k = 0; k < bound_.size(); ++k)
      if (bound_[k].data.data() == bytes.data()) {
        std::string error;
        if (!device_->download(k, bytes, error))
          return nullptr;
      }
  }
  return &it->second;
}

std::unique_ptr<Model> Model::load(const std::string &dir, const LoadOptions &opts,
                                   std::string &error) {
  std::unique_ptr<Model> m(new Model());
  // Everything the runtime reads comes through the manifest's digests: the
  // runtime description first, the library only after the weights check.
  std::unique_ptr<VerifiedArtifact> art = VerifiedArtifact::open(dir, error);
  if (!art)
    return nullptr;
  std::string runtimeText;
  if (!art->read("runtime.json", runtimeText, error))
    return nullptr;
  if (!parseArtifactInfo(runtimeText, m->info_, error)) {
    error = fmt::format("{}/runtime.json: {}", dir, error);
    return nullptr;
  }  // Code for another CPU is refused before anything is bound or loaded:
  // the library would die of SIGILL at its first wider instruction.
  if (m->info_.cpu)
    if (std::string why = checkHostCpu(*m->info_.cpu); !why.empty()) {
      error = fmt::format("{}: cannot run on this machine: {}", dir, why);
      return nullptr;
    }

  if (m->info_.library != art->manifest().library) {
    error = fmt::format("{}/runtime.json: library: '{}' is not the library manifest.json lists ('{}')", dir,
                        m->info_.library, art->manifest().library);
    return nullptr;
  }

  std::vector<std::string> problems;
  bool needsWeights = false;
  for (const ModelTensor &t : m->info_.tensors)
    needsWeights |= t.kind != TensorKind::State;
  if (!opts.weightsPath.empty()) {
    // Params read as blocks keep a GGUF file's blocks without an f32 copy.
    std::set<std::string> keepBlocks;
    for (const ModelTensor &t : m->info_.tensors)
      if (t.storage)
        keepBlocks.insert(opts.externalName ? opts.externalName(t.path) : t.path);
    m->weights_ = SafeTensorsFile::open(opts.weightsPath, error, opts.mapWeights, &keepBlocks);
    if (!m->weights_)
      return nullptr;
    if (opts.binding && !applyBindingTransforms(*m->weights_, *opts.binding, error))
      return nullptr;
  } else if (needsWeights) {
    error = "the model has parameters: give a weights file (--weights)";
    return nullptr;
  }
  auto nameOf = [&](const std::string &path) {
    return opts.externalName ? opts.externalName(path) : path;
  };
  auto label = [&](const std::string &path) {
    std::string ext = nameOf(path);
    return ext == path ? fmt::format("'{}'", path) : fmt::format("'{}' (as '{}')", path, ext);
  };

  // Optional tensors are bound at load time: an artifact built without
  // weights lists a runtime description (and library) per presence set of
  // its optional tensors; load the one whose optional tensors are exactly
  // those the weights hold. With none matching, the primary one reports
  // below what differs.
  auto held = [&](const ModelTensor &t) {
    return m->weights_ && m->weights_->find(nameOf(t.path)) != nullptr;
  };
  // §9.4: an optional sub block is absent when the weights lack a tensor it
  // requires; its other tensors in the weights are then not used.
  std::map<std::string, bool> blockHeld;
  for (const ModelTensor &t : m->info_.tensors)
    if (!t.block.empty()) {
      bool &b = blockHeld.emplace(t.block, true).first->second;
      if (t.required && !held(t))
        b = false;
    }
  auto matchesWeights = [&](const ArtifactInfo &info) {
    for (const ModelTensor &t : info.tensors)
      if (t.optional && t.kind != TensorKind::State &&
          t.present != (held(t) && (t.block.empty() || blockHeld[t.block])))
        return false;
    return true;
  };
  if (!m->info_.variants.empty() && !matchesWeights(m->info_)) {
    auto presentSet = [&](const ArtifactInfo &info) {
      std::vector<std::string> names;
      for (const ModelTensor &t : info.tensors)
        if (t.optional && t.kind != TensorKind::State && t.present)
          names.push_back(t.path);
      return names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "));
    };
    std::vector<std::string> built = {presentSet(m->info_)};
    bool matched = false;
    for (const std::string &name : m->info_.variants) {
      std::string text;
      ArtifactInfo v;
      if (!art->read(name, text, error))
        return nullptr;
      if (!parseArtifactInfo(text, v, error)) {
        error = fmt::format("{}/{}: {}", dir, name, error);
        return nullptr;
      }
      bool same = v.variants.empty() && v.tensors.size() == m->info_.tensors.size();
      for (size_t i = 0; same && i < v.tensors.size(); ++i) {
        const ModelTensor &a = v.tensors[i], &b = m->info_.tensors[i];
        same = a.path == b.path && a.kind == b.kind && a.dtype == b.dtype && a.shape == b.shape &&
               a.optional == b.optional;
      }
      if (!same) {
        error = fmt::format("{}/{}: not a variant of runtime.json (its tensors differ, or it lists "
                            "variants itself)",
                            dir, name);
        return nullptr;
      }
      if (matchesWeights(v)) {
        m->info_ = std::move(v);
        matched = true;
        break;
      }
      built.push_back(presentSet(v));
    }
    if (!matched) {
      std::vector<std::string> held;
      for (const ModelTensor &t : m->info_.tensors)
        if (t.optional && t.kind != TensorKind::State && m->weights_ && m->weights_->find(nameOf(t.path)))
          held.push_back(label(t.path));
      error = fmt::format("the weights hold the optional tensors {}, but the artifact has libraries "
                          "only for these sets of them: {} (build with these weights, or with "
                          "--variants each)",
                          held.empty() ? std::string("none") : fmt::format("{}", fmt::join(held, ", ")),
                          fmt::join(built, "; "));
      return nullptr;
    }
  }

  // §9.4: an optional sub block is absent when the weights lack any tensor it
  // requires. Compare that with what the artifact was built for.
  std::map<std::string, bool> blockComplete;
  for (const ModelTensor &t : m->info_.tensors)
    if (!t.block.empty() && t.kind != TensorKind::State) {
      bool has = m->weights_ && m->weights_->find(nameOf(t.path));
      auto [it, inserted] = blockComplete.emplace(t.block, true);
      (void)inserted;
      if (!has && t.present && t.required)
        it->second = false;
    }

  std::set<std::string> used;
  for (const ModelTensor &t : m->info_.tensors) {
    if (t.kind == TensorKind::State) {
      // An absent optional sub's state has no buffer: the entry takes only
      // the present tensors (a bound one here shifted every later argument).
      if (!t.present)
        continue;
      OwnedTensor &s = m->state_[t.path];
      s.dtype = t.dtype;
      s.shape = t.shape;
      int64_t n = 1;
      for (int64_t d : t.shape)
        n *= d;
      s.data.assign(static_cast<size_t>(n) * dtypeSize(t.dtype), std::byte{0});
      m->bound_.push_back(s.view());
      continue;
    }
    std::string ext = nameOf(t.path);
    const TensorView *w = m->weights_ ? m->weights_->find(ext) : nullptr;
    if (w)
      used.insert(ext);
    if (!t.block.empty() && t.present && !blockComplete[t.block]) {
      problems.push_back(fmt::format(
          "optional block '{}' was built as present, but the weights lack tensors it "
          "requires (e.g. {}): rebuild with these weights to compile it as absent",
          t.block, label(t.path)));
      blockComplete[t.block] = true; // report once per block
      continue;
    }
    if (!t.present) {
      if (w && (t.block.empty() || blockHeld[t.block]))
        problems.push_back(fmt::format("tensor {} is in the weights, but the artifact was "
                                       "built without it: rebuild with these weights",
                                       label(t.path)));
      continue;
    }
    if (!w) {
      if (t.block.empty() || blockComplete[t.block])
        problems.push_back(fmt::format("missing {} tensor {}: expected {}{}",
                                       t.kind == TensorKind::Param ? "parameter" : "buffer",
                                       label(t.path), t.storage ? blockFormatInfo(*t.storage).name : dtypeName(t.dtype),
                                       shapeString(t.shape)));
      continue;
    }
    if (t.storage) {
      // A block-format param: the file's blocks, or its values quantized.
      const BlockFormatInfo &bf = blockFormatInfo(*t.storage);
      if (w->shape != t.shape) {
        problems.push_back(fmt::format("tensor {}: wrong shape: expected {}, found {}", label(t.path),
                                       shapeString(t.shape), shapeString(w->shape)));
        continue;
      }
      std::span<const std::byte> blocks;
      std::vector<std::byte> owned;
      std::string why;
      if (!blocksFor(*m->weights_, ext, *w, *t.storage, blocks, owned, why)) {
        problems.push_back(fmt::format("tensor {}: {}", label(t.path), why));
        continue;
      }
      // The layout the entries read: rows in groups of eight (a copy).
      if (t.layout == "q4_0x8")
        owned = repackQ4_0x8(blocks, t.shape[0], t.shape.back() / bf.blockElems);
      if (!owned.empty()) {
        m->quantized_.push_back(std::move(owned));
        blocks = {m->quantized_.back().data(), m->quantized_.back().size()};
      }
      std::vector<int64_t> shape(t.shape.begin(), t.shape.end() - 1);
      shape.push_back(t.shape.back() / bf.blockElems);
      shape.push_back(bf.blockBytes);
      m->bound_.push_back(TensorView{DType::U8, shape, blocks});
      continue;
    }
    bool ok = true;
    if (w->dtype != t.dtype) {
      problems.push_back(fmt::format("tensor {}: wrong dtype: expected {}, found {}", label(t.path),
                                     dtypeName(t.dtype), dtypeName(w->dtype)));
      ok = false;
    }
    if (w->shape != t.shape) {
      problems.push_back(fmt::format("tensor {}: wrong shape: expected {}, found {}", label(t.path),
                                     shapeString(t.shape), shapeString(w->shape)));
      ok = false;
    }
    if (ok)
      m->bound_.push_back(*w);
  }
  if (m->weights_)
    for (auto &[name, t] : m->weights_->tensors())
      if (!used.count(name)) {
        bool known = false;
        for (const ModelTensor &mt : m->info_.tensors)
          known |= nameOf(mt.path) == name;
        if (!known)
          problems.push_back(fmt::format("unexpected tensor '{}' in {}: the model has no such "
                                         "parameter or buffer",
                                         name, opts.weightsPath));
      }
  if (!problems.empty()) {
    error = fmt::format("{} problem{} with the weights:\n  {}", problems.size(),
                        problems.size() == 1 ? "" : "s", fmt::join(problems, "\n  "));
    return nullptr;
  }

  std::string lib = dir + "/" + m->info_.library, libBytes;
  if (!art->read(m->info_.library, libBytes, error))
    return nullptr;
  m->library_ = openLibraryBytes(libBytes, lib, m->libraryFd_, error);
  if (!m->library_)
    return nullptr;
  for (const EntrySig &e : m->info_.entries) {
    void *sym = ::dlsym(m->library_, e.symbol.c_str());
    if (!sym) {
      error = fmt::format("{}: entry '{}': symbol '{}' not found", lib, e.name, e.symbol);
      return nullptr;
    }
    m->symbols_[e.name] = reinterpret_cast<void (*)(void **)>(sym);
  }
  if (m->info_.abi != kCpuRuntimeAbi) {
    const DeviceBackend *backend = findDeviceBackend(m->info_.abi);
    if (!backend) {
      error = fmt::format("{}: the artifact's ABI is {}, which this runtime does not implement ({})", dir,
                          m->info_.abi, knownRuntimeAbis());
      return nullptr;
    }
    m->device_ = backend->open(*art, m->info_, m->library_, error);
    if (!m->device_ || !m->device_->bind(m->bound_, error))
      return nullptr;
  }
  if (m->info_.distributed) {
    std::vector<std::string> needed = {"linnet_dist_hook"};
    for (const ArtifactInfo::DistributedKernel &k : m->info_.distributed->kernels)
      needed.push_back(k.symbol);
    for (const std::string &sym : needed)
      if (!::dlsym(m->library_, sym.c_str())) {
        error = fmt::format("{}: runtime.json describes a distributed artifact but the library has no '{}'", lib, sym);
        return nullptr;
      }
  }
  if (!m->info_.profileTasks.empty()) {
    m->profileTake_ = reinterpret_cast<const ProfileEvent *(*)(uint64_t *, uint64_t *)>(
        ::dlsym(m->library_, "linnet_profile_take"));
    if (!m->profileTake_) {
      error = fmt::format("{}: runtime.json lists profiled tasks but the library has no timers "
                          "('linnet_profile_take')",
                          lib);
      return nullptr;
    }
  }
  if (!m->info_.checks.empty()) {
    m->status_ = static_cast<int64_t *>(::dlsym(m->library_, "linnet_status"));
    if (!m->status_) {
      error = fmt::format("{}: runtime.json lists run-time checks but the library has no "
                          "'linnet_status'",
                          lib);
      return nullptr;
    }
  }
  return m;
}

std::optional<WorkspaceStats> Model::workspaceStats(bool resetPeak) const {
  auto stats = reinterpret_cast<void (*)(uint64_t *, uint64_t *, uint64_t *, int)>(
      librarySymbol("linnet_workspace_stats"));
  if (!stats)
    return std::nullopt;
  WorkspaceStats w;
  stats(&w.peak, &w.chunks, &w.chunkBytes, resetPeak ? 1 : 0);
  return w;
}

void *Model::librarySymbol(const std::string &name) const {
  return library_ ? ::dlsym(library_, name.c_str()) : nullptr;
}

std::vector<ProfileEvent> Model::takeProfile(uint64_t &dropped) {
  dropped = 0;
  if (!profileTake_)
    return {};
  uint64_t count = 0, calls = 0;
  const ProfileEvent *events = profileTake_(&count, &calls);
  dropped = calls - count;
  return std::vector<ProfileEvent>(events, events + count);
}

std::vector<TimedCommand> linnet::rt::pairProfileEvents(const std::vector<ProfileEvent> &events,
                                                       size_t timers) {
  std::vector<TimedCommand> out;
  std::vector<size_t> open; // begins not yet ended
  for (size_t k = 0; k < events.size(); ++k) {
    const ProfileEvent &e = events[k];
    if (e.task >= timers)
      continue;
    if (!e.end) {
      open.push_back(k);
      continue;
    }
    auto b = std::find_if(open.rbegin(), open.rend(), [&](size_t o) { return events[o].task == e.task; });
    if (b == open.rend())
      continue;
    uint64_t begin = events[*b].ns;
    open.erase(std::next(b).base());
    out.push_back({e.task, begin, e.ns});
  }
  return out;
}

bool Model::call(const std::string &entry, const std::vector<TensorView> &inputs,
                 std::vector<OwnedTensor> &results, std::string &error) {
  return invoke(entry, inputs, results, error, /*run=*/true);
}

bool Model::check(const std::string &entry, const std::vector<TensorView> &inputs,
                  std::string &error) {
  std::vector<OwnedTensor> results;
  return invoke(entry, inputs, results, error, /*run=*/false);
}

uint64_t linnet::rt::maxCallBytes() {
  return input::limitFromEnv("LINNET_MAX_CALL_BYTES", kDefaultMaxCallBytes);
}

std::optional<uint64_t> linnet::rt::tensorBytes(const std::vector<int64_t> &shape, DType dtype) {
  uint64_t n = dtypeSize(dtype);
  for (int64_t d : shape)
    if (d < 0 || __builtin_mul_overflow(n, static_cast<uint64_t>(d), &n))
      return std::nullopt;
  return n;
}

bool linnet::rt::checkCallBytes(const std::string &what, const std::vector<int64_t> &shape, DType dtype,
                                uint64_t &total, std::string &error) {
  uint64_t cap = maxCallBytes();
  std::optional<uint64_t> bytes = tensorBytes(shape, dtype);
  uint64_t sum = 0;
  bool wraps = bytes && __builtin_add_overflow(total, *bytes, &sum);
  if (!bytes || wraps || sum > cap) {
    error = fmt::format("{}: {}{} is {}{}, over the {} byte limit of one call (set LINNET_MAX_CALL_BYTES to "
                        "raise it)",
                        what, dtypeName(dtype), shapeString(shape),
                        bytes ? fmt::format("{} bytes", *bytes) : std::string("more than 2^64 bytes"),
                        bytes && !wraps && total > 0 ? fmt::format(" ({} with the results before it)", sum) : std::string(),
                        cap);
    return false;
  }
  total = sum;
  return true;
}

bool linnet::rt::checkEntryInputs(const EntrySig &sig, std::span<const TensorView> inputs, EntryCall &call,
                                  std::string &error) {
  const std::string &entry = sig.name;
  call = EntryCall{};
  if (inputs.size() != sig.inputs.size()) {
    error = fmt::format("entry '{}' takes {} input{}, given {}", entry, sig.inputs.size(),
                        sig.inputs.size() == 1 ? "" : "s", inputs.size());
    return false;
  }
  // Check dtypes, ranks and that each view holds the bytes its shape
  // claims, then bind the entry's generics from the inputs' shapes. A dim
  // is a constant, a generic, or an expression over generics (`N + 1` for
  // a CSR row_ptr): bind what a bare name or a single unknown fixes, and
  // repeat until nothing changes.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSig &s = sig.inputs[i];
    const TensorView &v = inputs[i];
    if (v.dtype != s.dtype) {
      error = fmt::format("input '{}': expected dtype {}, found {}", s.name, dtypeName(s.dtype),
                          dtypeName(v.dtype));
      return false;
    }
    if (v.shape.size() != s.shape.size()) {
      error = fmt::format("input '{}': expected shape {} (rank {}), found {} (rank {})", s.name,
                          sigShapeStr(s.shape), s.shape.size(), shapeString(v.shape),
                          v.shape.size());
      return false;
    }
    // (A view may hold more: a distributed rank's entity input has room
    // for its ghost rows past the rows its shape counts.)
    std::optional<uint64_t> bytes = tensorBytes(v.shape, v.dtype);
    if (!bytes || *bytes > v.data.size()) {
      error = fmt::format("input '{}': shape {} of {} needs {} bytes, the data has {}", s.name,
                          shapeString(v.shape), dtypeName(v.dtype),
                          bytes ? std::to_string(*bytes) : std::string("more than 2^64"), v.data.size());
      return false;
    }
  }
  DimBindings bound;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < inputs.size(); ++i)
      for (size_t k = 0; k < sig.inputs[i].shape.size(); ++k) {
        std::string why;
        int r = bindDim(sig.inputs[i].shape[k], inputs[i].shape[k], sig.inputs[i].name, bound, why);
        if (r < 0) {
          error = why.empty() ? fmt::format("input '{}': expected shape {}, found {}",
                                            sig.inputs[i].name, sigShapeStr(sig.inputs[i].shape),
                                            shapeString(inputs[i].shape))
                              : why;
          return false;
        }
        progress |= r > 0;
      }
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = 0; k < sig.inputs[i].shape.size(); ++k)
      if (!evalDim(sig.inputs[i].shape[k], bound)) {
        error = fmt::format("input '{}': cannot bind the generics of its shape {} from {}",
                            sig.inputs[i].name, sigShapeStr(sig.inputs[i].shape),
                            shapeString(inputs[i].shape));
        return false;
      }
  std::vector<TensorView> all(inputs.begin(), inputs.end());
  if (!checkRelations(sig, all, bound, error))
    return false;
  if (!checkWhere(sig, inputs, bound, error))
    return false;

  // The results' sizes, in checked arithmetic and against the cap, before
  // anything is allocated: a 128-byte input declaring 2^40 rows of nothing
  // must not become a 4 TiB result.
  for (size_t r = 0; r < sig.results.size(); ++r) {
    const TensorSig &s = sig.results[r];
    std::vector<int64_t> shape;
    for (const SigDim &d : s.shape) {
      std::optional<int64_t> v = evalDim(d, bound);
      if (!v) {
        error = fmt::format("result {} of '{}': its shape {} is not fixed by the inputs", r, entry,
                            sigShapeStr(s.shape));
        return false;
      }
      if (*v < 0) {
        error = fmt::format("result {} of '{}': its shape {} gives a negative dim {}", r, entry,
                            sigShapeStr(s.shape), *v);
        return false;
      }
      shape.push_back(*v);
    }
    if (!checkCallBytes(fmt::format("result {} of '{}'", r, entry), shape, s.dtype, call.resultBytes, error))
      return false;
    call.resultShapes.push_back(std::move(shape));
  }
  for (auto &[name, v] : bound)
    call.generics[name] = v.first;
  return true;
}

bool Model::invoke(const std::string &entry, const std::vector<TensorView> &inputs,
                   std::vector<OwnedTensor> &results, std::string &error, bool run) {
  const EntrySig *sig = findEntry(entry);
  if (!sig) {
    std::vector<std::string> names;
    for (const EntrySig &e : info_.entries)
      names.push_back(e.name);
    error = fmt::format("no entry '{}' (entries: {})", entry, fmt::join(names, ", "));
    return false;
  }
  EntryCall call;
  if (!checkEntryInputs(*sig, inputs, call, error))
    return false;
  if (!run)
    return true;
  results.assign(sig->results.size(), OwnedTensor{});
  for (size_t r = 0; r < sig->results.size(); ++r) {
    results[r].dtype = sig->results[r].dtype;
    results[r].shape = std::move(call.resultShapes[r]);
    results[r].data.assign(static_cast<size_t>(*tensorBytes(results[r].shape, results[r].dtype)), std::byte{0});
  }

  if (device_) {
    if (!device_->call(symbols_.at(entry), inputs, results, error)) {
      results.clear();
      return false;
    }
  } else {
    std::vector<std::vector<int64_t>> descs;
    descs.reserve(inputs.size() + bound_.size() + results.size());
    for (const TensorView &v : inputs)
      descs.push_back(memrefDescriptor(v.data.data(), v.shape));
    for (const TensorView &v : bound_)
      descs.push_back(memrefDescriptor(v.data.data(), v.shape));
    for (OwnedTensor &o : results)
      descs.push_back(memrefDescriptor(o.data.data(), o.shape));
    std::vector<void *> args;
    for (auto &d : descs)
      args.push_back(d.data());
    symbols_.at(entry)(args.data());
  }
  if (status_ && status_[0] != 0) {
    int64_t id = status_[0], value = status_[1], bound = status_[2];
    status_[0] = status_[1] = status_[2] = status_[3] = 0;
    auto it = info_.checks.find(id);
    std::string at = it == info_.checks.end() || it->second.loc.empty() ? "" : it->second.loc + ": ";
    if (it == info_.checks.end())
      error = fmt::format("entry '{}': run-time check {} failed (value {}, bound {})", entry, id,
                          value, bound);
    else if (it->second.kind == "division")
      error = fmt::format("{}integer division by zero in entry '{}'", at, entry);
    else
      error = fmt::format("{}index {} is out of range for axis {} of {} (size {}) in entry '{}'",
                          at, value, it->second.axis, it->second.tensor, bound, entry);
    results.clear();
    return false;
  }
  return true;
}
