//===- Instantiate.cpp - Root block instantiation and the manifest --------===//
#include "SemaImpl.h"
#include "linnet/Sema/Instantiate.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <fmt/ranges.h>
#include <iostream>

using namespace linnet;
using namespace linnet::sema;

const BlockInfo *linnet::sema::findRootBlock(const Program &p, const std::string &name,
                                             DiagnosticEngine &diag) {
  std::vector<const BlockInfo *> blocks, pubBlocks;
  for (auto &n : p.root->nominals)
    if (n->kind == NominalInfo::Kind::Block) {
      blocks.push_back(static_cast<const BlockInfo *>(n.get()));
      if (n->pub)
        pubBlocks.push_back(blocks.back());
    }
  SourceLoc loc{p.root->buffer, 0};
  if (!name.empty()) {
    for (const BlockInfo *b : blocks)
      if (b->name == name)
        return b;
    std::string names;
    for (const BlockInfo *b : blocks)
      names += (names.empty() ? "" : ", ") + b->name;
    diag.error(loc, fmt::format("module '{}' has no block '{}' (blocks: {})", p.root->name, name,
                                names.empty() ? "none" : names));
    return nullptr;
  }
  if (pubBlocks.size() == 1)
    return pubBlocks[0];
  if (pubBlocks.empty() && blocks.size() == 1)
    return blocks[0];
  std::string names;
  for (const BlockInfo *b : pubBlocks.empty() ? blocks : pubBlocks)
    names += (names.empty() ? "" : ", ") + b->name;
  diag.error(loc, fmt::format("cannot choose a root block in module '{}' ({}): pass --root "
                              "Block",
                              p.root->name, names.empty() ? "it has no blocks" : names));
  return nullptr;
}

namespace {

class Instantiator {
public:
  explicit Instantiator(DiagnosticEngine &diag, Instantiation &out) : diag_(diag), out_(out) {}

  bool checkConstraints(const BlockInfo &b, const Bindings &bind, SourceLoc at,
                        const std::string &path) {
    bool ok = true;
    for (const Constraint &c : b.constraints) {
      Dim::OverflowCheck check;
      Constraint s{substDim(c.lhs, bind), substDim(c.rhs, bind), c.op, c.loc};
      if (check.overflowed()) {
        diag_.error(at, fmt::format("constraint '{}' of block '{}' overflows 64-bit integers for {}",
                                    c.str(), b.name, path.empty() ? "the root" : "'" + path + "'"));
        diag_.note(c.loc, "constraint declared here");
        ok = false;
        continue;
      }
      std::optional<bool> v = evalConstraint(s);
      if (v && *v)
        continue;
      std::vector<const Atom *> syms;
      c.lhs.collectSymbols(syms);
      c.rhs.collectSymbols(syms);
      std::string with;
      for (const Atom *a : syms) {
        auto it = bind.find(a->id);
        if (it != bind.end())
          with += (with.empty() ? "" : ", ") + a->name + " = " + it->second.str();
      }
      diag_.error(at, fmt::format("constraint '{}' of block '{}' {} for {} with {}", c.str(),
                                  b.name, v ? "does not hold" : "cannot be decided",
                                  path.empty() ? "the root" : "'" + path + "'", with));
      diag_.note(c.loc, "constraint declared here");
      ok = false;
    }
    return ok;
  }

  void overflow(SourceLoc at, const std::string &what, const std::string &type,
                const std::string &prefix) {
    diag_.error(at, fmt::format("{} has type {}, whose dimensions overflow 64-bit integers with "
                                "these generics (at '{}')",
                                what, type, prefix.empty() ? "the root" : prefix.substr(0, prefix.size() - 1)));
  }

  /// Bytes of one element of concrete dtype `d`; 0 when not known here
  /// (a dtype generic).
  static uint64_t elementBytes(const Dtype &d) {
    if (d.isVar())
      return 0;
    const std::string &n = d.name;
    if (n == "bool" || n == "u8" || n == "i8")
      return 1;
    if (n == "i16" || n == "f16" || n == "bf16")
      return 2;
    if (n == "i32" || n == "f32")
      return 4;
    if (n == "i64" || n == "f64" || n == "index")
      return 8;
    return 0;
  }

  /// A tensor type whose dims are all known (after -D) must have a byte
  /// size that fits a signed 64-bit integer: its buffer's size and every
  /// offset past it are one. Reports `what` (naming the tensor) otherwise.
  bool checkBytes(SourceLoc at, const std::string &what, const std::string &declared, const Type &t,
                  const std::string &prefix) {
    const Type *inner = &t;
    while ((inner->kind == Type::Kind::Optional || inner->kind == Type::Kind::Array) && !inner->elems.empty())
      inner = inner->elems[0].get();
    if (inner->kind != Type::Kind::Tensor)
      return true;
    uint64_t bytes = elementBytes(inner->dtype);
    if (bytes == 0)
      return true;
    std::vector<std::string> dims;
    bool overflow = false;
    for (const Unit &u : inner->shape) {
      std::optional<int64_t> n = u.isPack() ? std::nullopt : u.dim.constant();
      if (!n || *n < 0)
        return true; // bound later (entry generics) or reported elsewhere
      overflow |= __builtin_mul_overflow(bytes, static_cast<uint64_t>(*n), &bytes);
      dims.push_back(std::to_string(*n));
    }
    if (!overflow && bytes <= static_cast<uint64_t>(INT64_MAX))
      return true;
    diag_.error(at, fmt::format("{} has type {}, {}[{}] with these generics, whose size in bytes overflows "
                                "64-bit integers (at '{}')",
                                what, declared, inner->dtype.str(), fmt::join(dims, ", "),
                                prefix.empty() ? "the root" : prefix.substr(0, prefix.size() - 1)));
    return false;
  }

  /// A block-quantized dtype (q8_0, q4_0) is storage only: a param's
  /// elements may have it, read one at a time and converted (`w[o, i] as
  /// f32`); its last axis holds whole blocks. Anything else with it (an
  /// activation bound to it, state, a function's parameter or result) is
  /// refused here, where the bindings are known.
  bool checkStorage(SourceLoc at, const std::string &what, const std::string &declared, const Type &t,
                    bool param, const std::string &prefix) {
    const Type *inner = &t;
    while ((inner->kind == Type::Kind::Optional || inner->kind == Type::Kind::Array) && !inner->elems.empty())
      inner = inner->elems[0].get();
    if ((inner->kind != Type::Kind::Tensor && inner->kind != Type::Kind::Scalar) || inner->dtype.isVar())
      return true;
    int64_t block = blockDtypeElems(inner->dtype.name);
    if (block == 0)
      return true;
    std::string at_ = prefix.empty() ? "the root" : prefix.substr(0, prefix.size() - 1);
    if (!param || inner->kind != Type::Kind::Tensor || inner->shape.empty()) {
      diag_.error(at, fmt::format("{} has type {}, {} with these generics: {} is a block-quantized storage "
                                  "format, which only a param tensor's elements may have (read them with "
                                  "`as f32`) (at '{}')",
                                  what, declared, inner->str(), inner->dtype.name, at_));
      return false;
    }
    const Unit &last = inner->shape.back();
    std::optional<int64_t> n = last.isPack() ? std::nullopt : last.dim.constant();
    if (n && *n % block != 0) {
      diag_.error(at, fmt::format("{} has type {}, {} with these generics: {} stores each row in blocks of "
                                  "{} values, and the last axis has {} (at '{}')",
                                  what, declared, inner->str(), inner->dtype.name, block, *n, at_));
      return false;
    }
    return true;
  }

  void visit(const BlockInfo &b, const Bindings &bind, const std::string &prefix,
             const std::vector<Dim> &repeat, bool optional, unsigned depth) {
    ++out_.instances;
    if (depth > 64) {
      diag_.error(b.members.empty() ? b.decl->loc : b.members[0].loc,
                  fmt::format("block '{}' is nested more than 64 levels deep: a block may not "
                              "contain itself",
                              b.name));
      return;
    }
    // Method signatures are instantiated by lowering; an overflow there
    // (`Tensor[N * N]` with N = 2^32) is reported here, where the bindings
    // are known, instead of wrapping to a wrong shape.
    for (const FunctionInfo *f : b.methods) {
      for (const ParamInfo &p : f->params) {
        Dim::OverflowCheck check;
        TypeRef t = substType(p.type, bind);
        std::string what = fmt::format("parameter '{}' of '{}.{}'", p.name, b.name, f->name);
        if (check.overflowed())
          overflow(p.loc, what, p.type->str(), prefix);
        else if (checkStorage(p.loc, what, p.type->str(), *t, false, prefix))
          checkBytes(p.loc, what, p.type->str(), *t, prefix);
      }
      if (f->result) {
        Dim::OverflowCheck check;
        TypeRef t = substType(f->result, bind);
        std::string what = fmt::format("the result of '{}.{}'", b.name, f->name);
        if (check.overflowed())
          overflow(f->decl->loc, what, f->result->str(), prefix);
        else if (t->kind == Type::Kind::Tuple)
          for (const TypeRef &e : t->elems) {
            if (checkStorage(f->decl->loc, what, f->result->str(), *e, false, prefix))
              checkBytes(f->decl->loc, what, f->result->str(), *e, prefix);
          }
        else if (checkStorage(f->decl->loc, what, f->result->str(), *t, false, prefix))
          checkBytes(f->decl->loc, what, f->result->str(), *t, prefix);
      }
    }
    for (const MemberInfo &m : b.members) {
      if (diag_.limitReached())
        return;
      Dim::OverflowCheck check;
      TypeRef t = substType(m.type, bind);
      if (check.overflowed()) {
        overflow(m.loc, fmt::format("{} '{}'", ast::spelling(m.kind), m.name), m.type->str(), prefix);
        continue;
      }
      if (m.kind != ast::MemberKind::Sub &&
          !checkStorage(m.loc, fmt::format("{} '{}'", ast::spelling(m.kind), m.name), m.type->str(), *t,
                        m.kind == ast::MemberKind::Param, prefix))
        continue;
      if (m.kind != ast::MemberKind::Sub &&
          !checkBytes(m.loc, fmt::format("{} '{}'", ast::spelling(m.kind), m.name), m.type->str(), *t, prefix))
        continue;
      bool opt = optional || t->kind == Type::Kind::Optional;
      const Type &inner = t->kind == Type::Kind::Optional ? *t->elems[0] : *t;
      if (m.kind != ast::MemberKind::Sub) {
        if (inner.kind != Type::Kind::Tensor && inner.kind != Type::Kind::Scalar)
          continue; // reported by Sema
        ManifestEntry e{prefix + m.name, m.kind, inner.dtype, inner.shape, repeat, opt};
        for (const Unit &u : e.shape)
          if (!u.isPack() && u.dim.constant() && *u.dim.constant() < 0)
            diag_.error(m.loc, fmt::format("{} '{}' has a negative dimension in {} (at '{}')",
                                           ast::spelling(m.kind), m.name, t->str(), e.path));
        out_.manifest.push_back(std::move(e));
        continue;
      }
      std::vector<Dim> rep = repeat;
      const Type *blk = &inner;
      std::string path = prefix + m.name;
      if (inner.kind == Type::Kind::Array) {
        if (std::optional<int64_t> n = inner.size.constant(); n && *n < 0) {
          diag_.error(m.loc, fmt::format("sub '{}' has a negative length {} (at '{}')", m.name,
                                         *n, path));
          continue;
        }
        rep.push_back(inner.size);
        blk = inner.elems[0].get();
        path += "[*]";
      }
      if (blk->kind != Type::Kind::Block)
        continue;
      auto *child = static_cast<const BlockInfo *>(blk->decl);
      Bindings cb = bindingsOf(child->generics, blk->args);
      if (!checkConstraints(*child, cb, m.loc, path))
        continue;
      visit(*child, cb, path + ".", rep, opt, depth + 1);
    }
  }

private:
  DiagnosticEngine &diag_;
  Instantiation &out_;
};

std::optional<GenericValue> parseDefine(const GenericParam &g, const std::string &v,
                                        std::string &err) {
  GenericValue r;
  r.kind = g.kind;
  auto parseInt = [&](std::string_view s, int64_t &x) {
    while (!s.empty() && s.front() == ' ')
      s.remove_prefix(1);
    while (!s.empty() && s.back() == ' ')
      s.remove_suffix(1);
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  switch (g.kind) {
  case ast::GenericKind::Dim: {
    int64_t x;
    if (!parseInt(v, x) || x < 0) {
      bool digits = !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
      err = digits ? fmt::format("dim generic '{}': '{}' does not fit in 64 bits (at most {})", g.name,
                                 v, INT64_MAX)
                   : fmt::format("dim generic '{}' needs a non-negative integer, found '{}'", g.name, v);
      return std::nullopt;
    }
    r.dim = x;
    return r;
  }
  case ast::GenericKind::Shape: {
    std::string_view s = v;
    if (s.size() < 2 || s.front() != '[' || s.back() != ']') {
      err = fmt::format("shape generic '{}' needs a shape such as [2,3], found '{}'", g.name, v);
      return std::nullopt;
    }
    s = s.substr(1, s.size() - 2);
    while (!s.empty()) {
      size_t c = s.find(',');
      int64_t x;
      if (!parseInt(s.substr(0, c), x) || x < 0) {
        err = fmt::format("shape generic '{}' needs non-negative integers, found '{}'", g.name, v);
        return std::nullopt;
      }
      r.shape.push_back(Unit{Dim(x), "", ""});
      s = c == std::string_view::npos ? std::string_view() : s.substr(c + 1);
    }
    return r;
  }
  case ast::GenericKind::Dtype:
    if (!isDtypeName(v)) {
      err = fmt::format("dtype generic '{}' needs a dtype such as f32, found '{}'", g.name, v);
      return std::nullopt;
    }
    if (!dtypeInClass(v, g.dtypeClass)) {
      err = fmt::format("dtype generic '{}' needs {} {} dtype, found '{}'", g.name, g.dtypeClass == "int" ? "an" : "a",
                        g.dtypeClass, v);
      return std::nullopt;
    }
    r.dtype = Dtype{v, ""};
    return r;
  }
  return std::nullopt;
}

} // namespace

std::optional<Instantiation>
linnet::sema::instantiate(const BlockInfo &root, const std::map<std::string, std::string> &defines,
                          DiagnosticEngine &diag) {
  Instantiation out;
  out.root = &root;
  SourceLoc loc = root.decl->name.loc;
  unsigned before = diag.errorCount();
  for (const auto &[name, value] : defines)
    if (std::none_of(root.generics.begin(), root.generics.end(),
                     [&](const GenericParam &g) { return g.name == name; }))
      diag.error(loc, fmt::format("-D {}: block '{}' has no generic '{}' (it has{})", name,
                                  root.name, name, [&] {
                                    std::string s;
                                    for (const GenericParam &g : root.generics)
                                      s += " " + g.name;
                                    return s.empty() ? std::string(" none") : s;
                                  }()));
  for (const GenericParam &g : root.generics) {
    auto it = defines.find(g.name);
    if (it != defines.end()) {
      std::string err;
      if (std::optional<GenericValue> v = parseDefine(g, it->second, err))
        out.rootArgs.push_back(*v);
      else {
        diag.error(loc, "-D " + g.name + ": " + err);
        out.rootArgs.push_back(GenericValue{g.kind, Dim(), {}, {}});
      }
      continue;
    }
    if (!g.defaultValue) {
      diag.error(g.loc, fmt::format("root block '{}': generic '{}' has no default; pass -D "
                                    "{}=<{}>",
                                    root.name, g.name, g.name, ast::spelling(g.kind)));
      out.rootArgs.push_back(GenericValue{g.kind, Dim(), {}, {}});
      continue;
    }
    out.rootArgs.push_back(substValue(*g.defaultValue, bindingsOf(root.generics, out.rootArgs)));
  }
  if (diag.errorCount() != before)
    return std::nullopt;
  Bindings b = bindingsOf(root.generics, out.rootArgs);
  Instantiator inst(diag, out);
  if (!inst.checkConstraints(root, b, loc, ""))
    return std::nullopt;
  inst.visit(root, b, "", {}, false, 0);
  if (diag.errorCount() != before)
    return std::nullopt;
  return out;
}
