//===- Runtime.cpp - Load and run a CPU ProgramArtifact -------------------===//
#include "linnet/Runtime/Runtime.h"
#include "linnet/Planning/Common.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <dlfcn.h>
#include <functional>
#include <fstream>
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

/// Reads `j[key]` as T, or reports "runtime.json: <where>.<key>: ..." .
template <typename T>
bool field(const json &j, const char *key, T &out, const std::string &where, std::string &error) {
  auto it = j.find(key);
  if (it == j.end()) {
    error = fmt::format("{}.{}: missing", where, key);
    return false;
  }
  try {
    out = it->get<T>();
  } catch (const json::exception &e) {
    error = fmt::format("{}.{}: {}", where, key, e.what());
    return false;
  }
  return true;
}

bool parseDType(const std::string &name, DType &out, const std::string &where,
                std::string &error) {
  std::optional<DType> d = dtypeFromName(name);
  if (!d) {
    error = fmt::format("{}: unknown dtype '{}'", where, name);
    return false;
  }
  out = *d;
  return true;
}

bool parseSig(const json &j, TensorSig &out, const std::string &where, std::string &error) {
  std::string dt;
  if (!field(j, "dtype", dt, where, error) || !parseDType(dt, out.dtype, where, error))
    return false;
  out.name = j.value("name", "");
  out.relation = j.value("relation", "");
  out.numSrc = j.value("num_src", "");
  auto sh = j.find("shape");
  if (sh == j.end() || !sh->is_array()) {
    error = where + ".shape: expected an array";
    return false;
  }
  for (const json &d : *sh) {
    if (d.is_number_integer())
      out.shape.emplace_back(d.get<int64_t>());
    else if (d.is_string())
      out.shape.emplace_back(d.get<std::string>());
    else {
      error = where + ".shape: entries are integers or generic names";
      return false;
    }
  }
  return true;
}

/// MLIR's strided memref descriptor for any rank, as a flat int64 buffer:
/// {allocated, aligned, offset, sizes[N], strides[N]}.
std::vector<int64_t> descriptor(const void *data, const std::vector<int64_t> &shape) {
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


/// Generic values bound so far, with the input each came from.
using DimBindings = std::map<std::string, std::pair<int64_t, std::string>>;

/// Evaluates a signature dim: an integer, a name, `+ - * / %` over both
/// (`/` and `%` floor, as dims do) and `min(a, b)`, `max(a, b)`. Returns
/// nullopt if a name is unbound, a divisor is zero or the text is malformed.
std::optional<int64_t> evalExpr(std::string_view text, const DimBindings &b) {
  size_t pos = 0;
  auto skip = [&] {
    while (pos < text.size() && text[pos] == ' ')
      ++pos;
  };
  std::function<std::optional<int64_t>()> sum, product, atom;
  atom = [&]() -> std::optional<int64_t> {
    skip();
    if (pos < text.size() && text[pos] == '(') {
      ++pos;
      auto v = sum();
      skip();
      if (!v || pos >= text.size() || text[pos] != ')')
        return std::nullopt;
      ++pos;
      return v;
    }
    size_t start = pos;
    if (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) {
      while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos])))
        ++pos;
      return std::stoll(std::string(text.substr(start, pos - start)));
    }
    while (pos < text.size() && (std::isalnum(static_cast<unsigned char>(text[pos])) || text[pos] == '_'))
      ++pos;
    if (pos == start)
      return std::nullopt;
    std::string_view word = text.substr(start, pos - start);
    if ((word == "min" || word == "max") && pos < text.size() && text[pos] == '(') {
      ++pos;
      auto x = sum();
      skip();
      if (!x || pos >= text.size() || text[pos] != ',')
        return std::nullopt;
      ++pos;
      auto y = sum();
      skip();
      if (!y || pos >= text.size() || text[pos] != ')')
        return std::nullopt;
      ++pos;
      return word == "min" ? std::min(*x, *y) : std::max(*x, *y);
    }
    auto it = b.find(std::string(word));
    if (it == b.end())
      return std::nullopt;
    return it->second.first;
  };
  product = [&]() -> std::optional<int64_t> {
    auto v = atom();
    for (skip(); v && pos < text.size() && (text[pos] == '*' || text[pos] == '/' || text[pos] == '%');
         skip()) {
      char op = text[pos++];
      auto r = atom();
      if (!r || (op != '*' && *r == 0))
        return std::nullopt;
      if (op == '*') {
        *v *= *r;
      } else {
        int64_t q = *v / *r, m = *v % *r;
        if (m != 0 && ((m < 0) != (*r < 0))) {
          --q;
          m += *r;
        }
        *v = op == '/' ? q : m;
      }
    }
    return v;
  };
  sum = [&]() -> std::optional<int64_t> {
    auto v = product();
    for (skip(); v && pos < text.size() && (text[pos] == '+' || text[pos] == '-'); skip()) {
      char op = text[pos++];
      auto r = product();
      if (!r)
        return std::nullopt;
      *v = op == '+' ? *v + *r : *v - *r;
    }
    return v;
  };
  auto v = sum();
  skip();
  return pos == text.size() ? v : std::nullopt;
}

std::optional<int64_t> evalDim(const SigDim &d, const DimBindings &b) {
  if (std::holds_alternative<int64_t>(d))
    return std::get<int64_t>(d);
  return evalExpr(std::get<std::string>(d), b);
}

/// The value of a rank-0 integer input (inputs were checked against the
/// signature's dtype and shape already).
std::optional<int64_t> scalarValue(const TensorView &v) {
  if (!v.shape.empty() || v.data.size() != dtypeSize(v.dtype))
    return std::nullopt;
  auto as = [&](auto x) {
    std::memcpy(&x, v.data.data(), sizeof x);
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

std::vector<std::string> namesIn(const std::string &text);

/// Checks the entry's `where` clause with its generics and its integer
/// scalar inputs bound, before anything runs.
bool checkWhere(const EntrySig &sig, std::span<const TensorView> inputs, DimBindings b,
                std::string &error) {
  for (size_t i = 0; i < inputs.size() && i < sig.inputs.size(); ++i)
    if (std::optional<int64_t> v = scalarValue(inputs[i]))
      b[sig.inputs[i].name] = {*v, sig.inputs[i].name};
  for (const WhereSig &w : sig.where) {
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
        with.push_back(fmt::format("{} = {}", name, it->second.first));
    error = fmt::format("entry '{}': the constraint `{}` does not hold ({} {} {}{}{})", sig.name,
                        w.text, *l, w.op, *r, with.empty() ? "" : " with ",
                        fmt::join(with, ", "));
    return false;
  }
  return true;
}

/// Names that occur in a dim expression.
std::vector<std::string> namesIn(const std::string &text) {
  std::vector<std::string> out;
  for (size_t i = 0; i < text.size();) {
    if (std::isalpha(static_cast<unsigned char>(text[i])) || text[i] == '_') {
      size_t j = i;
      while (j < text.size() && (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_'))
        ++j;
      std::string word = text.substr(i, j - i);
      if (!((word == "min" || word == "max") && j < text.size() && text[j] == '('))
        out.push_back(word);
      i = j;
    } else {
      ++i;
    }
  }
  return out;
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
  if (!f0 || !f1 || *f1 == *f0 || (actual - *f0) % (*f1 - *f0) != 0)
    return 0;
  int64_t x = (actual - *f0) / (*f1 - *f0);
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

bool linnet::rt::parseArtifactInfo(const std::string &path, ArtifactInfo &out,
                                   std::string &error) {
  std::ifstream in(path);
  if (!in) {
    error = fmt::format("{}: cannot open", path);
    return false;
  }
  json j;
  try {
    j = json::parse(in);
  } catch (const json::exception &e) {
    error = fmt::format("{}: not valid JSON: {}", path, e.what());
    return false;
  }
  std::string err;
  auto fail = [&] {
    error = fmt::format("{}: {}", path, err);
    return false;
  };
  if (!field(j, "abi", out.abi, "runtime", err) || !field(j, "library", out.library, "runtime", err))
    return fail();
  if (out.abi != "linnet-cpu-packed-v1") {
    err = fmt::format("runtime.abi: unsupported ABI '{}' (this runtime implements "
                      "linnet-cpu-packed-v1)",
                      out.abi);
    return fail();
  }
  if (!j.contains("tensors") || !j["tensors"].is_array() || !j.contains("entries") ||
      !j["entries"].is_array()) {
    err = "runtime: 'tensors' and 'entries' must be arrays";
    return fail();
  }
  for (size_t i = 0; i < j["tensors"].size(); ++i) {
    const json &t = j["tensors"][i];
    std::string where = fmt::format("tensors[{}]", i), kind, dt;
    ModelTensor mt;
    if (!field(t, "path", mt.path, where, err) || !field(t, "kind", kind, where, err) ||
        !field(t, "dtype", dt, where, err) || !parseDType(dt, mt.dtype, where, err) ||
        !field(t, "shape", mt.shape, where, err))
      return fail();
    if (kind == "param")
      mt.kind = TensorKind::Param;
    else if (kind == "buffer")
      mt.kind = TensorKind::Buffer;
    else if (kind == "state")
      mt.kind = TensorKind::State;
    else {
      err = fmt::format("{}.kind: expected param, buffer or state, found '{}'", where, kind);
      return fail();
    }
    for (int64_t d : mt.shape)
      if (d < 0) {
        err = fmt::format("{}.shape: negative dimension", where);
        return fail();
      }
    mt.optional = t.value("optional", false);
    mt.present = t.value("present", true);
    mt.block = t.value("block", "");
    out.tensors.push_back(std::move(mt));
  }
  for (size_t i = 0; i < j["entries"].size(); ++i) {
    const json &e = j["entries"][i];
    std::string where = fmt::format("entries[{}]", i);
    EntrySig sig;
    if (!field(e, "name", sig.name, where, err) || !field(e, "symbol", sig.symbol, where, err))
      return fail();
    sig.generics = e.value("generics", std::vector<std::string>{});
    for (const char *list : {"inputs", "results"}) {
      if (!e.contains(list) || !e[list].is_array()) {
        err = fmt::format("{}.{}: expected an array", where, list);
        return fail();
      }
      for (size_t k = 0; k < e[list].size(); ++k) {
        TensorSig s;
        if (!parseSig(e[list][k], s, fmt::format("{}.{}[{}]", where, list, k), err))
          return fail();
        (std::string(list) == "inputs" ? sig.inputs : sig.results).push_back(std::move(s));
      }
    }
    if (e.contains("where")) {
      static const std::set<std::string> ops = {"==", "!=", "<", "<=", ">", ">="};
      const json &w = e["where"];
      if (!w.is_array()) {
        err = where + ".where: expected an array";
        return fail();
      }
      for (size_t k = 0; k < w.size(); ++k) {
        std::string at = fmt::format("{}.where[{}]", where, k);
        WhereSig c;
        if (!w[k].is_object() || !field(w[k], "op", c.op, at, err) ||
            !field(w[k], "text", c.text, at, err))
        {
          if (err.empty())
            err = at + ": expected an object";
          return fail();
        }
        if (!ops.count(c.op)) {
          err = fmt::format("{}.op: expected a comparison, found '{}'", at, c.op);
          return fail();
        }
        for (auto [key, dst] : {std::pair{"lhs", &c.lhs}, std::pair{"rhs", &c.rhs}}) {
          const json &d = w[k].contains(key) ? w[k][key] : json();
          if (d.is_number_integer())
            *dst = d.get<int64_t>();
          else if (d.is_string())
            *dst = d.get<std::string>();
          else {
            err = fmt::format("{}.{}: expected an integer or an expression", at, key);
            return fail();
          }
        }
        sig.where.push_back(std::move(c));
      }
    }
    out.entries.push_back(std::move(sig));
  }
  if (j.contains("checks")) {
    const json &cs = j["checks"];
    if (!cs.is_array()) {
      err = "runtime.checks: expected an array";
      return fail();
    }
    for (size_t i = 0; i < cs.size(); ++i) {
      std::string at = fmt::format("checks[{}]", i);
      CheckInfo c;
      int64_t id = 0;
      if (!cs[i].is_object()) {
        err = at + ": expected an object";
        return fail();
      }
      if (!field(cs[i], "id", id, at, err) || !field(cs[i], "kind", c.kind, at, err))
        return fail();
      if ((cs[i].contains("loc") && !field(cs[i], "loc", c.loc, at, err)) ||
          (cs[i].contains("tensor") && !field(cs[i], "tensor", c.tensor, at, err)) ||
          (cs[i].contains("axis") && !field(cs[i], "axis", c.axis, at, err)))
        return fail();
      if (id <= 0 || !out.checks.emplace(id, std::move(c)).second) {
        err = fmt::format("{}.id: expected a positive id not used before, found {}", at, id);
        return fail();
      }
    }
  }
  return true;
}

Model::~Model() {
  if (library_)
    ::dlclose(library_);
}

const EntrySig *Model::findEntry(const std::string &name) const {
  for (const EntrySig &e : info_.entries)
    if (e.name == name)
      return &e;
  return nullptr;
}

const OwnedTensor *Model::state(const std::string &path) const {
  auto it = state_.find(path);
  return it == state_.end() ? nullptr : &it->second;
}

std::unique_ptr<Model> Model::load(const std::string &dir, const LoadOptions &opts,
                                   std::string &error) {
  std::unique_ptr<Model> m(new Model());
  if (!parseArtifactInfo(dir + "/runtime.json", m->info_, error))
    return nullptr;
  // The manifest, where there is one, records the library's digest: a
  // library that does not match it is never loaded.
  if (std::ifstream mf(dir + "/manifest.json"); mf) {
    nlohmann::json manifest = nlohmann::json::parse(mf, nullptr, false);
    const nlohmann::json *digests = manifest.is_object() && manifest.contains("digests") ? &manifest["digests"] : nullptr;
    if (!digests || !digests->is_object()) {
      error = fmt::format("{}/manifest.json: not a ProgramArtifact manifest (no digests)", dir);
      return nullptr;
    }
    if (digests->contains("library")) {
      std::string lib = manifest.value("library", std::string("model.so"));
      std::ifstream in(dir + "/" + lib, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      std::string want = (*digests)["library"].is_string() ? (*digests)["library"].get<std::string>() : "";
      std::string have = "sha256:" + planning::sha256Hex(bytes);
      if (!in.good() && !in.eof()) {
        error = fmt::format("{}/{}: cannot read the artifact's library", dir, lib);
        return nullptr;
      }
      if (have != want) {
        error = fmt::format("{}/{}: artifact whose digest does not match its manifest ({} records {}, the file "
                            "is {}); rebuild it",
                            dir, lib, "manifest.json", want, have);
        return nullptr;
      }
    }
  }

  std::vector<std::string> problems;
  bool needsWeights = false;
  for (const ModelTensor &t : m->info_.tensors)
    needsWeights |= t.kind != TensorKind::State;
  if (!opts.weightsPath.empty()) {
    m->weights_ = SafeTensorsFile::open(opts.weightsPath, error);
    if (!m->weights_)
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

  // §9.4: an optional sub block is absent when the weights lack any tensor it
  // requires. Compare that with what the artifact was built for.
  std::map<std::string, bool> blockComplete;
  for (const ModelTensor &t : m->info_.tensors)
    if (!t.block.empty() && t.kind != TensorKind::State) {
      bool has = m->weights_ && m->weights_->find(nameOf(t.path));
      auto [it, inserted] = blockComplete.emplace(t.block, true);
      (void)inserted;
      if (!has && t.present)
        it->second = false;
    }

  std::set<std::string> used;
  for (const ModelTensor &t : m->info_.tensors) {
    if (t.kind == TensorKind::State) {
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
      if (w)
        problems.push_back(fmt::format("tensor {} is in the weights, but the artifact was "
                                       "built without it: rebuild with these weights",
                                       label(t.path)));
      continue;
    }
    if (!w) {
      if (t.block.empty() || blockComplete[t.block])
        problems.push_back(fmt::format("missing {} tensor {}: expected {}{}",
                                       t.kind == TensorKind::Param ? "parameter" : "buffer",
                                       label(t.path), dtypeName(t.dtype), shapeString(t.shape)));
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

  std::string lib = dir + "/" + m->info_.library;
  m->library_ = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!m->library_) {
    error = fmt::format("{}: cannot load: {}", lib, ::dlerror());
    return nullptr;
  }
  for (const EntrySig &e : m->info_.entries) {
    void *sym = ::dlsym(m->library_, e.symbol.c_str());
    if (!sym) {
      error = fmt::format("{}: entry '{}': symbol '{}' not found", lib, e.name, e.symbol);
      return nullptr;
    }
    m->symbols_[e.name] = reinterpret_cast<void (*)(void **)>(sym);
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

bool Model::call(const std::string &entry, const std::vector<TensorView> &inputs,
                 std::vector<OwnedTensor> &results, std::string &error) {
  const EntrySig *sig = findEntry(entry);
  if (!sig) {
    std::vector<std::string> names;
    for (const EntrySig &e : info_.entries)
      names.push_back(e.name);
    error = fmt::format("no entry '{}' (entries: {})", entry, fmt::join(names, ", "));
    return false;
  }
  if (inputs.size() != sig->inputs.size()) {
    error = fmt::format("entry '{}' takes {} input{}, given {}", entry, sig->inputs.size(),
                        sig->inputs.size() == 1 ? "" : "s", inputs.size());
    return false;
  }
  // Check dtypes and ranks, then bind the entry's generics from the inputs'
  // shapes. A dim is a constant, a generic, or an expression over generics
  // (`N + 1` for a CSR row_ptr): bind what a bare name or a single unknown
  // fixes, and repeat until nothing changes.
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSig &s = sig->inputs[i];
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
  }
  DimBindings bound;
  for (bool progress = true; progress;) {
    progress = false;
    for (size_t i = 0; i < inputs.size(); ++i)
      for (size_t k = 0; k < sig->inputs[i].shape.size(); ++k) {
        std::string why;
        int r = bindDim(sig->inputs[i].shape[k], inputs[i].shape[k], sig->inputs[i].name, bound, why);
        if (r < 0) {
          error = why.empty() ? fmt::format("input '{}': expected shape {}, found {}",
                                            sig->inputs[i].name, sigShapeStr(sig->inputs[i].shape),
                                            shapeString(inputs[i].shape))
                              : why;
          return false;
        }
        progress |= r > 0;
      }
  }
  for (size_t i = 0; i < inputs.size(); ++i)
    for (size_t k = 0; k < sig->inputs[i].shape.size(); ++k)
      if (!evalDim(sig->inputs[i].shape[k], bound)) {
        error = fmt::format("input '{}': cannot bind the generics of its shape {} from {}",
                            sig->inputs[i].name, sigShapeStr(sig->inputs[i].shape),
                            shapeString(inputs[i].shape));
        return false;
      }
  if (!checkRelations(*sig, inputs, bound, error))
    return false;
  if (!checkWhere(*sig, inputs, bound, error))
    return false;

  results.assign(sig->results.size(), OwnedTensor{});
  for (size_t r = 0; r < sig->results.size(); ++r) {
    const TensorSig &s = sig->results[r];
    OwnedTensor &out = results[r];
    out.dtype = s.dtype;
    int64_t n = 1;
    for (const SigDim &d : s.shape) {
      std::optional<int64_t> v = evalDim(d, bound);
      if (!v) {
        error = fmt::format("result {} of '{}': its shape {} is not fixed by the inputs", r, entry,
                            sigShapeStr(s.shape));
        return false;
      }
      out.shape.push_back(*v);
      n *= *v;
    }
    out.data.assign(static_cast<size_t>(n) * dtypeSize(s.dtype), std::byte{0});
  }

  std::vector<std::vector<int64_t>> descs;
  descs.reserve(inputs.size() + bound_.size() + results.size());
  for (const TensorView &v : inputs)
    descs.push_back(descriptor(v.data.data(), v.shape));
  for (const TensorView &v : bound_)
    descs.push_back(descriptor(v.data.data(), v.shape));
  for (OwnedTensor &o : results)
    descs.push_back(descriptor(o.data.data(), o.shape));
  std::vector<void *> args;
  for (auto &d : descs)
    args.push_back(d.data());
  symbols_.at(entry)(args.data());
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
