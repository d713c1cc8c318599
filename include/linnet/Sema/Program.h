//===- Program.h - The checked program: modules, blocks, types --*- C++ -*-===//
//
// What Sema knows after checking: every loaded module with its items, each
// item's generics, constraints, member and parameter types in symbolic form.
// The plan writer and instantiation read this model, never the AST (except
// for source locations and function bodies).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SEMA_PROGRAM_H
#define LINNET_SEMA_PROGRAM_H

#include "linnet/Sema/Dim.h"
#include "linnet/Syntax/AST.h"
#include "linnet/Syntax/SourceManager.h"

#include <map>
#include <memory>
#include <set>
#include <unordered_map>
#include <string>
#include <vector>

namespace linnet::sema {

/// A concrete dtype (`bf16`) or a dtype generic (`var` set).
struct Dtype {
  std::string name;  // concrete name, or the generic's display name
  std::string var;   // stable id of a dtype generic; empty when concrete
  bool isVar() const { return !var.empty(); }
  bool operator==(const Dtype &o) const { return name == o.name && var == o.var; }
  std::string str() const { return name; }
};

/// One axis position: a dim, or every axis of a shape pack.
struct Unit {
  Dim dim;
  std::string pack, packName; // pack id / display name when a pack
  bool isPack() const { return !pack.empty(); }
  bool operator==(const Unit &o) const {
    return pack == o.pack && (isPack() || dim == o.dim);
  }
};
using Shape = std::vector<Unit>;
std::string shapeStr(const Shape &s);

struct Type;
using TypeRef = std::shared_ptr<const Type>;
struct NominalInfo;

/// The value bound to a generic: a dim, a shape or a dtype.
struct GenericValue {
  ast::GenericKind kind = ast::GenericKind::Dim;
  Dim dim;
  Shape shape;
  Dtype dtype;
  std::string str() const;
};

struct Type {
  enum class Kind { Unknown, Scalar, Tensor, Tuple, Optional, Array, Block, Struct, Enum, None, String, Relation };
  Kind kind = Kind::Unknown;
  Dtype dtype;                   // Scalar, Tensor; Relation: its kind ("Csr")
  Shape shape;                   // Tensor; Relation: num_src, num_dst, edges
  std::vector<TypeRef> elems;    // Tuple; Optional/Array: elems[0]
  Dim size;                      // Array length
  const NominalInfo *decl = nullptr; // Block, Struct, Enum
  std::vector<GenericValue> args;    // Block, Struct, Enum: in declaration order

  static TypeRef unknown();
  static TypeRef scalar(Dtype d);
  static TypeRef tensor(Shape s, Dtype d);
  static TypeRef none();
  std::string str() const;
};
bool sameType(const Type &a, const Type &b);

struct GenericParam {
  std::string name;
  ast::GenericKind kind;
  std::string id;         // stable symbol id ("module::Owner::Name")
  std::string dtypeClass; // dtype generics: "float", "int", "signed", "bool", "any" or empty
  std::optional<GenericValue> defaultValue;
  SourceLoc loc;
};

struct Constraint {
  Dim lhs, rhs;
  ast::BinaryOp op;
  SourceLoc loc;
  std::string str() const;
};

struct ModuleInfo;

/// Blocks, structs, enums and reducers: named items that take generics.
struct NominalInfo {
  enum class Kind { Block, Struct, Enum, Reducer } kind;
  std::string name;
  ModuleInfo *module = nullptr;
  const ast::Decl *decl = nullptr;
  bool pub = false;
  std::vector<GenericParam> generics;
  std::vector<Constraint> constraints;
  std::string qualified() const;
  // Owned as unique_ptr<NominalInfo> (ModuleInfo::nominals): the derived
  // part must be destroyed through the base.
  NominalInfo() = default;
  NominalInfo(const NominalInfo &) = default;
  NominalInfo(NominalInfo &&) = default;
  NominalInfo &operator=(const NominalInfo &) = default;
  NominalInfo &operator=(NominalInfo &&) = default;
  virtual ~NominalInfo() = default;
};

struct MemberInfo {
  std::string name;
  ast::MemberKind kind;
  TypeRef type;
  SourceLoc loc;
};

struct FunctionInfo;

struct BlockInfo : NominalInfo {
  std::vector<MemberInfo> members;
  std::vector<FunctionInfo *> methods;
  const MemberInfo *member(const std::string &n) const {
    for (const MemberInfo &m : members)
      if (m.name == n)
        return &m;
    return nullptr;
  }
};

struct FieldInfo {
  std::string name;
  TypeRef type;
};
struct StructInfo : NominalInfo {
  std::vector<FieldInfo> fields;
};
struct EnumInfo : NominalInfo {
  std::vector<std::pair<std::string, std::vector<TypeRef>>> variants;
};

struct ParamInfo {
  std::string name;
  TypeRef type;
  SourceLoc loc;
};

struct FunctionInfo {
  std::string name;
  ast::FunctionKind kind;
  ModuleInfo *module = nullptr;
  BlockInfo *block = nullptr; // methods
  const ast::FunctionDecl *decl = nullptr;
  bool pub = false;
  std::vector<GenericParam> generics;
  std::vector<Constraint> constraints;
  std::vector<ParamInfo> params;
  TypeRef result;               // null: no result
  std::set<std::string> states; // relative member paths, read or written
  std::vector<const FunctionInfo *> callees;
  std::vector<SourceLoc> calleeLocs; // where each callee is called, parallel to callees
  std::string qualified() const;
};

struct ConstInfo {
  std::string name;
  ModuleInfo *module = nullptr;
  const ast::ConstDecl *decl = nullptr;
  bool pub = false;
  TypeRef type; // declared or inferred
  bool contextual = false;
};

/// What a name at module scope denotes.
struct Symbol {
  enum class Kind { Module, Block, Struct, Enum, Reducer, Function, Const } kind;
  void *ptr = nullptr; // ModuleInfo / NominalInfo / FunctionInfo / ConstInfo
  bool pub = false;
};

struct ModuleInfo {
  std::string name; // dotted path
  std::string file;
  uint32_t buffer = 0;
  std::unique_ptr<ast::Module> ast;
  std::map<std::string, Symbol> items;  // declared here
  std::map<std::string, Symbol> scope;  // items plus imports
  std::vector<std::unique_ptr<NominalInfo>> nominals; // in source order
  std::vector<std::unique_ptr<FunctionInfo>> functions; // module-level and methods, source order
  std::vector<std::unique_ptr<ConstInfo>> consts;
  bool checked = false;
};

/// A resolved call: the callee and every generic it is bound with (its
/// block's and its own), by stable id.
struct CallFact {
  const FunctionInfo *fn = nullptr;
  std::map<std::string, GenericValue> bindings;
};
/// A user reducer named by a reduction, with its generic arguments.
struct ReduceFact {
  const NominalInfo *reducer = nullptr;
  std::vector<GenericValue> args;
};
/// One part of a reducer (identity, lift, combine, finalize), typed.
struct ReducerPart {
  const ast::FunctionDecl *decl = nullptr;
  std::vector<ParamInfo> params;
  TypeRef result;
};

/// What body checking learned, so lowering to Core IR never re-derives it:
/// the type of every checked expression, every call's target and bindings,
/// every user reducer use, and the reducers' typed parts.
struct Facts {
  std::unordered_map<const ast::Expr *, TypeRef> types;
  std::unordered_map<const ast::Expr *, CallFact> calls;
  std::unordered_map<const ast::Expr *, ReduceFact> reductions;
  std::map<const NominalInfo *, std::vector<ReducerPart>> reducerParts;
  TypeRef typeOf(const ast::Expr &e) const {
    auto it = types.find(&e);
    return it == types.end() ? Type::unknown() : it->second;
  }
};

struct Program {
  std::vector<std::unique_ptr<ModuleInfo>> modules; // load order
  ModuleInfo *root = nullptr;
  Facts facts;
  /// The sources the modules were read from (for `file:line:col` in the
  /// Core IR); the caller's SourceManager, which must outlive lowering.
  const SourceManager *sources = nullptr;
  ModuleInfo *find(const std::string &name) const {
    for (auto &m : modules)
      if (m->name == name)
        return m.get();
    return nullptr;
  }
};

} // namespace linnet::sema

#endif // LINNET_SEMA_PROGRAM_H
