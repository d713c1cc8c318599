//===- Sema.cpp - Module loading and declaration checking -----------------===//
//
// Phases, per module in dependency order: load (parse, follow imports,
// detect cycles), declare (items into the module's table), resolve imports
// (pub checked), resolve signatures (generics, constraints, member, field
// and parameter types). Bodies are checked afterwards (Check.cpp), once
// every signature in the program is known.
//
//===----------------------------------------------------------------------===//
#include "SemaImpl.h"

#include "linnet/Support/BlockFormat.h"
#include "linnet/Support/Paths.h"
#include "linnet/Syntax/Parser.h"

#include <filesystem>

using namespace linnet;
using namespace linnet::sema;
namespace fs = std::filesystem;

std::string linnet::sema::defaultStdlibDir() { return support::dataDir(); }

// Relation types are checked by the graph layers; Sema passes them through.
static const std::set<std::string> kOpaqueTypes = {"Csr", "Coo", "Relation"};

//===----------------------------------------------------------------------===//
// dtypes
//===----------------------------------------------------------------------===//

// The block formats (q8_0, q4_0, q4_K, q5_K, q6_K: support::kBlockFormats)
// are float dtypes too (docs/language/05-types.md, "Block-quantized
// storage"): values stored in blocks with their scales. Only a param's
// elements may have them.
static const char *const kFloat[] = {"f8e4m3", "f8e5m2", "f16", "bf16", "f32", "f64"};
static const char *const kInt[] = {"i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "index"};

int64_t linnet::sema::blockDtypeElems(const std::string &n) {
  std::optional<support::BlockFormatInfo> f = support::blockFormat(n);
  return f ? f->blockElems : 0;
}

bool linnet::sema::isDtypeName(const std::string &n) {
  for (const char *f : kFloat)
    if (n == f)
      return true;
  for (const char *i : kInt)
    if (n == i)
      return true;
  return n == "bool" || blockDtypeElems(n) != 0;
}
std::string linnet::sema::dtypeClassOf(const std::string &n) {
  for (const char *f : kFloat)
    if (n == f)
      return "float";
  if (blockDtypeElems(n) != 0)
    return "float";
  for (const char *i : kInt)
    if (n == i)
      return "int";
  return n == "bool" ? "bool" : "";
}

bool linnet::sema::dtypeInClass(const std::string &dtype, const std::string &cls) {
  if (cls.empty() || cls == "any")
    return true;
  // §4.3: `signed` is the signed integers.
  if (cls == "signed")
    return dtype == "i8" || dtype == "i16" || dtype == "i32" || dtype == "i64";
  return dtypeClassOf(dtype) == cls;
}
bool linnet::sema::classWithin(const std::string &inner, const std::string &outer) {
  auto norm = [](const std::string &c) { return c.empty() ? std::string("any") : c; };
  std::string i = norm(inner), o = norm(outer);
  return o == "any" || i == o || (i == "signed" && o == "int");
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Analyzer::Analyzer(SourceManager &sm, DiagnosticEngine &diag, const SemaOptions &opts,
                   Program &prog)
    : sm_(sm), diag_(diag), opts_(opts), prog_(prog) {}

ModuleInfo *Analyzer::loadRoot(uint32_t buffer, const std::string &file) {
  std::error_code ec;
  fs::path dir = fs::path(file).parent_path();
  roots_.push_back(dir.empty() ? "." : dir.string());
  for (const std::string &d : opts_.includeDirs)
    roots_.push_back(d);
  if (!opts_.stdlibDir.empty())
    roots_.push_back(opts_.stdlibDir);

  auto m = std::make_unique<ModuleInfo>();
  m->file = file;
  m->buffer = buffer;
  m->ast = parseModule(sm_, buffer, diag_);
  m->name = m->ast->path.empty() ? fs::path(file).stem().string() : ast::joinPath(m->ast->path);
  ModuleInfo *mp = m.get();
  prog_.root = mp;
  prog_.modules.push_back(std::move(m));
  stack_.push_back(mp->name);
  loadImports(*mp);
  stack_.pop_back();
  declare(*mp);
  return mp;
}

void Analyzer::loadImports(ModuleInfo &m) {
  for (const ast::Import &imp : m.ast->imports) {
    std::string name = ast::joinPath(imp.path);
    if (ModuleInfo *done = prog_.find(name)) {
      if (std::find(stack_.begin(), stack_.end(), name) != stack_.end()) {
        std::string cycle;
        bool on = false;
        for (const std::string &s : stack_) {
          on |= s == name;
          if (on)
            cycle += s + " -> ";
        }
        // Reported at the root's import that leads into the cycle: that is the
        // file the user asked about.
        diag_.error(importLocs_.empty() ? imp.loc : importLocs_.front(),
                    fmt::format("import cycle: {}{}", cycle, name));
        failedImports_.insert(&imp);
      }
      (void)done;
      continue;
    }
    std::string rel;
    for (size_t i = 0; i < imp.path.size(); ++i)
      rel += (i ? "/" : "") + imp.path[i].name;
    rel += ".ln";
    std::string found;
    std::error_code ec;
    for (const std::string &r : roots_)
      if (fs::is_regular_file(fs::path(r) / rel, ec)) {
        found = (fs::path(r) / rel).lexically_normal().string();
        break;
      }
    if (found.empty()) {
      std::string where;
      for (const std::string &r : roots_)
        where += (where.empty() ? "" : ", ") + r;
      diag_.error(imp.loc, fmt::format("cannot find module '{}': no file '{}' under {}",
                                       name, rel, where));
      failedImports_.insert(&imp);
      continue;
    }
    std::string err;
    std::optional<uint32_t> buf = sm_.addFile(found, err);
    if (!buf) {
      diag_.error(imp.loc, fmt::format("cannot read module '{}' ({}): {}", name, found, err));
      failedImports_.insert(&imp);
      continue;
    }
    auto nm = std::make_unique<ModuleInfo>();
    nm->file = found;
    nm->buffer = *buf;
    nm->name = name;
    nm->ast = parseModule(sm_, *buf, diag_);
    if (nm->ast->path.empty())
      diag_.error(imp.loc, fmt::format("'{}' has no 'module {}' line", found, name));
    else if (ast::joinPath(nm->ast->path) != name)
      diag_.error(imp.loc, fmt::format("file '{}' is imported as module '{}' but "
                                            "declares 'module {}'",
                                            found, name, ast::joinPath(nm->ast->path)));
    ModuleInfo *mp = nm.get();
    prog_.modules.push_back(std::move(nm));
    stack_.push_back(name);
    importLocs_.push_back(imp.loc);
    loadImports(*mp);
    importLocs_.pop_back();
    stack_.pop_back();
    declare(*mp);
  }
}

//===----------------------------------------------------------------------===//
// Declaring items and resolving imports
//===----------------------------------------------------------------------===//

void Analyzer::addItem(ModuleInfo &m, const std::string &name, SourceLoc loc, Symbol s) {
  auto [it, inserted] = m.items.emplace(name, s);
  if (!inserted)
    diag_.error(loc, fmt::format("'{}' is already declared in module '{}'", name, m.name));
}

void Analyzer::declare(ModuleInfo &m) {
  for (const ast::DeclPtr &dp : m.ast->decls) {
    const ast::Decl &d = *dp;
    switch (d.kind) {
    case ast::Decl::Kind::Block: {
      auto b = std::make_unique<BlockInfo>();
      b->kind = NominalInfo::Kind::Block;
      b->name = d.name.name, b->module = &m, b->decl = &d, b->pub = d.isPub;
      addItem(m, d.name.name, d.name.loc, {Symbol::Kind::Block, b.get(), d.isPub});
      for (const ast::DeclPtr &inner : llvm::cast<ast::BlockDecl>(d).body)
        if (auto *f = llvm::dyn_cast<ast::FunctionDecl>(inner.get())) {
          auto fi = std::make_unique<FunctionInfo>();
          fi->name = f->name.name, fi->kind = f->fnKind, fi->module = &m, fi->block = b.get();
          fi->decl = f, fi->pub = f->isPub;
          for (FunctionInfo *prev : b->methods)
            if (prev->name == fi->name)
              diag_.error(f->name.loc, fmt::format("block '{}' already has a function '{}'",
                                                   b->name, fi->name));
          b->methods.push_back(fi.get());
          m.functions.push_back(std::move(fi));
        }
      m.nominals.push_back(std::move(b));
      break;
    }
    case ast::Decl::Kind::Struct:
    case ast::Decl::Kind::Enum:
    case ast::Decl::Kind::Reducer: {
      std::unique_ptr<NominalInfo> n;
      Symbol::Kind sk;
      if (d.kind == ast::Decl::Kind::Struct) {
        n = std::make_unique<StructInfo>();
        n->kind = NominalInfo::Kind::Struct;
        sk = Symbol::Kind::Struct;
      } else if (d.kind == ast::Decl::Kind::Enum) {
        n = std::make_unique<EnumInfo>();
        n->kind = NominalInfo::Kind::Enum;
        sk = Symbol::Kind::Enum;
      } else {
        n = std::make_unique<NominalInfo>();
        n->kind = NominalInfo::Kind::Reducer;
        sk = Symbol::Kind::Reducer;
      }
      n->name = d.name.name, n->module = &m, n->decl = &d, n->pub = d.isPub;
      addItem(m, d.name.name, d.name.loc, {sk, n.get(), d.isPub});
      m.nominals.push_back(std::move(n));
      break;
    }
    case ast::Decl::Kind::Function: {
      auto &f = llvm::cast<ast::FunctionDecl>(d);
      auto fi = std::make_unique<FunctionInfo>();
      fi->name = f.name.name, fi->kind = f.fnKind, fi->module = &m, fi->decl = &f;
      fi->pub = f.isPub;
      addItem(m, f.name.name, f.name.loc, {Symbol::Kind::Function, fi.get(), f.isPub});
      m.functions.push_back(std::move(fi));
      break;
    }
    case ast::Decl::Kind::Const: {
      auto ci = std::make_unique<ConstInfo>();
      ci->name = d.name.name, ci->module = &m;
      ci->decl = &llvm::cast<ast::ConstDecl>(d), ci->pub = d.isPub;
      addItem(m, d.name.name, d.name.loc, {Symbol::Kind::Const, ci.get(), d.isPub});
      m.consts.push_back(std::move(ci));
      break;
    }
    case ast::Decl::Kind::Member:
      break; // the parser rejects members outside blocks
    }
  }
  m.scope = m.items;
  for (const ast::Import &imp : m.ast->imports) {
    if (failedImports_.count(&imp))
      continue;
    ModuleInfo *target = prog_.find(ast::joinPath(imp.path));
    if (!target)
      continue;
    auto bind = [&](const std::string &n, Symbol s, SourceLoc loc) {
      if (m.items.count(n)) {
        diag_.error(loc, fmt::format("import of '{}' clashes with an item of the same "
                                     "name in module '{}'",
                                     n, m.name));
        return;
      }
      m.scope[n] = s;
    };
    if (imp.hasItems) {
      for (const ast::ImportItem &item : imp.items) {
        auto it = target->items.find(item.name.name);
        if (it == target->items.end()) {
          diag_.error(item.name.loc, fmt::format("module '{}' has no item '{}'",
                                                 target->name, item.name.name));
          continue;
        }
        if (!it->second.pub) {
          diag_.error(item.name.loc,
                      fmt::format("'{}' is private to module '{}': mark it 'pub' to "
                                  "import it",
                                  item.name.name, target->name));
          continue;
        }
        bind(item.alias.name.empty() ? item.name.name : item.alias.name, it->second,
             item.name.loc);
      }
    } else {
      std::string alias = imp.alias.name.empty() ? imp.path.back().name : imp.alias.name;
      bind(alias, {Symbol::Kind::Module, target, true}, imp.loc);
    }
  }
  resolveSignatures(m);
}

//===----------------------------------------------------------------------===//
// Names at module scope
//===----------------------------------------------------------------------===//

const Symbol *Analyzer::lookupPath(ModuleInfo &m, const std::vector<ast::Ident> &path,
                                   size_t &used, bool report) {
  auto it = m.scope.find(path[0].name);
  if (it == m.scope.end()) {
    if (report)
      diag_.error(path[0].loc, fmt::format("unknown name '{}'", path[0].name));
    return nullptr;
  }
  const Symbol *s = &it->second;
  used = 1;
  while (s->kind == Symbol::Kind::Module && used < path.size()) {
    auto *mod = static_cast<ModuleInfo *>(s->ptr);
    auto jt = mod->items.find(path[used].name);
    if (jt == mod->items.end()) {
      if (report)
        diag_.error(path[used].loc, fmt::format("module '{}' has no item '{}'", mod->name,
                                                path[used].name));
      return nullptr;
    }
    if (!jt->second.pub && mod != &m) {
      if (report)
        diag_.error(path[used].loc, fmt::format("'{}' is private to module '{}'",
                                                path[used].name, mod->name));
      return nullptr;
    }
    s = &jt->second;
    ++used;
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Generics, dims and types
//===----------------------------------------------------------------------===//

const GenericParam *Env::find(const std::string &n) const {
  for (const Env *e = this; e; e = e->parent)
    for (const GenericParam *g : e->params)
      if (g->name == n)
        return g;
  return nullptr;
}

static const char *kindName(ast::GenericKind k) { return ast::spelling(k); }

std::optional<Dim> Analyzer::resolveDim(const ast::DimExpr &d, const Env &env) {
  switch (d.kind) {
  case ast::DimExpr::Kind::Int:
    return Dim(llvm::cast<ast::IntDim>(d).value);
  case ast::DimExpr::Kind::Name: {
    const std::string &n = llvm::cast<ast::NameDim>(d).name;
    if (const GenericParam *g = env.find(n)) {
      if (g->kind == ast::GenericKind::Dim)
        return Dim::sym(g->id, g->name);
      diag_.error(d.loc, fmt::format("expected a dim, found {} generic '{}'", kindName(g->kind), n));
      return std::nullopt;
    }
    if (whereParams_)
      for (const ParamInfo &p : whereParams_->params)
        if (p.name == n) {
          const Type &t = *p.type;
          if (whereParams_->kind != ast::FunctionKind::Entry) {
            diag_.error(d.loc, fmt::format("'{}' is a parameter: only an entry's `where` may "
                                           "compare its parameters (checked on every call)",
                                           n));
            return std::nullopt;
          }
          if ((t.kind != Type::Kind::Scalar && t.kind != Type::Kind::Tensor) || t.dtype.isVar() ||
              !dtypeInClass(t.dtype.name, "int")) {
            diag_.error(d.loc, fmt::format("an entry's `where` may compare integer scalar "
                                           "parameters and the elements of integer tensor "
                                           "parameters only; '{}' has type '{}'",
                                           n, t.str()));
            return std::nullopt;
          }
          // A tensor's constraint holds for each of its elements: one
          // tensor a constraint, so "each element" has one meaning.
          if (t.kind == Type::Kind::Tensor) {
            if (!whereTensor_.empty() && whereTensor_ != n) {
              diag_.error(d.loc, fmt::format("a constraint may compare the elements of one tensor "
                                             "parameter; this one names '{}' and '{}'",
                                             whereTensor_, n));
              return std::nullopt;
            }
            whereTensor_ = n;
          }
          // A value symbol: bound by the argument when the entry is called.
          return Dim::sym(whereParams_->qualified() + "::" + n, n);
        }
    if (isDtypeName(n))
      diag_.error(d.loc, fmt::format("expected a dim, found dtype '{}'", n));
    else
      diag_.error(d.loc, fmt::format("unknown dimension '{}': declare it as a generic "
                                     "'<{}: dim>'",
                                     n, n));
    return std::nullopt;
  }
  case ast::DimExpr::Kind::PackSize: {
    const std::string &n = llvm::cast<ast::PackSizeDim>(d).pack;
    const GenericParam *g = env.find(n);
    if (!g || g->kind != ast::GenericKind::Shape) {
      diag_.error(d.loc, fmt::format("'#{}' needs a shape generic, but '{}' is {}", n, n,
                                     g ? std::string("a ") + kindName(g->kind) + " generic"
                                       : std::string("not declared")));
      return std::nullopt;
    }
    return Dim::packSize(g->id, g->name);
  }
  case ast::DimExpr::Kind::Binary: {
    auto &b = llvm::cast<ast::BinaryDim>(d);
    std::optional<Dim> l = resolveDim(*b.lhs, env), r = resolveDim(*b.rhs, env);
    if (!l || !r)
      return std::nullopt;
    if ((b.op == '/' || b.op == '%') && r->constant() == 0) {
      diag_.error(b.loc, fmt::format("division by zero in dimension '{} {} {}'", l->str(),
                                     b.op, r->str()));
      return std::nullopt;
    }
    Dim::OverflowCheck check;
    Dim out;
    switch (b.op) {
    case '+': out = *l + *r; break;
    case '-': out = *l - *r; break;
    case '*': out = *l * *r; break;
    case '/': out = Dim::floorDiv(*l, *r); break;
    default: out = Dim::mod(*l, *r); break;
    }
    if (check.overflowed()) {
      diag_.error(b.loc, fmt::format("dimension '{} {} {}' overflows 64-bit integers", l->str(), b.op,
                                     r->str()));
      return std::nullopt;
    }
    return out;
  }
  case ast::DimExpr::Kind::MinMax: {
    auto &mm = llvm::cast<ast::MinMaxDim>(d);
    std::optional<Dim> l = resolveDim(*mm.lhs, env), r = resolveDim(*mm.rhs, env);
    if (!l || !r)
      return std::nullopt;
    return mm.isMax ? Dim::max(*l, *r) : Dim::min(*l, *r);
  }
  case ast::DimExpr::Kind::Neg: {
    std::optional<Dim> o = resolveDim(*llvm::cast<ast::NegDim>(d).operand, env);
    if (!o)
      return std::nullopt;
    Dim::OverflowCheck check;
    Dim out = -*o;
    if (check.overflowed()) {
      diag_.error(d.loc, fmt::format("dimension '-({})' overflows 64-bit integers", o->str()));
      return std::nullopt;
    }
    return out;
  }
  }
  return std::nullopt;
}

std::optional<Shape> Analyzer::resolveUnits(const std::vector<ast::DimUnit> &units,
                                            const Env &env) {
  Shape s;
  bool ok = true;
  for (const ast::DimUnit &u : units) {
    if (u.isPack()) {
      const GenericParam *g = env.find(u.pack);
      if (!g || g->kind != ast::GenericKind::Shape) {
        diag_.error(u.loc, fmt::format("'{}...' needs a shape generic, but '{}' is {}", u.pack,
                                       u.pack,
                                       g ? std::string("a ") + kindName(g->kind) + " generic"
                                         : std::string("not declared")));
        ok = false;
        continue;
      }
      s.push_back(Unit{Dim(), g->id, g->name});
      continue;
    }
    // A bare shape generic inside brackets means its axes.
    if (auto *nd = llvm::dyn_cast<ast::NameDim>(u.dim.get()))
      if (const GenericParam *g = env.find(nd->name); g && g->kind == ast::GenericKind::Shape) {
        s.push_back(Unit{Dim(), g->id, g->name});
        continue;
      }
    std::optional<Dim> d = resolveDim(*u.dim, env);
    if (!d) {
      ok = false;
      continue;
    }
    s.push_back(Unit{*d, "", ""});
  }
  if (!ok)
    return std::nullopt;
  return s;
}

std::optional<Dtype> Analyzer::resolveDtype(const ast::TypeExpr &t, const Env &env) {
  auto *n = llvm::dyn_cast<ast::NamedType>(&t);
  if (!n || n->path.size() != 1 || n->hasDims || n->hasGenericArgs) {
    diag_.error(t.loc, "expected a dtype (such as f32 or a dtype generic)");
    return std::nullopt;
  }
  const std::string &name = n->path[0].name;
  if (const GenericParam *g = env.find(name)) {
    if (g->kind == ast::GenericKind::Dtype)
      return Dtype{g->name, g->id};
    diag_.error(t.loc, fmt::format("expected a dtype, found {} generic '{}'", kindName(g->kind), name));
    return std::nullopt;
  }
  if (isDtypeName(name))
    return Dtype{name, ""};
  diag_.error(t.loc, fmt::format("unknown dtype '{}': expected one of f16, bf16, f32, f64, "
                                 "i8..i64, u8..u64, bool, or a dtype generic",
                                 name));
  return std::nullopt;
}

std::optional<GenericValue> Analyzer::resolveGenericArg(const ast::GenericArg &a,
                                                        const GenericParam &p,
                                                        const std::string &owner,
                                                        const Env &env) {
  GenericValue v;
  v.kind = p.kind;
  auto wrongKind = [&](const std::string &found) {
    diag_.error(a.loc, fmt::format("generic '{}' of '{}' is a {}, found {}", p.name, owner,
                                   kindName(p.kind), found));
    return std::nullopt;
  };
  const ast::NameDim *nameArg = a.dim ? llvm::dyn_cast<ast::NameDim>(a.dim.get()) : nullptr;
  const GenericParam *named = nameArg ? env.find(nameArg->name) : nullptr;
  switch (p.kind) {
  case ast::GenericKind::Dim: {
    if (a.isShape)
      return wrongKind("a shape");
    if (named && named->kind != ast::GenericKind::Dim)
      return wrongKind(fmt::format("{} generic '{}'", kindName(named->kind), named->name));
    if (nameArg && !named && isDtypeName(nameArg->name))
      return wrongKind(fmt::format("dtype '{}'", nameArg->name));
    std::optional<Dim> d = resolveDim(*a.dim, env);
    if (!d)
      return std::nullopt;
    v.dim = *d;
    return v;
  }
  case ast::GenericKind::Shape: {
    if (a.isShape) {
      std::optional<Shape> s = resolveUnits(a.shape, env);
      if (!s)
        return std::nullopt;
      v.shape = *s;
      return v;
    }
    if (named && named->kind == ast::GenericKind::Shape) {
      v.shape.push_back(Unit{Dim(), named->id, named->name});
      return v;
    }
    return wrongKind(named ? fmt::format("{} generic '{}'", kindName(named->kind), named->name)
                           : std::string("a dim (write a shape as [A, B])"));
  }
  case ast::GenericKind::Dtype: {
    if (a.isShape || !nameArg)
      return wrongKind(a.isShape ? "a shape" : "a dim expression");
    if (named) {
      if (named->kind != ast::GenericKind::Dtype)
        return wrongKind(fmt::format("{} generic '{}'", kindName(named->kind), named->name));
      v.dtype = Dtype{named->name, named->id};
    } else if (isDtypeName(nameArg->name)) {
      v.dtype = Dtype{nameArg->name, ""};
    } else {
      diag_.error(a.loc, fmt::format("unknown dtype '{}' for generic '{}' of '{}'",
                                     nameArg->name, p.name, owner));
      return std::nullopt;
    }
    if (!p.dtypeClass.empty() && p.dtypeClass != "any") {
      if (!v.dtype.isVar()) {
        if (!dtypeInClass(v.dtype.name, p.dtypeClass))
          return wrongKind(fmt::format("dtype '{}', which is not in class {}", v.dtype.name,
                                       p.dtypeClass)),
                 std::nullopt;
      } else if (!classWithin(named->dtypeClass, p.dtypeClass)) {
        diag_.error(a.loc, fmt::format("generic '{}' of '{}' needs dtype class {}, but '{}' "
                                       "is declared with class {}",
                                       p.name, owner, p.dtypeClass, named->name,
                                       named->dtypeClass.empty() ? "any" : named->dtypeClass));
        return std::nullopt;
      }
    }
    return v;
  }
  }
  return std::nullopt;
}

bool Analyzer::bindGenericArgs(const NominalInfo &n, const std::vector<ast::GenericArg> &args,
                               SourceLoc loc, const Env &env, std::vector<GenericValue> &out) {
  size_t required = 0;
  for (const GenericParam &g : n.generics)
    if (!g.defaultValue)
      ++required;
  if (args.size() > n.generics.size() || args.size() < required) {
    diag_.error(loc, fmt::format("'{}' takes {} generic argument{}{}, found {}", n.name,
                                 required == n.generics.size()
                                     ? std::to_string(required)
                                     : fmt::format("{} to {}", required, n.generics.size()),
                                 n.generics.size() == 1 ? "" : "s",
                                 genericList(n.generics), args.size()));
    return false;
  }
  bool ok = true;
  for (size_t i = 0; i < n.generics.size(); ++i) {
    if (i < args.size()) {
      std::optional<GenericValue> v = resolveGenericArg(args[i], n.generics[i], n.name, env);
      if (!v) {
        ok = false;
        continue;
      }
      out.push_back(*v);
    } else {
      // Defaults may mention earlier generics: substitute what is bound.
      out.push_back(substValue(*n.generics[i].defaultValue, bindingsOf(n.generics, out)));
    }
  }
  return ok;
}

std::string Analyzer::genericList(const std::vector<GenericParam> &gs) {
  std::string s = " <";
  for (size_t i = 0; i < gs.size(); ++i)
    s += (i ? ", " : "") + gs[i].name + ": " + kindName(gs[i].kind);
  return s + ">";
}

TypeRef Analyzer::resolveType(const ast::TypeExpr &t, ModuleInfo &m, const Env &env) {
  switch (t.kind) {
  case ast::TypeExpr::Kind::Tuple: {
    auto r = std::make_shared<Type>();
    r->kind = Type::Kind::Tuple;
    for (const ast::TypeExprPtr &e : llvm::cast<ast::TupleType>(t).elements)
      r->elems.push_back(resolveType(*e, m, env));
    return r;
  }
  case ast::TypeExpr::Kind::Optional: {
    auto r = std::make_shared<Type>();
    r->kind = Type::Kind::Optional;
    r->elems.push_back(resolveType(*llvm::cast<ast::OptionalType>(t).inner, m, env));
    return r;
  }
  case ast::TypeExpr::Kind::Array: {
    auto &a = llvm::cast<ast::ArrayType>(t);
    auto r = std::make_shared<Type>();
    r->kind = Type::Kind::Array;
    r->elems.push_back(resolveType(*a.element, m, env));
    std::optional<Dim> d = resolveDim(*a.size, env);
    if (!d)
      return Type::unknown();
    r->size = *d;
    return r;
  }
  case ast::TypeExpr::Kind::Named:
    break;
  }
  auto &n = llvm::cast<ast::NamedType>(t);
  const std::string &head = n.path[0].name;
  if (n.path.size() == 1) {
    if (head == "Tensor") {
      if (!n.hasDims) {
        diag_.error(t.loc, "'Tensor' needs its shape and dtype: Tensor[A, B; T]");
        return Type::unknown();
      }
      if (!n.dtype) {
        diag_.error(t.loc, fmt::format("'Tensor[{}]' needs a dtype after ';': Tensor[...; f32]",
                                       n.dims.empty() ? "" : "..."));
        return Type::unknown();
      }
      std::optional<Shape> s = resolveUnits(n.dims, env);
      std::optional<Dtype> d = resolveDtype(*n.dtype, env);
      if (!s || !d)
        return Type::unknown();
      return Type::tensor(*s, *d);
    }
    if (head == "string")
      return std::make_shared<Type>(Type{Type::Kind::String, {}, {}, {}, {}, nullptr, {}});
    if (const GenericParam *g = env.find(head)) {
      if (g->kind == ast::GenericKind::Dtype && !n.hasDims && !n.hasGenericArgs)
        return Type::scalar(Dtype{g->name, g->id});
      diag_.error(t.loc, fmt::format("expected a type, found {} generic '{}'", kindName(g->kind), head));
      return Type::unknown();
    }
    if (isDtypeName(head)) {
      if (n.hasDims || n.hasGenericArgs) {
        diag_.error(t.loc, fmt::format("dtype '{}' takes no arguments: write Tensor[...; {}] "
                                       "for a tensor",
                                       head, head));
        return Type::unknown();
      }
      return Type::scalar(Dtype{head, ""});
    }
    if (kOpaqueTypes.count(head)) {
      if (!n.hasDims || n.dims.size() != 3 || n.dtype) {
        diag_.error(t.loc, fmt::format("relation type '{}' takes three dims: {}[NumSrc, "
                                       "NumDst, Edges]",
                                       head, head));
        return Type::unknown();
      }
      std::optional<Shape> s = resolveUnits(n.dims, env);
      if (!s)
        return Type::unknown();
      auto r = std::make_shared<Type>();
      r->kind = Type::Kind::Relation;
      r->dtype = Dtype{head, ""};
      r->shape = *s;
      return r;
    }
  }
  size_t used = 0;
  const Symbol *s = lookupPath(m, n.path, used, false);
  if (!s || used != n.path.size()) {
    diag_.error(t.loc, fmt::format("unknown type '{}'", ast::joinPath(n.path)));
    return Type::unknown();
  }
  if (s->kind != Symbol::Kind::Block && s->kind != Symbol::Kind::Struct &&
      s->kind != Symbol::Kind::Enum) {
    diag_.error(t.loc, fmt::format("'{}' is not a type", ast::joinPath(n.path)));
    return Type::unknown();
  }
  auto *nom = static_cast<NominalInfo *>(s->ptr);
  ensureSignature(*nom);
  if (n.hasDims) {
    diag_.error(t.loc, fmt::format("'{}' is not a tensor: pass its generics in '<...>'", nom->name));
    return Type::unknown();
  }
  auto r = std::make_shared<Type>();
  r->kind = nom->kind == NominalInfo::Kind::Block    ? Type::Kind::Block
            : nom->kind == NominalInfo::Kind::Struct ? Type::Kind::Struct
                                                     : Type::Kind::Enum;
  r->decl = nom;
  if (!bindGenericArgs(*nom, n.genericArgs, t.loc, env, r->args))
    return Type::unknown();
  return r;
}

void Analyzer::resolveGenerics(const std::vector<ast::GenericParam> &in, const std::string &owner,
                               std::vector<GenericParam> &out, Env &env) {
  for (const ast::GenericParam &g : in) {
    for (const GenericParam &prev : out)
      if (prev.name == g.name.name)
        diag_.error(g.name.loc, fmt::format("generic '{}' is declared twice", g.name.name));
    if (const GenericParam *outer = env.parent ? env.parent->find(g.name.name) : nullptr)
      diag_.error(g.name.loc, fmt::format("generic '{}' shadows the enclosing block's generic "
                                          "of the same name",
                                          outer->name));
    GenericParam p;
    p.name = g.name.name;
    p.kind = g.kind;
    p.id = owner + "::" + g.name.name;
    p.loc = g.name.loc;
    if (!g.dtypeClass.name.empty()) {
      const std::string &c = g.dtypeClass.name;
      if (c != "float" && c != "int" && c != "signed" && c != "any" && c != "bool")
        diag_.error(g.dtypeClass.loc, fmt::format("unknown dtype class '{}': expected float, "
                                                  "int, signed, bool or any",
                                                  c));
      else
        p.dtypeClass = c;
    }
    out.push_back(std::move(p));
  }
  // Pointers into `out` are stable from here on.
  env.params.clear();
  for (GenericParam &p : out)
    env.params.push_back(&p);
  for (size_t i = 0; i < in.size(); ++i) {
    if (!in[i].defaultValue)
      continue;
    // A default may refer only to generics declared before it.
    Env before{{}, env.parent};
    for (size_t j = 0; j < i; ++j)
      before.params.push_back(&out[j]);
    std::optional<GenericValue> v = resolveGenericArg(*in[i].defaultValue, out[i], owner, before);
    if (v)
      out[i].defaultValue = *v;
  }
}

void Analyzer::resolveConstraints(const std::vector<ast::Constraint> &in, const Env &env,
                                  std::vector<Constraint> &out) {
  for (const ast::Constraint &c : in) {
    whereTensor_.clear();
    std::optional<Dim> l = resolveDim(*c.lhs, env), r = resolveDim(*c.rhs, env);
    if (!l || !r)
      continue;
    Constraint k{*l, *r, c.op, c.loc};
    if (std::optional<bool> v = evalConstraint(k); v && !*v)
      diag_.error(c.loc, fmt::format("constraint '{}' can never hold", k.str()));
    out.push_back(std::move(k));
  }
}

std::optional<bool> linnet::sema::evalConstraint(const Constraint &c) {
  std::optional<int64_t> d = (c.lhs - c.rhs).constant();
  if (!d)
    return std::nullopt;
  switch (c.op) {
  case ast::BinaryOp::Eq: return *d == 0;
  case ast::BinaryOp::Ne: return *d != 0;
  case ast::BinaryOp::Lt: return *d < 0;
  case ast::BinaryOp::Le: return *d <= 0;
  case ast::BinaryOp::Gt: return *d > 0;
  case ast::BinaryOp::Ge: return *d >= 0;
  default: return std::nullopt;
  }
}

void Analyzer::ensureSignature(NominalInfo &n) {
  if (sigDone_.count(&n))
    return;
  sigDone_.insert(&n);
  Env &env = envs_[&n];
  std::string owner = n.qualified();
  switch (n.kind) {
  case NominalInfo::Kind::Block: {
    auto &d = llvm::cast<ast::BlockDecl>(*n.decl);
    resolveGenerics(d.generics, owner, n.generics, env);
    resolveConstraints(d.constraints, env, n.constraints);
    resolveMembers(static_cast<BlockInfo &>(n), d, env);
    break;
  }
  case NominalInfo::Kind::Struct: {
    auto &d = llvm::cast<ast::StructDecl>(*n.decl);
    resolveGenerics(d.generics, owner, n.generics, env);
    resolveConstraints(d.constraints, env, n.constraints);
    auto &s = static_cast<StructInfo &>(n);
    for (const ast::Param &f : d.fields) {
      for (const FieldInfo &prev : s.fields)
        if (prev.name == f.name.name)
          diag_.error(f.name.loc, fmt::format("struct '{}' has two fields named '{}'", n.name,
                                              f.name.name));
      s.fields.push_back({f.name.name, resolveType(*f.type, *n.module, env)});
    }
    break;
  }
  case NominalInfo::Kind::Enum: {
    auto &d = llvm::cast<ast::EnumDecl>(*n.decl);
    resolveGenerics(d.generics, owner, n.generics, env);
    auto &e = static_cast<EnumInfo &>(n);
    for (const ast::EnumVariant &v : d.variants) {
      std::vector<TypeRef> payload;
      for (const ast::TypeExprPtr &t : v.payload)
        payload.push_back(resolveType(*t, *n.module, env));
      e.variants.push_back({v.name.name, std::move(payload)});
    }
    break;
  }
  case NominalInfo::Kind::Reducer: {
    auto &d = llvm::cast<ast::ReducerDecl>(*n.decl);
    resolveGenerics(d.generics, owner, n.generics, env);
    resolveConstraints(d.constraints, env, n.constraints);
    break;
  }
  }
}

void Analyzer::resolveMembers(BlockInfo &b, const ast::BlockDecl &d, const Env &env) {
  for (const ast::DeclPtr &dp : d.body) {
    auto *md = llvm::dyn_cast<ast::MemberDecl>(dp.get());
    if (!md)
      continue;
    const char *kw = ast::spelling(md->memberKind);
    for (const MemberInfo &prev : b.members)
      if (prev.name == md->name.name)
        diag_.error(md->name.loc, fmt::format("block '{}' already has a member '{}'", b.name,
                                              md->name.name));
    for (const FunctionInfo *f : b.methods)
      if (f->name == md->name.name)
        diag_.error(md->name.loc, fmt::format("member '{}' has the same name as function '{}' "
                                              "of block '{}'",
                                              md->name.name, f->name, b.name));
    TypeRef t = resolveType(*md->type, *b.module, env);
    bool optional = t->kind == Type::Kind::Optional;
    const Type &inner = optional ? *t->elems[0] : *t;
    bool initNone = md->init && md->init->kind == ast::Expr::Kind::NoneLit;
    if (md->init && !initNone) {
      switch (md->memberKind) {
      case ast::MemberKind::State:
        diag_.error(md->init->loc, fmt::format("state '{}' cannot have an initializer: the "
                                               "runtime supplies its initial value (zeros by "
                                               "default)",
                                               md->name.name));
        break;
      case ast::MemberKind::Sub:
        diag_.error(md->init->loc, fmt::format("sub '{}' can only be initialized with 'none' "
                                               "(an optional sub block)",
                                               md->name.name));
        break;
      default:
        diag_.error(md->init->loc,
                    fmt::format("{} '{}' cannot have an initializer other than 'none': its "
                                "value is bound from the weights at load time",
                                kw, md->name.name));
      }
    } else if (initNone && !optional && md->memberKind != ast::MemberKind::State) {
      diag_.error(md->init->loc, fmt::format("{} '{}' is initialized with 'none' but its type "
                                             "'{}' is not optional: write '{}?'",
                                             kw, md->name.name, t->str(), t->str()));
    }
    switch (md->memberKind) {
    case ast::MemberKind::Param:
    case ast::MemberKind::Buffer:
      // A scalar type is the rank-0 tensor (§5.1): `param eps: f32`.
      if (inner.kind != Type::Kind::Tensor && inner.kind != Type::Kind::Scalar &&
          inner.kind != Type::Kind::Unknown)
        diag_.error(md->type->loc, fmt::format("{} '{}' must have a tensor or scalar type "
                                               "(Tensor[...; dtype] or a dtype), found '{}'",
                                               kw, md->name.name, t->str()));
      break;
    case ast::MemberKind::State:
      if (optional)
        diag_.error(md->type->loc, fmt::format("state '{}' cannot be optional: a state member "
                                               "always exists, found '{}'",
                                               md->name.name, t->str()));
      else if (t->kind != Type::Kind::Tensor && t->kind != Type::Kind::Scalar &&
               t->kind != Type::Kind::Unknown)
        diag_.error(md->type->loc, fmt::format("state '{}' must have a tensor or scalar type "
                                               "whose shape the block's generics fix, found '{}'",
                                               md->name.name, t->str()));
      else if (initNone)
        diag_.error(md->init->loc, fmt::format("state '{}' cannot be 'none': state cannot be "
                                               "optional",
                                               md->name.name));
      break;
    case ast::MemberKind::Sub: {
      const Type *blk = &inner;
      if (inner.kind == Type::Kind::Array) {
        if (optional) {
          diag_.error(md->type->loc, fmt::format("sub '{}': an array of blocks cannot be "
                                                 "optional, found '{}'",
                                                 md->name.name, t->str()));
          break;
        }
        blk = inner.elems[0].get();
        if (blk->kind == Type::Kind::Optional) {
          diag_.error(md->type->loc, fmt::format("sub '{}': array elements cannot be optional "
                                                 "blocks, found '{}'",
                                                 md->name.name, t->str()));
          break;
        }
      }
      if (blk->kind != Type::Kind::Block && blk->kind != Type::Kind::Unknown)
        diag_.error(md->type->loc, fmt::format("sub '{}' must have a block type (a block, an "
                                               "optional block or an array of blocks), found "
                                               "'{}'",
                                               md->name.name, t->str()));
      else if (blk->decl == &b)
        diag_.error(md->type->loc, fmt::format("block '{}' contains itself through sub '{}'",
                                               b.name, md->name.name));
      break;
    }
    }
    b.members.push_back({md->name.name, md->memberKind, t, md->name.loc});
  }
}

void Analyzer::resolveFunctionSig(FunctionInfo &f) {
  Env &env = fnEnvs_[&f];
  if (f.block) {
    ensureSignature(*f.block);
    env.parent = &envs_[f.block];
  }
  resolveGenerics(f.decl->generics, f.qualified(), f.generics, env);
  for (const ast::Param &p : f.decl->params) {
    for (const ParamInfo &prev : f.params)
      if (prev.name == p.name.name)
        diag_.error(p.name.loc, fmt::format("parameter '{}' is declared twice", p.name.name));
    f.params.push_back({p.name.name, resolveType(*p.type, *f.module, env), p.name.loc});
  }
  whereParams_ = &f;
  resolveConstraints(f.decl->constraints, env, f.constraints);
  whereParams_ = nullptr;
  if (f.decl->result)
    f.result = resolveType(*f.decl->result, *f.module, env);
  if (f.kind == ast::FunctionKind::Entry && !f.block)
    diag_.error(f.decl->loc, fmt::format("entry '{}' must be declared inside a block: an entry "
                                         "is what a runtime calls on a block instance",
                                         f.name));
  // What crosses the runtime ABI (docs/runtime-abi.md): an entry takes
  // tensors, scalars and relations and returns tensors and scalars (or a
  // tuple of them), and its generics are dims bound from its inputs.
  if (f.kind == ast::FunctionKind::Entry && f.block) {
    auto crosses = [](const TypeRef &t, bool input) {
      return !t || t->kind == Type::Kind::Unknown || t->kind == Type::Kind::Scalar ||
             t->kind == Type::Kind::Tensor || (input && t->kind == Type::Kind::Relation);
    };
    for (const ParamInfo &p : f.params)
      if (!crosses(p.type, true))
        diag_.error(p.loc, fmt::format("entry '{}': parameter '{}' has type {}, which a runtime "
                                       "cannot pass: an entry takes tensors, scalars and relations",
                                       f.name, p.name, p.type->str()));
    if (f.result) {
      bool ok = f.result->kind == Type::Kind::Tuple ? true : crosses(f.result, false);
      if (f.result->kind == Type::Kind::Tuple)
        for (const TypeRef &e : f.result->elems)
          ok &= crosses(e, false);
      if (!ok)
        diag_.error(f.decl->result->loc,
                    fmt::format("entry '{}': its result has type {}, which a runtime cannot "
                                "receive: an entry returns tensors and scalars (or a tuple of them)",
                                f.name, f.result->str()));
    }
    for (const GenericParam &g : f.generics)
      if (g.kind != ast::GenericKind::Dim)
        diag_.error(g.loc, fmt::format("entry '{}': generic '{}' is a {} generic: an entry's "
                                       "generics are dims, bound from its inputs' shapes (make it "
                                       "a generic of the block)",
                                       f.name, g.name, ast::spelling(g.kind)));
  }
  // A call binds an entry's dim generics from its inputs' shapes: each must
  // be a whole axis of some tensor or relation input.
  if (f.kind == ast::FunctionKind::Entry && f.block)
    for (const GenericParam &g : f.generics) {
      if (g.kind != ast::GenericKind::Dim)
        continue;
      bool bound = false;
      for (const ParamInfo &p : f.params) {
        if (!p.type || (p.type->kind != Type::Kind::Tensor && p.type->kind != Type::Kind::Relation))
          continue;
        for (const Unit &u : p.type->shape) {
          if (u.isPack())
            continue;
          const auto &ts = u.dim.terms();
          bound |= ts.size() == 1 && ts[0].coeff == 1 && ts[0].atoms.size() == 1 &&
                   ts[0].atoms[0]->kind == Atom::Kind::Sym && ts[0].atoms[0]->id == g.id;
        }
      }
      if (!bound)
        diag_.error(g.loc, fmt::format("entry '{}': generic '{}' is not the size of any input "
                                       "axis, so a call cannot bind it (give an input an axis "
                                       "'{}', or make it a generic of the block)",
                                       f.name, g.name, g.name));
    }
}

void Analyzer::resolveSignatures(ModuleInfo &m) {
  for (auto &n : m.nominals)
    ensureSignature(*n);
  for (auto &f : m.functions)
    resolveFunctionSig(*f);
}

//===----------------------------------------------------------------------===//
// Substitution
//===----------------------------------------------------------------------===//

Bindings linnet::sema::bindingsOf(const std::vector<GenericParam> &gs,
                                  const std::vector<GenericValue> &vs) {
  Bindings b;
  for (size_t i = 0; i < gs.size() && i < vs.size(); ++i)
    b[gs[i].id] = vs[i];
  return b;
}

Dim linnet::sema::substDim(const Dim &d, const Bindings &b) {
  if (b.empty())
    return d;
  return d.substitute([&](const Atom &a) -> std::optional<Dim> {
    auto it = b.find(a.id);
    if (it == b.end())
      return std::nullopt;
    if (a.kind == Atom::Kind::Sym && it->second.kind == ast::GenericKind::Dim)
      return it->second.dim;
    if (a.kind == Atom::Kind::PackSize && it->second.kind == ast::GenericKind::Shape) {
      Dim p = 1;
      for (const Unit &u : it->second.shape)
        p = p * (u.isPack() ? Dim::packSize(u.pack, u.packName) : u.dim);
      return p;
    }
    return std::nullopt;
  });
}

Shape linnet::sema::substShape(const Shape &s, const Bindings &b) {
  Shape r;
  for (const Unit &u : s) {
    if (u.isPack()) {
      auto it = b.find(u.pack);
      if (it != b.end() && it->second.kind == ast::GenericKind::Shape) {
        r.insert(r.end(), it->second.shape.begin(), it->second.shape.end());
        continue;
      }
      r.push_back(u);
      continue;
    }
    r.push_back(Unit{substDim(u.dim, b), "", ""});
  }
  return r;
}

Dtype linnet::sema::substDtype(const Dtype &d, const Bindings &b) {
  if (!d.isVar())
    return d;
  auto it = b.find(d.var);
  if (it != b.end() && it->second.kind == ast::GenericKind::Dtype)
    return it->second.dtype;
  return d;
}

GenericValue linnet::sema::substValue(const GenericValue &v, const Bindings &b) {
  GenericValue r = v;
  r.dim = substDim(v.dim, b);
  r.shape = substShape(v.shape, b);
  r.dtype = substDtype(v.dtype, b);
  return r;
}

TypeRef linnet::sema::substType(const TypeRef &t, const Bindings &b) {
  if (b.empty() || !t)
    return t;
  auto r = std::make_shared<Type>(*t);
  r->dtype = substDtype(t->dtype, b);
  r->shape = substShape(t->shape, b);
  // A shape pack bound to no axes leaves a rank-0 tensor: the scalar (§5.1).
  if (r->kind == Type::Kind::Tensor && r->shape.empty())
    return Type::scalar(r->dtype);
  r->size = substDim(t->size, b);
  for (TypeRef &e : r->elems)
    e = substType(e, b);
  for (GenericValue &a : r->args)
    a = substValue(a, b);
  return r;
}

//===----------------------------------------------------------------------===//
// Entry point
//===----------------------------------------------------------------------===//

std::unique_ptr<Program> linnet::sema::analyze(SourceManager &sm, uint32_t rootBuffer,
                                               const std::string &rootFile,
                                               DiagnosticEngine &diag, const SemaOptions &opts) {
  auto prog = std::make_unique<Program>();
  prog->sources = &sm;
  Analyzer a(sm, diag, opts, *prog);
  a.loadRoot(rootBuffer, rootFile);
  a.checkBodies();
  return prog;
}
