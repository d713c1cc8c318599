//===- SemaImpl.h - Internals shared by the Sema sources --------*- C++ -*-===//
#ifndef LINNET_LIB_SEMA_SEMAIMPL_H
#define LINNET_LIB_SEMA_SEMAIMPL_H

#include "linnet/Sema/Sema.h"
#include "linnet/Sema/Subst.h"

#include <fmt/format.h>
#include <llvm/Support/Casting.h>

#include <map>
#include <set>

namespace linnet::sema {

bool isDtypeName(const std::string &n);
/// Values a block of block-quantized dtype `n` holds (q8_0, q4_0: 32), or 0
/// for an element dtype.
int64_t blockDtypeElems(const std::string &n);
std::string dtypeClassOf(const std::string &n);
/// Whether dtype `dtype` is in class `cls` (float, int, signed, bool, any).
bool dtypeInClass(const std::string &dtype, const std::string &cls);
/// Whether every dtype of class `inner` is in class `outer`.
bool classWithin(const std::string &inner, const std::string &outer);

/// Generic parameters in scope: a function's, then its block's.
struct Env {
  std::vector<const GenericParam *> params;
  const Env *parent = nullptr;
  const GenericParam *find(const std::string &n) const;
};

/// A local name inside a function body.
struct Local {
  enum class Kind { Let, Var, Param, Index, Binder } kind;
  std::string name;
  TypeRef type;
  std::optional<Dim> dim; // indices: the domain
  /// A name for a sub block: the member path it denotes (`head.` for `h` in
  /// `match head { some(h) => ... }`), or `%pN.` for the function's block-typed
  /// parameter N, replaced by the caller's argument path. Empty otherwise.
  std::string memberPath = {};
  /// A `var` bound to an untyped literal value: its initializer, whose
  /// recorded type the first assignment of a typed value decides.
  const ast::Expr *init = nullptr;
  /// A `let` name: the expression it is bound to.
  const ast::Expr *def = nullptr;
};

/// A call recorded for the state closure: the receiver's member path, the
/// callee, and the member path of each argument (empty: not a sub block).
struct CallEdge {
  std::string prefix;
  const FunctionInfo *callee;
  std::vector<std::string> argPaths;
};

class Analyzer {
public:
  Analyzer(SourceManager &sm, DiagnosticEngine &diag, const SemaOptions &opts, Program &prog);
  ModuleInfo *loadRoot(uint32_t buffer, const std::string &file);
  void checkBodies();
  void checkRecursion();

  // Signatures (Sema.cpp)
  std::optional<Dim> resolveDim(const ast::DimExpr &d, const Env &env);
  std::optional<Shape> resolveUnits(const std::vector<ast::DimUnit> &units, const Env &env);
  std::optional<Dtype> resolveDtype(const ast::TypeExpr &t, const Env &env);
  TypeRef resolveType(const ast::TypeExpr &t, ModuleInfo &m, const Env &env);
  std::optional<GenericValue> resolveGenericArg(const ast::GenericArg &a, const GenericParam &p,
                                                const std::string &owner, const Env &env);
  bool bindGenericArgs(const NominalInfo &n, const std::vector<ast::GenericArg> &args,
                       SourceLoc loc, const Env &env, std::vector<GenericValue> &out);
  const Symbol *lookupPath(ModuleInfo &m, const std::vector<ast::Ident> &path, size_t &used,
                           bool report);

private:
  void loadImports(ModuleInfo &m);
  void declare(ModuleInfo &m);
  void addItem(ModuleInfo &m, const std::string &name, SourceLoc loc, Symbol s);
  void resolveSignatures(ModuleInfo &m);
  void ensureSignature(NominalInfo &n);
  void resolveMembers(BlockInfo &b, const ast::BlockDecl &d, const Env &env);
  void resolveFunctionSig(FunctionInfo &f);
  void resolveGenerics(const std::vector<ast::GenericParam> &in, const std::string &owner,
                       std::vector<GenericParam> &out, Env &env);
  void resolveConstraints(const std::vector<ast::Constraint> &in, const Env &env,
                          std::vector<Constraint> &out);
  static std::string genericList(const std::vector<GenericParam> &gs);

  friend class BodyChecker;
  SourceManager &sm_;
  DiagnosticEngine &diag_;
  const SemaOptions &opts_;
  Program &prog_;
  std::vector<std::string> roots_;
  std::vector<std::string> stack_; // modules being loaded, for cycles
  std::vector<SourceLoc> importLocs_; // the import that loaded each of them
  std::set<const ast::Import *> failedImports_;
  std::set<const NominalInfo *> sigDone_;
  std::map<const NominalInfo *, Env> envs_;
  std::map<const FunctionInfo *, Env> fnEnvs_;
  std::map<const ConstInfo *, bool> constDone_;
  // While an entry's `where` clause is resolved: its parameters, which the
  // clause may compare (integer scalars only; checked on every call).
  const FunctionInfo *whereParams_ = nullptr;
  /// The tensor parameter the constraint being resolved compares element by
  /// element (at most one a constraint).
  std::string whereTensor_;
  // State effects: direct member names, and calls with the path prefix.
  std::map<const FunctionInfo *, std::vector<CallEdge>> calls_;
};

} // namespace linnet::sema

#endif
