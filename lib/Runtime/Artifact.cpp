//===- Artifact.cpp - manifest.json and runtime.json, read strictly -------===//
//
// Both documents steer native code (which library is opened, which symbol is
// called, how large the buffers handed to it are), so every field is typed
// and checked here, and each error names its JSON path. No exception or
// abort escapes: a wrong type is an error like any other.
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/Quantize.h"
#include "linnet/Support/Input.h"

#include "DimExpr.h"

#include <fmt/format.h>

#include <set>

using json = nlohmann::json;

namespace linnet::rt {
namespace {

const char *typeName(const json &j) {
  switch (j.type()) {
  case json::value_t::object: return "an object";
  case json::value_t::array: return "an array";
  case json::value_t::string: return "a string";
  case json::value_t::boolean: return "a boolean";
  case json::value_t::number_integer:
  case json::value_t::number_unsigned: return "an integer";
  case json::value_t::number_float: return "a number with a fraction";
  case json::value_t::null: return "null";
  default: return "something else";
  }
}

/// Typed access to one JSON object, each failure reported once with its path.
class Obj {
public:
  Obj(const json &j, std::string path, std::string &error) : j_(j), path_(std::move(path)), error_(error) {
    if (!j_.is_object())
      fail(path_, fmt::format("expected an object, found {}", typeName(j_)));
  }
  bool ok() const { return error_.empty(); }
  const std::string &path() const { return path_; }
  std::string &errorRef() const { return error_; }
  std::string at(const std::string &key) const { return input::pathKey(path_, key); }

  bool fail(const std::string &where, const std::string &what) {
    if (error_.empty())
      error_ = fmt::format("{}: {}", where, what);
    return false;
  }
  /// The member `key`, or null (reported when `required`).
  const json *get(const std::string &key, bool required = true) {
    if (!ok() || !j_.is_object())
      return nullptr;
    auto it = j_.find(key);
    if (it == j_.end()) {
      if (required)
        fail(at(key), "missing");
      return nullptr;
    }
    return &*it;
  }
  bool str(const std::string &key, std::string &out, bool required = true) {
    const json *v = get(key, required);
    if (!v)
      return ok();
    if (!v->is_string())
      return fail(at(key), fmt::format("expected a string, found {}", typeName(*v)));
    out = v->get<std::string>();
    return true;
  }
  bool boolean(const std::string &key, bool &out, bool required = true) {
    const json *v = get(key, required);
    if (!v)
      return ok();
    if (!v->is_boolean())
      return fail(at(key), fmt::format("expected true or false, found {}", typeName(*v)));
    out = v->get<bool>();
    return true;
  }
  const json *array(const std::string &key, bool required = true) {
    const json *v = get(key, required);
    if (v && !v->is_array()) {
      fail(at(key), fmt::format("expected an array, found {}", typeName(*v)));
      return nullptr;
    }
    return v;
  }
  /// Refuses members other than `known`.
  bool only(std::initializer_list<const char *> known) {
    if (!ok() || !j_.is_object())
      return false;
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      bool found = false;
      for (const char *k : known)
        found |= it.key() == k;
      if (!found)
        return fail(at(it.key()), fmt::format("unknown field (expected one of: {})", fmt::join(known, ", ")));
    }
    return true;
  }

private:
  const json &j_;
  std::string path_;
  std::string &error_;
};

std::string elem(const std::string &base, size_t i) {
  return fmt::format("{}[{}]", base == "$" ? "" : base, i);
}

/// A distributed kernel's `commands` ({interior, boundary}) and `halo`
/// ([{field, arg, pack: {command, symbol}, exchange: {command}, unpack:
/// {command, symbol}}]): the plan's commands one call runs.
bool readDistributedCommands(Obj &kj, ArtifactInfo::DistributedKernel &dk) {
  const json *cj = kj.get("commands");
  if (!cj)
    return false;
  Obj c(*cj, kj.at("commands"), kj.errorRef());
  if (!c.only({"interior", "boundary"}) || !c.str("interior", dk.interiorCommand) ||
      !c.str("boundary", dk.boundaryCommand, false))
    return false;
  const json *hj = kj.array("halo");
  if (!hj)
    return false;
  for (size_t h = 0; h < hj->size(); ++h) {
    Obj o((*hj)[h], elem(kj.at("halo"), h), kj.errorRef());
    ArtifactInfo::DistributedKernel::Halo halo;
    const json *arg = o.only({"field", "arg", "pack", "exchange", "unpack"}) && o.str("field", halo.field)
                          ? o.get("arg")
                          : nullptr;
    if (!arg)
      return false;
    if (!arg->is_number_integer() || arg->get<int64_t>() < 2 || arg->get<int64_t>() >= int64_t(dk.roles.size()) ||
        dk.roles[size_t(arg->get<int64_t>())] != "src")
      return o.fail(o.at("arg"), "expected the index of one of the kernel's src arguments");
    halo.arg = arg->get<int64_t>();
    auto step = [&](const char *key, std::string &command, std::string *symbol) {
      const json *sj = o.get(key);
      if (!sj)
        return false;
      Obj st(*sj, o.at(key), o.errorRef());
      if (symbol ? !st.only({"command", "symbol"}) || !st.str("symbol", *symbol) : !st.only({"command"}))
        return false;
      if (!st.str("command", command))
        return false;
      if (command.rfind("cmd.", 0) != 0)
        return st.fail(st.at("command"), "expected a command id (cmd....)");
      if (symbol && symbol->rfind("_mlir_ciface_", 0) != 0)
        return st.fail(st.at("symbol"), "expected a generated function's C interface (_mlir_ciface_...)");
      return true;
    };
    if (!step("pack", halo.packCommand, &halo.packSymbol) || !step("exchange", halo.exchangeCommand, nullptr) ||
        !step("unpack", halo.unpackCommand, &halo.unpackSymbol))
      return false;
    dk.halos.push_back(std::move(halo));
  }
  if (!dk.halos.empty() && dk.boundaryCommand.empty())
    return kj.fail(kj.at("commands"), "a kernel with a halo needs a boundary command");
  return true;
}

bool parseJsonDoc(std::string_view text, json &out, std::string &error) {
  std::string where, why;
  std::optional<json> j = input::parseJson(text, where, why);
  if (!j) {
    error = where == "$" ? why : fmt::format("{}: {}", where, why);
    return false;
  }
  out = std::move(*j);
  return true;
}

/// A non-negative dim and the element count so far, checked: the runtime
/// allocates from these numbers.
bool checkedDim(const json &d, const std::string &where, int64_t &out, std::string &error) {
  if (!d.is_number_integer()) {
    error = fmt::format("{}: expected a non-negative integer, found {}", where, typeName(d));
    return false;
  }
  if (d.is_number_unsigned() ? d.get<uint64_t>() > uint64_t(INT64_MAX) : d.get<int64_t>() < 0) {
    error = fmt::format("{}: expected a non-negative integer, found {}", where, d.dump());
    return false;
  }
  out = d.get<int64_t>();
  return true;
}

bool isIdentifier(std::string_view s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_'))
    return false;
  for (char c : s)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

/// A tensor entry's dtype (by name) and its `shape` array (at most 64 axes).
const json *dtypeAndShape(Obj &o, const std::string &dt, DType &out) {
  std::optional<DType> d = dtypeFromName(dt);
  if (!d) {
    o.fail(o.at("dtype"), fmt::format("unknown dtype '{}'", dt));
    return nullptr;
  }
  out = *d;
  const json *sh = o.array("shape");
  if (sh && sh->size() > 64) {
    o.fail(o.at("shape"), fmt::format("rank {} exceeds the limit of 64", sh->size()));
    return nullptr;
  }
  return sh;
}

bool parseSig(const json &j, const std::string &where, const std::set<std::string> &generics,
              bool isInput, TensorSig &out, std::string &error) {
  Obj o(j, where, error);
  std::string dt;
  if (!o.ok() || !o.only({"name", "dtype", "shape", "relation", "num_src"}) || !o.str("dtype", dt) ||
      !o.str("name", out.name, isInput) || !o.str("relation", out.relation, false) ||
      !o.str("num_src", out.numSrc, false))
    return false;
  const json *sh = dtypeAndShape(o, dt, out.dtype);
  if (!sh)
    return false;
  auto checkExpr = [&](const std::string &text, const std::string &at) {
    if (std::string why = dimexpr::checkSyntax(text); !why.empty())
      return o.fail(at, fmt::format("'{}' is not a dim expression: {}", text, why));
    for (const std::string &n : dimexpr::names(text))
      if (!generics.count(n))
        return o.fail(at, fmt::format("'{}' names '{}', which is not one of the entry's generics", text, n));
    return true;
  };
  for (size_t k = 0; k < sh->size(); ++k) {
    const json &dim = (*sh)[k];
    std::string at = elem(o.at("shape"), k);
    if (dim.is_string()) {
      if (!checkExpr(dim.get<std::string>(), at))
        return false;
      out.shape.emplace_back(dim.get<std::string>());
      continue;
    }
    int64_t v;
    if (!checkedDim(dim, at, v, error))
      return false;
    out.shape.emplace_back(v);
  }
  if (!out.numSrc.empty() && !checkExpr(out.numSrc, o.at("num_src")))
    return false;
  if (!out.relation.empty() && (out.dtype != DType::I64 || out.shape.size() != 1))
    return o.fail(where, "a relation's row_ptr and col_idx are i64 vectors");
  return true;
}
} // namespace

const ArtifactFileEntry *ArtifactManifest::find(std::string_view path) const {
  for (const ArtifactFileEntry &f : files)
    if (f.path == path)
      return &f;
  return nullptr;
}

std::string checkArtifactPath(std::string_view path) {
  if (path.empty())
    return "an empty path";
  if (path.size() > 4096)
    return "a path longer than 4096 characters";
  if (path.front() == '/')
    return "an absolute path (files of an artifact are relative to its directory)";
  for (char c : path)
    if (c == '\\' || static_cast<unsigned char>(c) < 0x20)
      return "a path with a backslash or a control character";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (part.empty())
      return "a path with an empty component ('//' or a trailing '/')";
    if (part == "..")
      return "a path with '..' (files of an artifact stay inside its directory)";
    if (part == ".")
      return "a path with a '.' component";
    start = end + 1;
  }
  return "";
}

bool parseArtifactManifest(std::string_view text, ArtifactManifest &out, std::string &error) {
  json j;
  if (!parseJsonDoc(text, j, error))
    return false;
  Obj o(j, "$", error);
  std::string schema;
  if (!o.str("schema", schema))
    return false;
  if (schema != kArtifactManifestSchema)
    return o.fail(o.at("schema"), fmt::format("unsupported manifest schema '{}' (this runtime reads {})",
                                              schema, kArtifactManifestSchema));
  if (const json *abi = o.get("abi", false)) {
    Obj a(*abi, o.at("abi"), error);
    std::string runtimeAbi;
    if (!a.str("runtime_abi", runtimeAbi, false))
      return false;
    if (!runtimeAbi.empty() && !runtimeAbiKnown(runtimeAbi))
      return a.fail(a.at("runtime_abi"), fmt::format("unsupported runtime ABI '{}' (this runtime implements {})",
                                                     runtimeAbi, knownRuntimeAbis()));
  }
  // The build's policies: optional names, each one of the two this runtime knows.
  auto policy = [&](const char *key, const char *what, std::string &value, const char *a, const char *b) {
    if (!o.get(key, false))
      return true;
    if (!o.str(key, value))
      return false;
    if (value != a && value != b)
      return o.fail(o.at(key), fmt::format("unknown {} '{}' (this runtime knows {}, {})", what, value, a, b));
    return true;
  };
  if (!policy("numerics", "numerics policy", out.numerics, "as-written", "f32-compute") ||
      !policy("matmul_precision", "matmul precision", out.matmulPrecision, "highest", "tf32") ||
      !policy("block_products", "block products", out.blockProducts, "exact", "int8"))
    return false;
  const bool listsFiles = o.get("files", false) != nullptr;
  const json *files = o.ok() ? o.array("files") : nullptr;
  if (!files) {
    if (!listsFiles && !error.empty())
      error += " (the manifest lists no files with digests: a plan's manifest, not a built artifact's; "
               "rebuild the artifact)";
    return false;
  }
  if (!o.str("library", out.library))
    return false;
  std::set<std::string> seen;
  for (size_t i = 0; i < files->size(); ++i) {
    Obj f((*files)[i], elem(o.at("files"), i), error);
    ArtifactFileEntry e;
    if (!f.ok() || !f.only({"path", "sha256", "bytes"}) || !f.str("path", e.path) || !f.str("sha256", e.sha256))
      return false;
    if (std::string why = checkArtifactPath(e.path); !why.empty())
      return f.fail(f.at("path"), fmt::format("'{}' is {}", input::dumpJson(e.path), why));
    if (!seen.insert(e.path).second)
      return f.fail(f.at("path"), fmt::format("'{}' is listed twice", e.path));
    bool hex = e.sha256.size() == 64;
    for (char c : e.sha256)
      hex = hex && ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'));
    if (!hex)
      return f.fail(f.at("sha256"), "expected 64 lowercase hex digits (a SHA-256)");
    const json *b = f.get("bytes");
    if (!b)
      return false;
    if (!b->is_number_unsigned() && !(b->is_number_integer() && b->get<int64_t>() >= 0))
      return f.fail(f.at("bytes"), fmt::format("expected a non-negative integer, found {}", typeName(*b)));
    e.bytes = b->get<uint64_t>();
    out.files.push_back(std::move(e));
  }
  if (!out.find(out.library))
    return o.fail(o.at("library"), fmt::format("'{}' is not one of the files the manifest lists",
                                               input::dumpJson(out.library)));
  return true;
}

bool parseArtifactInfo(std::string_view text, ArtifactInfo &out, std::string &error) {
  json j;
  if (!parseJsonDoc(text, j, error))
    return false;
  Obj o(j, "$", error);
  if (!o.only({"abi", "library", "tensors", "entries", "checks", "variants", "profile", "distributed", "device",
               "cpu", "workspace", "layouts"}) ||
      !o.str("abi", out.abi) || !o.str("library", out.library))
    return false;
  if (!runtimeAbiKnown(out.abi))
    return o.fail(o.at("abi"), fmt::format("unsupported ABI '{}' (this runtime implements {})", out.abi,
                                           knownRuntimeAbis()));
  // The device backend's own description (its kernel table, its module):
  // kept as text for the backend, which reads it strictly.
  if (const json *dev = o.get("device", false)) {
    if (out.abi == kCpuRuntimeAbi)
      return o.fail(o.at("device"), fmt::format("an artifact of ABI {} has no device part", out.abi));
    if (!dev->is_object())
      return o.fail(o.at("device"), fmt::format("expected an object, found {}", typeName(*dev)));
    out.device = dev->dump();
  } else if (out.abi != kCpuRuntimeAbi) {
    return o.fail(o.at("abi"), fmt::format("an artifact of ABI {} needs its 'device' description", out.abi));
  }
  if (const json *c = o.get("cpu", false)) {
    Obj co(*c, o.at("cpu"), error);
    CpuRequirement req;
    const json *features = co.ok() && co.only({"arch", "name", "features"}) && co.str("arch", req.arch) &&
                                   co.str("name", req.name)
                               ? co.array("features")
                               : nullptr;
    if (!features)
      return false;
    for (size_t k = 0; k < features->size(); ++k) {
      const json &f = (*features)[k];
      if (!f.is_string() || f.get<std::string>().empty())
        return co.fail(elem(co.at("features"), k), "expected a feature name");
      req.features.push_back(f.get<std::string>());
    }
    out.cpu = std::move(req);
  } else if (!o.ok()) {
    return false;
  }
  if (const json *w = o.get("workspace", false)) {
    Obj wo(*w, o.at("workspace"), error);
    const json *entries = wo.ok() && wo.only({"entries"}) ? wo.get("entries") : nullptr;
    if (!entries)
      return false;
    if (!entries->is_object())
      return wo.fail(wo.at("entries"), fmt::format("expected an object, found {}", typeName(*entries)));
    for (const auto &[name, bytes] : entries->items()) {
      if (bytes.is_null()) {
        out.workspacePeak[name] = std::nullopt;
        continue;
      }
      if (!bytes.is_number_unsigned())
        return wo.fail(input::pathKey(wo.at("entries"), name),
                       fmt::format("expected a byte count or null, found {}", typeName(bytes)));
      out.workspacePeak[name] = bytes.get<uint64_t>();
    }
  } else if (!o.ok()) {
    return false;
  }
  if (const json *v = o.array("variants", false)) {
    for (size_t k = 0; k < v->size(); ++k) {
      const json &n = (*v)[k];
      std::string why = n.is_string() ? checkArtifactPath(n.get<std::string>()) : "expected a file name";
      if (why.empty() && n.get<std::string>().find(".json") == std::string::npos)
        why = "expected a runtime description (.json)";
      if (!why.empty())
        return o.fail(elem(o.at("variants"), k), why);
      out.variants.push_back(n.get<std::string>());
    }
  } else if (!o.ok()) {
    return false;
  }
  if (const json *pr = o.get("profile", false)) {
    Obj p(*pr, o.at("profile"), error);
    const json *tasks = p.ok() && p.only({"tasks"}) ? p.array("tasks") : nullptr;
    if (!tasks)
      return false;
    std::set<std::string> seen;
    for (size_t k = 0; k < tasks->size(); ++k) {
      const json &t = (*tasks)[k];
      if (!t.is_string() || t.get<std::string>().empty())
        return p.fail(elem(p.at("tasks"), k), "expected a task id");
      if (!seen.insert(t.get<std::string>()).second)
        return p.fail(elem(p.at("tasks"), k), fmt::format("task '{}' is listed twice", t.get<std::string>()));
      out.profileTasks.push_back(t.get<std::string>());
    }
  } else if (!o.ok()) {
    return false;
  }
  if (const json *dj = o.get("distributed", false)) {
    Obj d(*dj, o.at("distributed"), error);
    const json *ranks = d.ok() && d.only({"ranks", "kernels"}) ? d.get("ranks") : nullptr;
    const json *kernels = ranks ? d.array("kernels") : nullptr;
    if (!kernels)
      return false;
    if (!ranks->is_number_integer() || ranks->get<int64_t>() < 1 || ranks->get<int64_t>() > 4096)
      return d.fail(d.at("ranks"), "expected a rank count from 1 to 4096");
    ArtifactInfo::Distributed dist;
    dist.ranks = ranks->get<int64_t>();
    for (size_t k = 0; k < kernels->size(); ++k) {
      Obj kj((*kernels)[k], elem(d.at("kernels"), k), error);
      ArtifactInfo::DistributedKernel dk;
      const json *roles = kj.ok() && kj.only({"name", "symbol", "roles", "ranks", "elem_bytes", "commands", "halo"}) &&
                                  kj.str("name", dk.name) && kj.str("symbol", dk.symbol)
                              ? kj.array("roles")
                              : nullptr;
      const json *ranksj = roles ? kj.array("ranks") : nullptr;
      const json *bytesj = ranksj ? kj.array("elem_bytes") : nullptr;
      if (!bytesj)
        return false;
      if (ranksj->size() != roles->size() || bytesj->size() != roles->size())
        return kj.fail(kj.at("ranks"), "expected a rank and an element size per argument");
      for (size_t r = 0; r < roles->size(); ++r) {
        const json &rk = (*ranksj)[r], &eb = (*bytesj)[r];
        if (!rk.is_number_integer() || rk.get<int64_t>() < 1 || rk.get<int64_t>() > 8)
          return kj.fail(elem(kj.at("ranks"), r), "expected a memref rank from 1 to 8");
        if (!eb.is_number_integer() || eb.get<int64_t>() < 1 || eb.get<int64_t>() > 16)
          return kj.fail(elem(kj.at("elem_bytes"), r), "expected an element size from 1 to 16 bytes");
        dk.ranks.push_back(rk.get<int64_t>());
        dk.elemBytes.push_back(eb.get<int64_t>());
      }
      if (dk.symbol != "_mlir_ciface_" + dk.name)
        return kj.fail(kj.at("symbol"), fmt::format("expected '_mlir_ciface_{}'", dk.name));
      static const std::set<std::string> known = {"row_ptr", "col_idx", "src", "edge", "dst", "out"};
      for (size_t r = 0; r < roles->size(); ++r) {
        const json &role = (*roles)[r];
        if (!role.is_string() || !known.count(role.get<std::string>()))
          return kj.fail(elem(kj.at("roles"), r), "expected row_ptr, col_idx, src, edge, dst or out");
        dk.roles.push_back(role.get<std::string>());
      }
      if (dk.roles.size() < 3 || dk.roles[0] != "row_ptr" || dk.roles[1] != "col_idx" || dk.roles.back() != "out")
        return kj.fail(kj.at("roles"), "expected row_ptr, col_idx, the inputs, then the outputs");
      if (!readDistributedCommands(kj, dk))
        return false;
      dist.kernels.push_back(std::move(dk));
    }
    out.distributed = std::move(dist);
  } else if (!o.ok()) {
    return false;
  }
  const json *tensors = o.array("tensors");
  const json *entries = tensors ? o.array("entries") : nullptr;
  if (!entries)
    return false;
  std::set<std::string> paths;
  for (size_t i = 0; i < tensors->size(); ++i) {
    Obj t((*tensors)[i], elem(o.at("tensors"), i), error);
    ModelTensor mt;
    std::string kind, dt;
    if (!t.ok() || !t.only({"path", "kind", "dtype", "shape", "optional", "present", "block", "required"}) ||
        !t.str("path", mt.path) || !t.str("kind", kind) || !t.str("dtype", dt) ||
        !t.boolean("optional", mt.optional, false) || !t.boolean("present", mt.present, false) ||
        !t.str("block", mt.block, false) || !t.boolean("required", mt.required, false))
      return false;
    if (mt.path.empty())
      return t.fail(t.at("path"), "empty");
    if (!paths.insert(mt.path).second)
      return t.fail(t.at("path"), fmt::format("'{}' is listed twice", mt.path));
    if (kind == "param")
      mt.kind = TensorKind::Param;
    else if (kind == "buffer")
      mt.kind = TensorKind::Buffer;
    else if (kind == "state")
      mt.kind = TensorKind::State;
    else
      return t.fail(t.at("kind"), fmt::format("expected param, buffer or state, found '{}'", kind));
    // A param stored in a block format: bytes, a whole number of blocks a row.
    std::optional<BlockFormatInfo> bf = blockFormat(dt);
    if (bf) {
      if (mt.kind != TensorKind::Param)
        return t.fail(t.at("dtype"), fmt::format("only a param may be stored as {}", dt));
      mt.storage = bf->format;
    }
    const json *sh = dtypeAndShape(t, mt.storage ? std::string("u8") : dt, mt.dtype);
    if (!sh)
      return false;
    // State is allocated by the runtime: its size must be representable.
    uint64_t bytes = dtypeSize(mt.dtype);
    for (size_t k = 0; k < sh->size(); ++k) {
      int64_t v;
      if (!checkedDim((*sh)[k], elem(t.at("shape"), k), v, error))
        return false;
      mt.shape.push_back(v);
      if (__builtin_mul_overflow(bytes, uint64_t(v), &bytes) || bytes > (uint64_t(1) << 62))
        return t.fail(t.at("shape"), fmt::format("{}{} is too large (more than 2^62 bytes)", dt, shapeString(mt.shape)));
    }
    if (mt.storage && (mt.shape.empty() || mt.shape.back() % bf->blockElems != 0))
      return t.fail(t.at("shape"), fmt::format("{} stores rows of whole blocks of {} values, found {}", dt,
                                               bf->blockElems, shapeString(mt.shape)));
    if (!mt.optional && !mt.present)
      return t.fail(t.at("present"), "a required tensor cannot be absent");
    out.tensors.push_back(std::move(mt));
  }
  // Params the entries read in another layout than the file's: a q4_0
  // param's rows in groups of eight, which the runtime repacks when it binds.
  if (const json *l = o.get("layouts", false)) {
    if (!l->is_object())
      return o.fail(o.at("layouts"), fmt::format("expected an object, found {}", typeName(*l)));
    for (const auto &[path, layout] : l->items()) {
      std::string at = input::pathKey(o.at("layouts"), path);
      auto t = std::find_if(out.tensors.begin(), out.tensors.end(), [&](const ModelTensor &t) { return t.path == path; });
      if (t == out.tensors.end())
        return o.fail(at, fmt::format("no tensor '{}' in 'tensors'", path));
      if (!layout.is_string() || layout.get<std::string>() != "q4_0x8")
        return o.fail(at, fmt::format("unknown layout {} (expected \"q4_0x8\")", layout.dump()));
      if (t->storage != BlockFormat::Q4_0 || t->shape.size() != 2 || t->shape[0] % 8 != 0)
        return o.fail(at, fmt::format("q4_0x8 takes a q4_0 param of rows a multiple of 8, found {}{}",
                                      t->storage ? blockFormatInfo(*t->storage).name : dtypeName(t->dtype),
                                      shapeString(t->shape)));
      t->layout = layout.get<std::string>();
    }
  } else if (!o.ok()) {
    return false;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < entries->size(); ++i) {
    std::string where = elem(o.at("entries"), i);
    Obj e((*entries)[i], where, error);
    EntrySig sig;
    if (!e.ok() || !e.only({"name", "symbol", "generics", "inputs", "results", "where"}) || !e.str("name", sig.name) ||
        !e.str("symbol", sig.symbol))
      return false;
    if (!isIdentifier(sig.name))
      return e.fail(e.at("name"), fmt::format("'{}' is not an entry name", input::dumpJson(sig.name)));
    if (!names.insert(sig.name).second)
      return e.fail(e.at("name"), fmt::format("entry '{}' is listed twice", sig.name));
    // Only the ABI's own symbols may be called: never an arbitrary one.
    if (sig.symbol != "linnet_entry_" + sig.name)
      return e.fail(e.at("symbol"), fmt::format("expected 'linnet_entry_{}' (the ABI's symbol of entry '{}'), "
                                                "found '{}'",
                                                sig.name, sig.name, input::dumpJson(sig.symbol)));
    std::set<std::string> generics;
    if (const json *g = e.array("generics", false)) {
      for (size_t k = 0; k < g->size(); ++k) {
        const json &n = (*g)[k];
        if (!n.is_string() || !isIdentifier(n.get<std::string>()))
          return e.fail(elem(e.at("generics"), k), "expected a generic's name");
        if (!generics.insert(n.get<std::string>()).second)
          return e.fail(elem(e.at("generics"), k), fmt::format("'{}' is listed twice", n.get<std::string>()));
        sig.generics.push_back(n.get<std::string>());
      }
    } else if (!e.ok()) {
      return false;
    }
    for (const char *list : {"inputs", "results"}) {
      const json *a = e.array(list);
      if (!a)
        return false;
      bool isInput = std::string(list) == "inputs";
      for (size_t k = 0; k < a->size(); ++k) {
        TensorSig s;
        if (!parseSig((*a)[k], elem(e.at(list), k), generics, isInput, s, error))
          return false;
        (isInput ? sig.inputs : sig.results).push_back(std::move(s));
      }
    }
    if (const json *w = e.array("where", false)) {
      // A constraint names generics and integer inputs (a tensor's element
      // by element).
      std::set<std::string> known = generics;
      for (const TensorSig &in : sig.inputs)
        if (in.relation.empty() && (in.dtype == DType::U8 || in.dtype == DType::I8 || in.dtype == DType::I16 ||
                                  in.dtype == DType::I32 || in.dtype == DType::I64))
          known.insert(in.name);
      for (size_t k = 0; k < w->size(); ++k) {
        Obj c((*w)[k], elem(e.at("where"), k), error);
        WhereSig ws;
        if (!c.ok() || !c.only({"lhs", "op", "rhs", "text"}) || !c.str("op", ws.op) || !c.str("text", ws.text))
          return false;
        static const std::set<std::string> ops = {"==", "!=", "<", "<=", ">", ">="};
        if (!ops.count(ws.op))
          return c.fail(c.at("op"), fmt::format("expected a comparison, found '{}'", input::dumpJson(ws.op)));
        for (auto [key, dst] : {std::pair{"lhs", &ws.lhs}, std::pair{"rhs", &ws.rhs}}) {
          const json *d = c.get(key);
          if (!d)
            return false;
          if (d->is_number_integer() &&
              (!d->is_number_unsigned() || d->get<uint64_t>() <= uint64_t(INT64_MAX))) {
            *dst = d->get<int64_t>();
            continue;
          }
          if (!d->is_string())
            return c.fail(c.at(key), fmt::format("expected an integer or a dim expression, found {}", typeName(*d)));
          std::string text = d->get<std::string>();
          if (std::string why = dimexpr::checkSyntax(text); !why.empty())
            return c.fail(c.at(key), fmt::format("'{}' is not a dim expression: {}", input::dumpJson(text), why));
          for (const std::string &n : dimexpr::names(text))
            if (!known.count(n))
              return c.fail(c.at(key), fmt::format("'{}' names '{}', which is neither a generic nor an integer "
                                                   "scalar input of the entry",
                                                   text, n));
          *dst = std::move(text);
        }
        sig.where.push_back(std::move(ws));
      }
    } else if (!e.ok()) {
      return false;
    }
    out.entries.push_back(std::move(sig));
  }
  if (const json *cs = o.array("checks", false)) {
    for (size_t i = 0; i < cs->size(); ++i) {
      Obj c((*cs)[i], elem(o.at("checks"), i), error);
      CheckInfo ci;
      const json *id = c.get("id");
      if (!c.ok() || !c.only({"id", "kind", "loc", "tensor", "axis"}) || !id || !c.str("kind", ci.kind) ||
          !c.str("loc", ci.loc, false) || !c.str("tensor", ci.tensor, false))
        return false;
      if (ci.kind != "index" && ci.kind != "division")
        return c.fail(c.at("kind"), fmt::format("expected index or division, found '{}'", input::dumpJson(ci.kind)));
      if (!id->is_number_integer() || id->get<int64_t>() <= 0)
        return c.fail(c.at("id"), "expected a positive integer");
      if (const json *a = c.get("axis", false)) {
        if (!a->is_number_integer() || a->get<int64_t>() < 0 || a->get<int64_t>() >= 64)
          return c.fail(c.at("axis"), "expected an axis number (0 to 63)");
        ci.axis = a->get<int64_t>();
      }
      if (!out.checks.emplace(id->get<int64_t>(), std::move(ci)).second)
        return c.fail(c.at("id"), fmt::format("check {} is listed twice", id->get<int64_t>()));
    }
  } else if (!o.ok()) {
    return false;
  }
  return true;
}

} // namespace linnet::rt
