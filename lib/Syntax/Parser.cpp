//===- Parser.cpp - Recursive-descent parser for linnet -------------------===//
//
// Grammar: docs/language/13-grammar.md. Error handling is panic-mode: the
// first error in a statement, member or item is reported, later ones are
// suppressed until the parser resynchronizes at the next boundary of the same
// nesting level. Each parse function returns null (or false) on failure.
//
//===----------------------------------------------------------------------===//
#include "linnet/Syntax/Parser.h"
#include "linnet/Syntax/Lexer.h"

#include <fmt/format.h>

#include <llvm/ADT/STLFunctionalExtras.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <type_traits>
#include <climits>

using namespace linnet;
using namespace linnet::ast;

namespace {

constexpr unsigned kMaxNesting = 200;
/// Operators in one chain (`a + b + ... `), counted along the whole path from
/// the statement: a left-associative chain is a tree as deep as it is long,
/// and the checker, lowering and printer walk it recursively.
constexpr unsigned kMaxChain = 1000;

class Parser {
public:
  Parser(const SourceManager &sm, uint32_t buffer, DiagnosticEngine &diag)
      : diag_(diag), buffer_(buffer) {
    Lexer lexer(sm, buffer, diag);
    toks_ = lexer.lexAll();
  }

  std::unique_ptr<Module> parseModule();

private:
  //===--------------------------------------------------------------------===//
  // Token stream
  //===--------------------------------------------------------------------===//
  const Token &tok() const { return toks_[pos_]; }
  const Token &peek(size_t n = 1) const {
    size_t i = pos_ + n;
    return i < toks_.size() ? toks_[i] : toks_.back();
  }
  bool at(Tok k) const { return tok().kind == k; }
  void advance() {
    switch (tok().kind) {
    case Tok::l_paren: case Tok::l_brack: case Tok::l_brace:
      open_.push_back(tok().kind);
      break;
    case Tok::r_paren: case Tok::r_brack: case Tok::r_brace:
      if (!open_.empty())
        open_.pop_back();
      break;
    default: break;
    }
    if (pos_ + 1 < toks_.size())
      ++pos_;
  }
  bool consume(Tok k) {
    if (!at(k))
      return false;
    advance();
    return true;
  }

  static std::string describe(const Token &t) {
    switch (t.kind) {
    case Tok::eof:
      return "end of file";
    case Tok::ident:
      return fmt::format("identifier '{}'", t.text);
    case Tok::int_lit:
    case Tok::float_lit:
    case Tok::string_lit:
      return fmt::format("{} {}", tokSpelling(t.kind), t.text);
    case Tok::error:
      return fmt::format("invalid token '{}'", t.text);
    default:
      return tokSpelling(t.kind);
    }
  }

  /// Reports an error unless the parser is already recovering from one.
  void error(SourceLoc loc, std::string msg) {
    if (speculating_) {
      specFailed_ = true;
      return;
    }
    if (panicking_)
      return;
    panicking_ = true;
    diag_.error(loc, std::move(msg));
  }
  /// "expected X <context>, found Y" at the current token.
  void errorExpected(const std::string &what) {
    // A lexer error already explained this token.
    if (at(Tok::error)) {
      if (speculating_)
        specFailed_ = true;
      else
        panicking_ = true;
      return;
    }
    // At a line break, point just past the previous token: that is where
    // something is missing.
    if (tok().newlineBefore && pos_ > 0 && !at(Tok::eof) &&
        !opensLine(toks_[pos_ - 1].kind)) {
      const Token &prev = toks_[pos_ - 1];
      SourceLoc end{prev.loc.buffer, prev.loc.offset + static_cast<uint32_t>(prev.text.size())};
      error(end, fmt::format("expected {}, found end of line", what));
      return;
    }
    error(tok().loc, fmt::format("expected {}, found {}", what, describe(tok())));
  }
  /// Tokens after which a line break is expected, not a sign of truncation.
  static bool opensLine(Tok k) {
    switch (k) {
    case Tok::l_brace: case Tok::l_paren: case Tok::l_brack: case Tok::comma:
    case Tok::semi: case Tok::r_brace: case Tok::fat_arrow: case Tok::arrow:
    case Tok::equal:
      return true;
    default:
      return false;
    }
  }
  /// Diagnostic texts are built only when an error is reported: `context`
  /// is a string or a callable returning one.
  template <typename F> static std::string text(F &&context) {
    if constexpr (std::is_invocable_v<F>)
      return context();
    else
      return std::string(context);
  }
  template <typename F> bool expect(Tok k, F &&context) {
    if (consume(k))
      return true;
    errorExpected(fmt::format("{} {}", tokSpelling(k), text(context)));
    return false;
  }
  template <typename F> bool expectIdent(Ident &out, F &&what) {
    if (!at(Tok::ident)) {
      errorExpected(text(what));
      return false;
    }
    out = {std::string(tok().text), tok().loc};
    advance();
    return true;
  }
  /// True if no whitespace separates the current token from the previous
  /// one: `f<T>(x)` opens generic arguments, `a < b` is a comparison.
  bool gluedToPrevious() const {
    if (pos_ == 0)
      return false;
    const Token &prev = toks_[pos_ - 1];
    return prev.loc.offset + prev.text.size() == tok().loc.offset;
  }
  /// Parses `item (',' item)* ','?` up to (not including) `close`; `one`
  /// parses an item and returns false on failure. `trailing` reports a final
  /// comma, which makes `(T,)` a one-element tuple.
  template <typename F> bool parseList(Tok close, F one, bool *trailing = nullptr) {
    bool comma = false;
    while (!at(close)) {
      if (!one())
        return false;
      comma = consume(Tok::comma);
      if (!comma)
        break;
    }
    if (trailing)
      *trailing = comma;
    return true;
  }
  bool failed() const { return speculating_ ? specFailed_ : false; }

  /// Restores the chain count when a binary loop ends.
  struct ChainScope {
    Parser &p;
    unsigned saved;
    explicit ChainScope(Parser &parser) : p(parser), saved(parser.chain_) {}
    ~ChainScope() { p.chain_ = saved; }
    /// Counts one more operator; false (after reporting) past the limit.
    bool link(SourceLoc loc) {
      if (++p.chain_ <= kMaxChain)
        return true;
      p.error(loc, fmt::format("expression too long: more than {} operators in a chain; split it "
                               "with 'let'",
                               kMaxChain));
      return false;
    }
  };

  struct DepthGuard {
    Parser &p;
    bool ok;
    explicit DepthGuard(Parser &parser) : p(parser), ok(++p.depth_ <= kMaxNesting) {
      if (!ok)
        p.error(p.tok().loc, fmt::format("nesting deeper than {} levels", kMaxNesting));
    }
    ~DepthGuard() { --p.depth_; }
  };

  //===--------------------------------------------------------------------===//
  // Recovery
  //===--------------------------------------------------------------------===//
  static bool isItemStart(Tok k) {
    switch (k) {
    case Tok::kw_pub: case Tok::kw_block: case Tok::kw_fn: case Tok::kw_op:
    case Tok::kw_entry: case Tok::kw_struct: case Tok::kw_enum:
    case Tok::kw_const: case Tok::kw_reducer: case Tok::kw_import:
    case Tok::kw_module:
      return true;
    default:
      return false;
    }
  }
  static bool isMemberStart(Tok k) {
    switch (k) {
    case Tok::kw_param: case Tok::kw_buffer: case Tok::kw_state: case Tok::kw_sub:
    case Tok::kw_fn: case Tok::kw_op: case Tok::kw_entry: case Tok::kw_pub:
      return true;
    default:
      return false;
    }
  }
  /// Skips to the next token at this nesting level that satisfies `stop`
  /// (always stopping at an unmatched closing brace or end of file).
  /// `startNest` is the bracket nesting where the construct began: brackets
  /// opened since then are closed before a boundary counts.
  /// With `bracesOnly`, parentheses and brackets are ignored: a declaration
  /// keyword at the start of a line ends even an unclosed '('.
  template <typename Pred>
  void skipUntil(size_t startNest, Pred stop, bool bracesOnly = false) {
    // At a line break, an unclosed '(' or '[' is most likely a forgotten
    // closer: only braces opened since the construct began still count.
    int depth = 0;
    for (size_t i = startNest; i < open_.size(); ++i)
      if (open_[i] == Tok::l_brace || (!bracesOnly && !tok().newlineBefore))
        ++depth;
    size_t start = pos_;
    auto opens = [&] {
      return at(Tok::l_brace) || (!bracesOnly && (at(Tok::l_paren) || at(Tok::l_brack)));
    };
    auto closes = [&] {
      return at(Tok::r_brace) || (!bracesOnly && (at(Tok::r_paren) || at(Tok::r_brack)));
    };
    while (!at(Tok::eof)) {
      if (depth == 0 && (pos_ != start || tok().newlineBefore) && stop(tok()))
        break;
      if (depth == 0 && at(Tok::r_brace))
        break;
      if (opens())
        ++depth;
      else if (closes())
        depth = depth > 0 ? depth - 1 : 0;
      advance();
    }
    if (open_.size() > startNest)
      open_.resize(startNest);
    panicking_ = false;
  }
  void syncStatement(size_t startNest) {
    skipUntil(startNest, [](const Token &t) { return t.newlineBefore || t.is(Tok::semi); });
    consume(Tok::semi);
  }
  void syncMember(size_t startNest) {
    skipUntil(
        startNest, [](const Token &t) { return t.newlineBefore && isMemberStart(t.kind); },
        /*bracesOnly=*/true);
  }
  void syncItem(size_t startNest) {
    skipUntil(
        startNest, [](const Token &t) { return t.newlineBefore && isItemStart(t.kind); },
        /*bracesOnly=*/true);
  }

  //===--------------------------------------------------------------------===//
  // Grammar
  //===--------------------------------------------------------------------===//
  bool parsePath(std::vector<Ident> &path, const char *what);
  bool parseImport(Module &m);
  DeclPtr parseItem();
  DeclPtr parseBlockDecl(SourceLoc loc, bool isPub);
  DeclPtr parseMember(SourceLoc loc);
  std::unique_ptr<FunctionDecl> parseFunction(SourceLoc loc, bool isPub);
  DeclPtr parseStruct(SourceLoc loc, bool isPub);
  DeclPtr parseEnum(SourceLoc loc, bool isPub);
  DeclPtr parseConst(SourceLoc loc, bool isPub);
  DeclPtr parseReducer(SourceLoc loc, bool isPub);
  bool parseGenericParams(std::vector<GenericParam> &out);
  bool parseWhere(std::vector<Constraint> &out);
  bool parseParams(std::vector<Param> &out, const char *ownerKind, const std::string &owner);

  DimExprPtr parseDim();
  DimExprPtr parseDimMul();
  DimExprPtr parseDimUnary();
  DimExprPtr parseDimAtom();
  bool parseDimUnits(std::vector<DimUnit> &out, Tok close, bool allowDtype);
  bool parseGenericArgs(std::vector<GenericArg> &out);
  bool parseGenericArg(GenericArg &out);

  TypeExprPtr parseType();
  TypeExprPtr parseTypeAtom();

  bool parseBlock(Block &out, llvm::function_ref<std::string()> context);
  StmtPtr parseStatement();
  bool endStatement();

  ExprPtr parseExpr();
  ExprPtr parseOr();
  ExprPtr parseAnd();
  ExprPtr parseCmp();
  ExprPtr parseAdd();
  ExprPtr parseMul();
  ExprPtr parseCast();
  ExprPtr parseUnary();
  ExprPtr parsePostfix();
  ExprPtr parsePrimary();
  ExprPtr parseIf();
  ExprPtr parseMatch();
  ExprPtr parseBracket();
  ExprPtr parseParenOrTuple();
  ExprPtr parseStructLit(ExprPtr pathExpr, std::vector<GenericArg> gargs, bool hasG);
  ExprPtr parseReduction(ExprPtr reducer, std::vector<GenericArg> gargs, bool hasG, SourceLoc loc);
  bool looksLikeBinders() const;
  bool looksLikeStructLit() const;
  bool tryGenericCallArgs(std::vector<GenericArg> &out);
  bool parseIndexItems(std::vector<IndexItem> &items, SourceLoc open);
  bool parseArgs(std::vector<ExprPtr> &args) {
    return parseList(Tok::r_paren, [&] {
      args.push_back(parseExpr());
      return args.back() != nullptr;
    });
  }
  PatternPtr parsePattern();
  ExprPtr parseNumber();

  bool exprToPath(const Expr *e, std::vector<Ident> &path);

  DiagnosticEngine &diag_;
  uint32_t buffer_;
  std::vector<Token> toks_;
  size_t pos_ = 0;
  bool panicking_ = false;
  bool speculating_ = false;
  bool specFailed_ = false;
  bool noStructLit_ = false;
  unsigned depth_ = 0;
  unsigned chain_ = 0;
  std::vector<Tok> open_; // brackets opened and not yet closed (for recovery)
};

//===----------------------------------------------------------------------===//
// Module and items
//===----------------------------------------------------------------------===//

std::unique_ptr<Module> Parser::parseModule() {
  auto m = std::make_unique<Module>();
  m->buffer = buffer_;
  if (at(Tok::kw_module)) {
    m->loc = tok().loc;
    advance();
    if (!parsePath(m->path, "module path after 'module'"))
      syncItem(0);
  }
  while (!at(Tok::eof) && !diag_.limitReached()) {
    if (at(Tok::kw_import) && !m->decls.empty()) {
      error(tok().loc, "imports must come before the first item of the file");
      advance();
      syncItem(open_.size());
      continue;
    }
    if (at(Tok::kw_import)) {
      if (!parseImport(*m))
        syncItem(open_.size());
      continue;
    }
    if (at(Tok::kw_module)) {
      error(tok().loc, "'module' must be the first line of a file and appear "
                       "only once");
      advance();
      syncItem(open_.size());
      continue;
    }
    size_t before = pos_;
    open_.clear();
    if (DeclPtr d = parseItem()) {
      m->decls.push_back(std::move(d));
      continue;
    }
    if (pos_ == before)
      advance(); // an unparseable token: step over it
    syncItem(0);
    if (at(Tok::r_brace))
      advance(); // a stray '}'
  }
  return m;
}

bool Parser::parsePath(std::vector<Ident> &path, const char *what) {
  Ident id;
  if (!expectIdent(id, what))
    return false;
  path.push_back(std::move(id));
  while (at(Tok::dot) && peek().is(Tok::ident)) {
    advance();
    path.push_back({std::string(tok().text), tok().loc});
    advance();
  }
  return true;
}

bool Parser::parseImport(Module &m) {
  Import imp;
  imp.loc = tok().loc;
  advance();
  if (!parsePath(imp.path, "module path after 'import'"))
    return false;
  if (at(Tok::dot) && peek().is(Tok::l_brace)) {
    advance();
    advance();
    imp.hasItems = true;
    while (!at(Tok::r_brace)) {
      ImportItem item;
      if (!expectIdent(item.name, "name of an imported item"))
        return false;
      if (consume(Tok::kw_as) && !expectIdent(item.alias, "alias after 'as'"))
        return false;
      imp.items.push_back(std::move(item));
      if (!consume(Tok::comma))
        break;
    }
    if (!expect(Tok::r_brace, "to close the import list"))
      return false;
    if (imp.items.empty()) {
      error(imp.loc, "import list is empty: name at least one item");
      return false;
    }
  } else if (at(Tok::dot)) {
    advance();
    errorExpected("'{' or a module name after '.' in import");
    return false;
  } else if (consume(Tok::kw_as)) {
    if (!expectIdent(imp.alias, "alias after 'as'"))
      return false;
  }
  m.imports.push_back(std::move(imp));
  return true;
}

DeclPtr Parser::parseItem() {
  SourceLoc loc = tok().loc;
  bool isPub = consume(Tok::kw_pub);
  switch (tok().kind) {
  case Tok::kw_block:
    return parseBlockDecl(loc, isPub);
  case Tok::kw_fn:
  case Tok::kw_op:
  case Tok::kw_entry:
    return parseFunction(loc, isPub);
  case Tok::kw_struct:
    return parseStruct(loc, isPub);
  case Tok::kw_enum:
    return parseEnum(loc, isPub);
  case Tok::kw_const:
    return parseConst(loc, isPub);
  case Tok::kw_reducer:
    return parseReducer(loc, isPub);
  case Tok::kw_param:
  case Tok::kw_buffer:
  case Tok::kw_state:
  case Tok::kw_sub:
    error(tok().loc, fmt::format("{} member outside a block: members are "
                                 "declared inside 'block Name {{ ... }}'",
                                 tok().text));
    return nullptr;
  case Tok::kw_import:
    error(tok().loc, "imports must come before the first item of the file");
    return nullptr;
  default:
    errorExpected(isPub ? std::string("an item after 'pub'")
                        : std::string("an item (block, fn, op, entry, struct, "
                                      "enum, const, reducer or import)"));
    return nullptr;
  }
}

bool Parser::parseGenericParams(std::vector<GenericParam> &out) {
  if (!consume(Tok::less))
    return true;
  while (!at(Tok::greater)) {
    GenericParam g;
    if (!expectIdent(g.name, "generic parameter name"))
      return false;
    if (!expect(Tok::colon, [&] { return fmt::format("after generic parameter '{}' (its kind: "
                                        "dim, shape or dtype)",
                                        g.name.name); }))
      return false;
    if (!at(Tok::ident)) {
      errorExpected(fmt::format("kind of generic '{}' (dim, shape or dtype)", g.name.name));
      return false;
    }
    std::string_view kind = tok().text;
    if (kind == "dim")
      g.kind = GenericKind::Dim;
    else if (kind == "shape")
      g.kind = GenericKind::Shape;
    else if (kind == "dtype")
      g.kind = GenericKind::Dtype;
    else {
      error(tok().loc, fmt::format("unknown generic kind '{}' for '{}': expected "
                                   "dim, shape or dtype",
                                   kind, g.name.name));
      return false;
    }
    advance();
    if (g.kind == GenericKind::Dtype && at(Tok::l_paren)) {
      advance();
      if (!expectIdent(g.dtypeClass, "dtype class (e.g. float, int, any)"))
        return false;
      if (!expect(Tok::r_paren, "after dtype class"))
        return false;
    }
    if (consume(Tok::equal)) {
      g.defaultValue = std::make_unique<GenericArg>();
      if (!parseGenericArg(*g.defaultValue))
        return false;
    }
    out.push_back(std::move(g));
    if (!consume(Tok::comma))
      break;
  }
  return expect(Tok::greater, "to close the generic parameter list");
}

bool Parser::parseWhere(std::vector<Constraint> &out) {
  if (!consume(Tok::kw_where))
    return true;
  do {
    Constraint c;
    c.loc = tok().loc;
    if (!(c.lhs = parseDim()))
      return false;
    switch (tok().kind) {
    case Tok::eq_eq: c.op = BinaryOp::Eq; break;
    case Tok::bang_eq: c.op = BinaryOp::Ne; break;
    case Tok::less: c.op = BinaryOp::Lt; break;
    case Tok::less_eq: c.op = BinaryOp::Le; break;
    case Tok::greater: c.op = BinaryOp::Gt; break;
    case Tok::greater_eq: c.op = BinaryOp::Ge; break;
    default:
      errorExpected("a comparison (==, !=, <, <=, >, >=) in 'where' constraint");
      return false;
    }
    advance();
    if (!(c.rhs = parseDim()))
      return false;
    out.push_back(std::move(c));
  } while (consume(Tok::comma));
  return true;
}

bool Parser::parseParams(std::vector<Param> &out, const char *ownerKind,
                         const std::string &owner) {
  if (!expect(Tok::l_paren, [&] { return fmt::format("to open the parameter list of {} '{}'",
                                        ownerKind, owner); }))
    return false;
  while (!at(Tok::r_paren)) {
    Param p;
    if (!expectIdent(p.name, "parameter name"))
      return false;
    if (!expect(Tok::colon, [&] { return fmt::format("after parameter name '{}' (parameters "
                                        "need a type)",
                                        p.name.name); }))
      return false;
    if (!(p.type = parseType()))
      return false;
    out.push_back(std::move(p));
    if (!consume(Tok::comma))
      break;
  }
  return expect(Tok::r_paren, "to close the parameter list");
}

DeclPtr Parser::parseBlockDecl(SourceLoc loc, bool isPub) {
  advance(); // 'block'
  auto b = std::make_unique<BlockDecl>(loc);
  b->isPub = isPub;
  if (!expectIdent(b->name, "block name after 'block'"))
    return nullptr;
  if (!parseGenericParams(b->generics) || !parseWhere(b->constraints))
    return nullptr;
  if (!expect(Tok::l_brace, [&] { return fmt::format("to open the body of block '{}'", b->name.name); }))
    return nullptr;
  while (!at(Tok::r_brace) && !at(Tok::eof) && !diag_.limitReached()) {
    size_t before = pos_;
    size_t startNest = open_.size();
    SourceLoc mloc = tok().loc;
    DeclPtr d;
    if (at(Tok::kw_pub) || at(Tok::kw_fn) || at(Tok::kw_op) || at(Tok::kw_entry)) {
      bool pub = consume(Tok::kw_pub);
      if (at(Tok::kw_fn) || at(Tok::kw_op) || at(Tok::kw_entry))
        d = parseFunction(mloc, pub);
      else if (at(Tok::kw_param) || at(Tok::kw_buffer) || at(Tok::kw_state) || at(Tok::kw_sub))
        error(tok().loc, "members cannot be 'pub': a block's members are reached "
                         "through its instance");
      else
        errorExpected("'fn', 'op' or 'entry' after 'pub' in a block");
    } else if (at(Tok::kw_param) || at(Tok::kw_buffer) || at(Tok::kw_state) ||
               at(Tok::kw_sub)) {
      d = parseMember(mloc);
    } else if (at(Tok::kw_block) || at(Tok::kw_struct) || at(Tok::kw_enum)) {
      error(tok().loc, fmt::format("'{}' cannot be nested in a block: declare it "
                                   "at module level",
                                   tok().text));
    } else {
      errorExpected(fmt::format("a member (param, buffer, state, sub) or a "
                                "function (fn, op, entry) in block '{}'",
                                b->name.name));
    }
    if (d) {
      b->body.push_back(std::move(d));
      continue;
    }
    if (pos_ == before)
      advance();
    syncMember(startNest);
  }
  if (!expect(Tok::r_brace, [&] { return fmt::format("to close block '{}'", b->name.name); }))
    return nullptr;
  return b;
}

DeclPtr Parser::parseMember(SourceLoc loc) {
  MemberKind kind = at(Tok::kw_param)    ? MemberKind::Param
                    : at(Tok::kw_buffer) ? MemberKind::Buffer
                    : at(Tok::kw_state)  ? MemberKind::State
                                         : MemberKind::Sub;
  std::string kw(tok().text);
  advance();
  auto m = std::make_unique<MemberDecl>(kind, loc);
  if (!expectIdent(m->name, [&] { return fmt::format("member name after '{}'", kw); }))
    return nullptr;
  if (!expect(Tok::colon, [&] { return fmt::format("after {} name '{}' (members need a type)", kw,
                                      m->name.name); }))
    return nullptr;
  if (!(m->type = parseType()))
    return nullptr;
  if (consume(Tok::equal) && !(m->init = parseExpr()))
    return nullptr;
  if (!endStatement())
    return nullptr;
  return m;
}

std::unique_ptr<FunctionDecl> Parser::parseFunction(SourceLoc loc, bool isPub) {
  auto f = std::make_unique<FunctionDecl>(loc);
  f->isPub = isPub;
  f->fnKind = at(Tok::kw_fn) ? FunctionKind::Fn
              : at(Tok::kw_op) ? FunctionKind::Op
                               : FunctionKind::Entry;
  const char *kw = spelling(f->fnKind);
  advance();
  if (!expectIdent(f->name, [&] { return fmt::format("function name after '{}'", kw); }))
    return nullptr;
  if (!parseGenericParams(f->generics))
    return nullptr;
  if (!parseParams(f->params, kw, f->name.name))
    return nullptr;
  if (consume(Tok::arrow) && !(f->result = parseType()))
    return nullptr;
  if (!parseWhere(f->constraints))
    return nullptr;
  if (!parseBlock(f->body, [&] { return fmt::format("to open the body of {} '{}'", kw, f->name.name); }))
    return nullptr;
  return f;
}

DeclPtr Parser::parseStruct(SourceLoc loc, bool isPub) {
  advance();
  auto s = std::make_unique<StructDecl>(loc);
  s->isPub = isPub;
  if (!expectIdent(s->name, "struct name after 'struct'"))
    return nullptr;
  if (!parseGenericParams(s->generics) || !parseWhere(s->constraints))
    return nullptr;
  if (!expect(Tok::l_brace, [&] { return fmt::format("to open the fields of struct '{}'", s->name.name); }))
    return nullptr;
  while (!at(Tok::r_brace)) {
    Param p;
    if (!expectIdent(p.name, "field name"))
      return nullptr;
    if (!expect(Tok::colon, [&] { return fmt::format("after field name '{}'", p.name.name); }))
      return nullptr;
    if (!(p.type = parseType()))
      return nullptr;
    s->fields.push_back(std::move(p));
    if (!consume(Tok::comma) && !tok().newlineBefore)
      break;
  }
  if (!expect(Tok::r_brace, [&] { return fmt::format("to close struct '{}'", s->name.name); }))
    return nullptr;
  return s;
}

DeclPtr Parser::parseEnum(SourceLoc loc, bool isPub) {
  advance();
  auto e = std::make_unique<EnumDecl>(loc);
  e->isPub = isPub;
  if (!expectIdent(e->name, "enum name after 'enum'"))
    return nullptr;
  if (!parseGenericParams(e->generics))
    return nullptr;
  if (!expect(Tok::l_brace, [&] { return fmt::format("to open the variants of enum '{}'", e->name.name); }))
    return nullptr;
  while (!at(Tok::r_brace)) {
    EnumVariant v;
    if (!expectIdent(v.name, "variant name"))
      return nullptr;
    if (consume(Tok::l_paren)) {
      v.hasPayload = true;
      if (!parseList(Tok::r_paren, [&] {
            v.payload.push_back(parseType());
            return v.payload.back() != nullptr;
          }))
        return nullptr;
      if (!expect(Tok::r_paren, "to close the variant's payload types"))
        return nullptr;
    }
    e->variants.push_back(std::move(v));
    if (!consume(Tok::comma) && !tok().newlineBefore)
      break;
  }
  if (!expect(Tok::r_brace, [&] { return fmt::format("to close enum '{}'", e->name.name); }))
    return nullptr;
  if (e->variants.empty()) {
    error(e->name.loc, fmt::format("enum '{}' has no variants", e->name.name));
    return nullptr;
  }
  return e;
}

DeclPtr Parser::parseConst(SourceLoc loc, bool isPub) {
  advance();
  auto c = std::make_unique<ConstDecl>(loc);
  c->isPub = isPub;
  if (!expectIdent(c->name, "constant name after 'const'"))
    return nullptr;
  if (consume(Tok::colon) && !(c->type = parseType()))
    return nullptr;
  if (!expect(Tok::equal, [&] { return fmt::format("and a value for constant '{}'", c->name.name); }))
    return nullptr;
  if (!(c->init = parseExpr()) || !endStatement())
    return nullptr;
  return c;
}

DeclPtr Parser::parseReducer(SourceLoc loc, bool isPub) {
  advance();
  auto r = std::make_unique<ReducerDecl>(loc);
  r->isPub = isPub;
  if (!expectIdent(r->name, "reducer name after 'reducer'"))
    return nullptr;
  if (!parseGenericParams(r->generics))
    return nullptr;
  if (consume(Tok::colon)) {
    do {
      Ident p;
      if (!expectIdent(p, "reducer property (associative, commutative)"))
        return nullptr;
      if (p.name != "associative" && p.name != "commutative") {
        error(p.loc, fmt::format("unknown reducer property '{}': expected "
                                 "'associative' or 'commutative'",
                                 p.name));
        return nullptr;
      }
      r->properties.push_back(std::move(p));
    } while (consume(Tok::comma));
  }
  if (!parseWhere(r->constraints))
    return nullptr;
  if (!expect(Tok::l_brace, [&] { return fmt::format("to open the body of reducer '{}'", r->name.name); }))
    return nullptr;
  static const char *const kParts[] = {"identity", "lift", "combine", "finalize"};
  while (!at(Tok::r_brace) && !at(Tok::eof)) {
    SourceLoc ploc = tok().loc;
    if (!at(Tok::ident) || (tok().text != "identity" && tok().text != "lift" &&
                            tok().text != "combine" && tok().text != "finalize")) {
      errorExpected("a reducer part (identity, lift, combine or finalize)");
      return nullptr;
    }
    auto f = std::make_unique<FunctionDecl>(ploc);
    f->name = {std::string(tok().text), ploc};
    advance();
    for (auto &prev : r->parts)
      if (prev->name.name == f->name.name) {
        error(ploc, fmt::format("reducer '{}' defines '{}' twice", r->name.name,
                                f->name.name));
        return nullptr;
      }
    if (!parseParams(f->params, "reducer part", f->name.name))
      return nullptr;
    if (!expect(Tok::arrow, [&] { return fmt::format("and a result type for reducer part '{}'",
                                        f->name.name); }))
      return nullptr;
    if (!(f->result = parseType()))
      return nullptr;
    if (!parseBlock(f->body, [&] { return fmt::format("to open reducer part '{}'", f->name.name); }))
      return nullptr;
    r->parts.push_back(std::move(f));
  }
  if (!expect(Tok::r_brace, [&] { return fmt::format("to close reducer '{}'", r->name.name); }))
    return nullptr;
  for (const char *part : kParts) {
    bool found = false;
    for (auto &p : r->parts)
      found |= p->name.name == part;
    if (!found) {
      error(r->name.loc, fmt::format("reducer '{}' is missing its '{}' part (a "
                                     "reducer defines identity, lift, combine "
                                     "and finalize)",
                                     r->name.name, part));
      return nullptr;
    }
  }
  return r;
}

//===----------------------------------------------------------------------===//
// Dimensions and generic arguments
//===----------------------------------------------------------------------===//

static bool parseInt64(std::string_view digits, int64_t &out) {
  std::string clean;
  for (char c : digits)
    if (c != '_')
      clean += c;
  int base = 10;
  std::string_view s = clean;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && p == s.data() + s.size();
}

DimExprPtr Parser::parseDim() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  DimExprPtr lhs = parseDimMul();
  ChainScope chain(*this);
  while (lhs && (at(Tok::plus) || at(Tok::minus))) {
    char op = at(Tok::plus) ? '+' : '-';
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    DimExprPtr rhs = parseDimMul();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryDim>(op, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

DimExprPtr Parser::parseDimMul() {
  DimExprPtr lhs = parseDimUnary();
  ChainScope chain(*this);
  while (lhs && (at(Tok::star) || at(Tok::slash) || at(Tok::percent))) {
    char op = at(Tok::star) ? '*' : at(Tok::slash) ? '/' : '%';
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    DimExprPtr rhs = parseDimUnary();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryDim>(op, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

DimExprPtr Parser::parseDimUnary() {
  if (at(Tok::minus)) {
    SourceLoc loc = tok().loc;
    advance();
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    DimExprPtr d = parseDimUnary();
    return d ? std::make_unique<NegDim>(std::move(d), loc) : nullptr;
  }
  return parseDimAtom();
}

DimExprPtr Parser::parseDimAtom() {
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case Tok::int_lit: {
    auto [digits, suffix] = splitNumberSuffix(tok().text);
    int64_t v;
    if (!suffix.empty()) {
      error(loc, fmt::format("dimension '{}' cannot have a dtype suffix", tok().text));
      return nullptr;
    }
    if (!parseInt64(digits, v)) {
      error(loc, fmt::format("integer '{}' does not fit in 64 bits", tok().text));
      return nullptr;
    }
    advance();
    return std::make_unique<IntDim>(v, loc);
  }
  case Tok::ident: {
    std::string name(tok().text);
    if ((name == "min" || name == "max") && peek().is(Tok::l_paren)) {
      advance();
      advance();
      DimExprPtr a = parseDim();
      if (!a || !expect(Tok::comma, [&] { return fmt::format("between the two arguments of {}", name); }))
        return nullptr;
      DimExprPtr b = parseDim();
      if (!b || !expect(Tok::r_paren, [&] { return fmt::format("to close {}(...)", name); }))
        return nullptr;
      return std::make_unique<MinMaxDim>(name == "max", std::move(a), std::move(b), loc);
    }
    advance();
    return std::make_unique<NameDim>(std::move(name), loc);
  }
  case Tok::hash: {
    advance();
    if (!at(Tok::ident)) {
      errorExpected("shape pack name after '#'");
      return nullptr;
    }
    std::string name(tok().text);
    advance();
    return std::make_unique<PackSizeDim>(std::move(name), loc);
  }
  case Tok::l_paren: {
    advance();
    DimExprPtr d = parseDim();
    if (!d || !expect(Tok::r_paren, "to close the parenthesized dimension"))
      return nullptr;
    return d;
  }
  default:
    errorExpected("a dimension (integer, generic name, #Pack, min/max or "
                  "parenthesized expression)");
    return nullptr;
  }
}

bool Parser::parseDimUnits(std::vector<DimUnit> &out, Tok close, bool allowDtype) {
  while (!at(close) && !(allowDtype && at(Tok::semi))) {
    DimUnit u;
    u.loc = tok().loc;
    if (at(Tok::ident) && peek().is(Tok::ellipsis)) {
      u.pack = std::string(tok().text);
      advance();
      advance();
    } else if (!(u.dim = parseDim())) {
      return false;
    }
    out.push_back(std::move(u));
    if (!consume(Tok::comma))
      break;
  }
  return true;
}

bool Parser::parseGenericArg(GenericArg &out) {
  out.loc = tok().loc;
  if (consume(Tok::l_brack)) {
    out.isShape = true;
    if (!parseDimUnits(out.shape, Tok::r_brack, false))
      return false;
    return expect(Tok::r_brack, "to close the shape argument");
  }
  out.dim = parseDim();
  return out.dim != nullptr;
}

bool Parser::parseGenericArgs(std::vector<GenericArg> &out) {
  // '<' already consumed.
  if (!parseList(Tok::greater, [&] {
        out.emplace_back();
        return parseGenericArg(out.back());
      }))
    return false;
  return expect(Tok::greater, "to close the generic argument list");
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

TypeExprPtr Parser::parseType() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  TypeExprPtr t = parseTypeAtom();
  while (t && at(Tok::question) && !tok().newlineBefore) {
    SourceLoc loc = tok().loc;
    advance();
    t = std::make_unique<OptionalType>(std::move(t), loc);
  }
  return t;
}

TypeExprPtr Parser::parseTypeAtom() {
  SourceLoc loc = tok().loc;
  if (consume(Tok::l_paren)) {
    auto tup = std::make_unique<TupleType>(loc);
    bool trailingComma = false;
    if (!parseList(
            Tok::r_paren,
            [&] {
              TypeExprPtr e = parseType();
              tup->elements.push_back(std::move(e));
              return tup->elements.back() != nullptr;
            },
            &trailingComma))
      return nullptr;
    if (!expect(Tok::r_paren, "to close the tuple type"))
      return nullptr;
    if (tup->elements.size() == 1 && !trailingComma)
      return std::move(tup->elements[0]); // (T) is just T
    return tup;
  }
  if (consume(Tok::l_brack)) {
    auto arr = std::make_unique<ArrayType>(loc);
    if (!(arr->element = parseType()))
      return nullptr;
    if (!expect(Tok::semi, "between the element type and the length of an array "
                           "type '[T; N]'"))
      return nullptr;
    if (!(arr->size = parseDim()))
      return nullptr;
    if (!expect(Tok::r_brack, "to close the array type"))
      return nullptr;
    return arr;
  }
  if (!at(Tok::ident)) {
    errorExpected("a type");
    return nullptr;
  }
  auto named = std::make_unique<NamedType>(loc);
  if (!parsePath(named->path, "type name"))
    return nullptr;
  // As in expressions, only a glued '<' opens generic arguments, so that
  // `x as f32 < y` is a comparison.
  if (at(Tok::less) && gluedToPrevious()) {
    advance();
    named->hasGenericArgs = true;
    if (!parseGenericArgs(named->genericArgs))
      return nullptr;
  }
  if (at(Tok::l_brack) && !tok().newlineBefore) {
    advance();
    named->hasDims = true;
    if (!parseDimUnits(named->dims, Tok::r_brack, true))
      return nullptr;
    if (consume(Tok::semi) && !(named->dtype = parseType()))
      return nullptr;
    if (!expect(Tok::r_brack, [&] { return fmt::format("to close the dimensions of '{}'",
                                          joinPath(named->path)); }))
      return nullptr;
  }
  return named;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

bool Parser::parseBlock(Block &out, llvm::function_ref<std::string()> context) {
  out.loc = tok().loc;
  if (!expect(Tok::l_brace, context))
    return false;
  DepthGuard guard(*this);
  if (!guard.ok)
    return false;
  bool ok = true;
  while (!at(Tok::r_brace) && !at(Tok::eof) && !diag_.limitReached()) {
    if (consume(Tok::semi))
      continue;
    size_t before = pos_;
    size_t startNest = open_.size();
    if (StmtPtr s = parseStatement()) {
      out.stmts.push_back(std::move(s));
      continue;
    }
    ok = false;
    if (speculating_)
      return false;
    if (pos_ == before)
      advance();
    syncStatement(startNest);
  }
  out.endLoc = tok().loc;
  if (!expect(Tok::r_brace, "to close the block"))
    return false;
  // Errors inside were already reported and recovered from; the block itself
  // is well-formed, so callers keep going.
  (void)ok;
  return true;
}

bool Parser::endStatement() {
  if (at(Tok::semi)) {
    advance();
    return true;
  }
  if (tok().newlineBefore || at(Tok::r_brace) || at(Tok::eof))
    return true;
  errorExpected("end of statement (a newline or ';')");
  return false;
}

StmtPtr Parser::parseStatement() {
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case Tok::kw_let:
  case Tok::kw_var: {
    auto s = std::make_unique<LetStmt>(loc);
    s->isVar = at(Tok::kw_var);
    const char *kw = s->isVar ? "var" : "let";
    advance();
    if (!at(Tok::ident) && !at(Tok::l_paren) && !at(Tok::underscore)) {
      errorExpected(fmt::format("a name or a tuple pattern after '{}'", kw));
      return nullptr;
    }
    if (!(s->pattern = parsePattern()))
      return nullptr;
    if (consume(Tok::colon) && !(s->type = parseType()))
      return nullptr;
    if (!expect(Tok::equal, [&] { return fmt::format("and an initial value in '{}' (every "
                                        "binding is initialized)",
                                        kw); }))
      return nullptr;
    if (!(s->init = parseExpr()) || !endStatement())
      return nullptr;
    return s;
  }
  case Tok::kw_return: {
    auto s = std::make_unique<ReturnStmt>(loc);
    advance();
    if (!tok().newlineBefore && !at(Tok::r_brace) && !at(Tok::semi) && !at(Tok::eof))
      if (!(s->value = parseExpr()))
        return nullptr;
    if (!endStatement())
      return nullptr;
    return s;
  }
  case Tok::kw_while: {
    auto s = std::make_unique<WhileStmt>(loc);
    advance();
    bool saved = noStructLit_;
    noStructLit_ = true;
    s->cond = parseExpr();
    noStructLit_ = saved;
    if (!s->cond || !parseBlock(s->body, [&] { return std::string("to open the body of 'while'"); }))
      return nullptr;
    return s;
  }
  case Tok::kw_fn:
  case Tok::kw_op:
  case Tok::kw_entry:
  case Tok::kw_block:
  case Tok::kw_struct:
  case Tok::kw_enum:
  case Tok::kw_reducer:
    error(loc, fmt::format("'{}' declarations are not allowed inside a function "
                           "body",
                           tok().text));
    return nullptr;
  case Tok::kw_param:
  case Tok::kw_buffer:
  case Tok::kw_state:
  case Tok::kw_sub:
    error(loc, fmt::format("'{}' members are declared in the block body, not "
                           "inside a function",
                           tok().text));
    return nullptr;
  case Tok::kw_if:
  case Tok::kw_match: {
    // At statement start these are statements: the next line never continues
    // them as an operand.
    ExprPtr e = at(Tok::kw_if) ? parseIf() : parseMatch();
    if (!e)
      return nullptr;
    consume(Tok::semi);
    return std::make_unique<ExprStmt>(std::move(e), loc);
  }
  default:
    break;
  }
  ExprPtr e = parseExpr();
  if (!e)
    return nullptr;
  if (at(Tok::equal)) {
    SourceLoc eq = tok().loc;
    if (e->kind != Expr::Kind::Name && e->kind != Expr::Kind::Field) {
      error(eq, "invalid assignment target: expected a state member or a 'var' "
                "name on the left of '='");
      return nullptr;
    }
    advance();
    auto s = std::make_unique<AssignStmt>(loc);
    s->target = std::move(e);
    if (!(s->value = parseExpr()) || !endStatement())
      return nullptr;
    return s;
  }
  if (!endStatement())
    return nullptr;
  return std::make_unique<ExprStmt>(std::move(e), loc);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr Parser::parseExpr() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  return parseOr();
}

ExprPtr Parser::parseOr() {
  ExprPtr lhs = parseAnd();
  ChainScope chain(*this);
  while (lhs && at(Tok::pipe_pipe)) {
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    ExprPtr rhs = parseAnd();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(BinaryOp::Or, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

ExprPtr Parser::parseAnd() {
  ExprPtr lhs = parseCmp();
  ChainScope chain(*this);
  while (lhs && at(Tok::amp_amp)) {
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    ExprPtr rhs = parseCmp();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(BinaryOp::And, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

static bool cmpOp(Tok k, BinaryOp &op) {
  switch (k) {
  case Tok::eq_eq: op = BinaryOp::Eq; return true;
  case Tok::bang_eq: op = BinaryOp::Ne; return true;
  case Tok::less: op = BinaryOp::Lt; return true;
  case Tok::less_eq: op = BinaryOp::Le; return true;
  case Tok::greater: op = BinaryOp::Gt; return true;
  case Tok::greater_eq: op = BinaryOp::Ge; return true;
  default: return false;
  }
}

ExprPtr Parser::parseCmp() {
  ExprPtr lhs = parseAdd();
  BinaryOp op;
  if (!lhs || !cmpOp(tok().kind, op))
    return lhs;
  SourceLoc loc = tok().loc;
  advance();
  ExprPtr rhs = parseAdd();
  if (!rhs)
    return nullptr;
  BinaryOp op2;
  if (cmpOp(tok().kind, op2)) {
    error(tok().loc, fmt::format("comparison operators cannot be chained: write "
                                 "'a {} b && b {} c' instead",
                                 spelling(op), spelling(op2)));
    return nullptr;
  }
  return std::make_unique<BinaryExpr>(op, std::move(lhs), std::move(rhs), loc);
}

ExprPtr Parser::parseAdd() {
  ExprPtr lhs = parseMul();
  ChainScope chain(*this);
  while (lhs && (at(Tok::plus) || at(Tok::minus))) {
    BinaryOp op = at(Tok::plus) ? BinaryOp::Add : BinaryOp::Sub;
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    ExprPtr rhs = parseMul();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(op, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

ExprPtr Parser::parseMul() {
  ExprPtr lhs = parseCast();
  ChainScope chain(*this);
  while (lhs && (at(Tok::star) || at(Tok::slash) || at(Tok::percent))) {
    BinaryOp op = at(Tok::star) ? BinaryOp::Mul : at(Tok::slash) ? BinaryOp::Div : BinaryOp::Mod;
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    ExprPtr rhs = parseCast();
    if (!rhs)
      return nullptr;
    lhs = std::make_unique<BinaryExpr>(op, std::move(lhs), std::move(rhs), loc);
  }
  return lhs;
}

ExprPtr Parser::parseCast() {
  ExprPtr e = parseUnary();
  ChainScope chain(*this);
  while (e && at(Tok::kw_as)) {
    SourceLoc loc = tok().loc;
    if (!chain.link(loc))
      return nullptr;
    advance();
    TypeExprPtr t = parseType();
    if (!t)
      return nullptr;
    e = std::make_unique<CastExpr>(std::move(e), std::move(t), loc);
  }
  return e;
}

ExprPtr Parser::parseUnary() {
  if (at(Tok::minus) || at(Tok::bang) || at(Tok::hash)) {
    UnaryOp op = at(Tok::minus) ? UnaryOp::Neg : at(Tok::bang) ? UnaryOp::Not : UnaryOp::PackSize;
    SourceLoc loc = tok().loc;
    advance();
    DepthGuard guard(*this);
    if (!guard.ok)
      return nullptr;
    if (op == UnaryOp::PackSize) {
      // `#S` names a pack and nothing more (as in a dim): `# f(x)[i]` is
      // not the size of an expression.
      if (!at(Tok::ident)) {
        errorExpected("shape pack name after '#'");
        return nullptr;
      }
      auto name = std::make_unique<NameExpr>(std::string(tok().text), tok().loc);
      advance();
      return std::make_unique<UnaryExpr>(op, std::move(name), loc);
    }
    ExprPtr e = parseUnary();
    return e ? std::make_unique<UnaryExpr>(op, std::move(e), loc) : nullptr;
  }
  return parsePostfix();
}

/// After `name(`: a reduction header is a list of names then ':' (binders).
bool Parser::looksLikeBinders() const {
  // tok() is '('
  size_t i = 1;
  if (!peek(i).is(Tok::ident))
    return false;
  while (true) {
    if (!peek(i).is(Tok::ident))
      return false;
    ++i;
    if (peek(i).is(Tok::colon))
      return true;
    if (!peek(i).is(Tok::comma))
      return false;
    ++i;
  }
}

bool Parser::looksLikeStructLit() const {
  // tok() is '{'
  if (noStructLit_ || tok().newlineBefore)
    return false;
  if (peek().is(Tok::r_brace))
    return true;
  return peek().is(Tok::ident) && peek(2).is(Tok::colon);
}

bool Parser::tryGenericCallArgs(std::vector<GenericArg> &out) {
  // tok() is a '<' glued to the callee. Generic arguments are recognized when
  // the closing '>' is directly followed by '(' (or '{' for a struct literal);
  // otherwise the parser backtracks and reads a comparison.
  size_t save = pos_;
  std::vector<Tok> saveOpen = open_;
  bool savedSpec = speculating_, savedFailed = specFailed_;
  speculating_ = true;
  specFailed_ = false;
  advance();
  std::vector<GenericArg> args;
  bool ok = parseGenericArgs(args) && !specFailed_ &&
            ((at(Tok::l_paren) && !tok().newlineBefore) ||
             (at(Tok::l_brace) && !noStructLit_ && !tok().newlineBefore));
  speculating_ = savedSpec;
  specFailed_ = savedFailed;
  if (!ok) {
    pos_ = save;
    open_ = std::move(saveOpen);
    return false;
  }
  out = std::move(args);
  return true;
}

bool Parser::exprToPath(const Expr *e, std::vector<Ident> &path) {
  if (auto *n = dynamic_cast<const NameExpr *>(e)) {
    path.push_back({n->name, n->loc});
    return true;
  }
  if (auto *f = dynamic_cast<const FieldExpr *>(e)) {
    if (!exprToPath(f->base.get(), path))
      return false;
    path.push_back(f->field);
    return true;
  }
  return false;
}

ExprPtr Parser::parsePostfix() {
  ExprPtr e = parsePrimary();
  while (e) {
    SourceLoc loc = tok().loc;
    bool sameLine = !tok().newlineBefore;
    if (at(Tok::l_paren) && sameLine) {
      if (looksLikeBinders()) {
        e = parseReduction(std::move(e), {}, false, loc);
        continue;
      }
      advance();
      auto call = std::make_unique<CallExpr>(std::move(e), loc);
      if (!parseArgs(call->args) || !expect(Tok::r_paren, "to close the argument list"))
        return nullptr;
      e = std::move(call);
    } else if (at(Tok::less) && gluedToPrevious() &&
               (e->kind == Expr::Kind::Name || e->kind == Expr::Kind::Field)) {
      std::vector<GenericArg> gargs;
      if (!tryGenericCallArgs(gargs))
        break;
      SourceLoc ploc = tok().loc;
      if (at(Tok::l_brace)) {
        e = parseStructLit(std::move(e), std::move(gargs), true);
        continue;
      }
      if (looksLikeBinders()) {
        e = parseReduction(std::move(e), std::move(gargs), true, loc);
        continue;
      }
      advance();
      auto call = std::make_unique<CallExpr>(std::move(e), ploc);
      call->genericArgs = std::move(gargs);
      call->hasGenericArgs = true;
      if (!parseArgs(call->args) || !expect(Tok::r_paren, "to close the argument list"))
        return nullptr;
      e = std::move(call);
    } else if (at(Tok::l_brack) && sameLine) {
      advance();
      auto idx = std::make_unique<IndexExpr>(std::move(e), loc);
      if (!parseIndexItems(idx->items, loc))
        return nullptr;
      e = std::move(idx);
    } else if (at(Tok::dot)) {
      advance();
      if (at(Tok::int_lit)) {
        int64_t v;
        if (!parseInt64(tok().text, v) || v < 0 || v > INT32_MAX) {
          error(tok().loc, fmt::format("invalid tuple index '{}'", tok().text));
          return nullptr;
        }
        advance();
        e = std::make_unique<TupleIndexExpr>(std::move(e), static_cast<unsigned>(v), loc);
      } else {
        Ident field;
        if (!expectIdent(field, "field, method or tuple index after '.'"))
          return nullptr;
        e = std::make_unique<FieldExpr>(std::move(e), std::move(field), loc);
      }
    } else if (at(Tok::l_brace) && looksLikeStructLit() &&
               (e->kind == Expr::Kind::Name || e->kind == Expr::Kind::Field)) {
      e = parseStructLit(std::move(e), {}, false);
    } else {
      break;
    }
  }
  return e;
}

bool Parser::parseIndexItems(std::vector<IndexItem> &items, SourceLoc open) {
  // '[' consumed
  while (!at(Tok::r_brack)) {
    IndexItem it;
    it.loc = tok().loc;
    if (consume(Tok::ellipsis)) {
      it.kind = IndexItem::Kind::Ellipsis;
    } else {
      if (!at(Tok::colon)) {
        it.index = parseExpr();
        if (!it.index)
          return false;
      }
      if (consume(Tok::colon)) {
        it.kind = IndexItem::Kind::Slice;
        it.start = std::move(it.index);
        if (!at(Tok::colon) && !at(Tok::comma) && !at(Tok::r_brack))
          if (!(it.stop = parseExpr()))
            return false;
        if (consume(Tok::colon)) {
          it.hasStep = true;
          if (!at(Tok::comma) && !at(Tok::r_brack))
            if (!(it.step = parseExpr()))
              return false;
        }
      }
    }
    items.push_back(std::move(it));
    if (!consume(Tok::comma))
      break;
  }
  if (!expect(Tok::r_brack, "to close the index list"))
    return false;
  if (items.empty()) {
    error(open, "empty index list '[]': give an index, a slice or '...'");
    return false;
  }
  return true;
}

ExprPtr Parser::parseReduction(ExprPtr reducer, std::vector<GenericArg> gargs,
                               bool hasG, SourceLoc loc) {
  auto r = std::make_unique<ReductionExpr>(loc);
  r->reducer = std::move(reducer);
  r->genericArgs = std::move(gargs);
  r->hasGenericArgs = hasG;
  advance(); // '('
  bool saved = noStructLit_;
  noStructLit_ = false;
  while (!at(Tok::r_paren) && !at(Tok::kw_where)) {
    BinderGroup g;
    do {
      Ident name;
      if (!expectIdent(name, "index name in reduction"))
        return nullptr;
      g.names.push_back(std::move(name));
    } while (consume(Tok::comma));
    if (!expect(Tok::colon, [&] { return fmt::format("and a domain after reduction index '{}'",
                                        g.names.back().name); }))
      return nullptr;
    if (!(g.domain = parseExpr()))
      return nullptr;
    r->groups.push_back(std::move(g));
    if (!consume(Tok::comma))
      break;
  }
  if (consume(Tok::kw_where) && !(r->filter = parseExpr()))
    return nullptr;
  noStructLit_ = saved;
  if (!expect(Tok::r_paren, "to close the reduction's index list"))
    return nullptr;
  // The body binds tighter than '+': `sum(k: K) a[k] * b[k] + c` adds c once.
  if (!(r->body = parseMul()))
    return nullptr;
  return r;
}

ExprPtr Parser::parseStructLit(ExprPtr pathExpr, std::vector<GenericArg> gargs, bool hasG) {
  auto s = std::make_unique<StructLitExpr>(pathExpr->loc);
  if (!exprToPath(pathExpr.get(), s->path)) {
    error(pathExpr->loc, "expected a struct name before '{'");
    return nullptr;
  }
  s->genericArgs = std::move(gargs);
  s->hasGenericArgs = hasG;
  advance(); // '{'
  bool saved = noStructLit_;
  noStructLit_ = false;
  while (!at(Tok::r_brace)) {
    FieldInit f;
    if (!expectIdent(f.name, "field name in struct literal"))
      return nullptr;
    if (!expect(Tok::colon, [&] { return fmt::format("after field name '{}'", f.name.name); }))
      return nullptr;
    if (!(f.value = parseExpr()))
      return nullptr;
    s->fields.push_back(std::move(f));
    if (!consume(Tok::comma) && !tok().newlineBefore)
      break;
  }
  noStructLit_ = saved;
  if (!expect(Tok::r_brace, "to close the struct literal"))
    return nullptr;
  return s;
}

ExprPtr Parser::parseNumber() {
  SourceLoc loc = tok().loc;
  auto [digits, suffix] = splitNumberSuffix(tok().text);
  if (at(Tok::int_lit) && (suffix.empty() || suffix[0] != 'f') && suffix != "bf16") {
    int64_t v = -1; // stays -1 (from_chars leaves it) for 2^63
    if (!parseInt64(digits, v)) {
      uint64_t u;
      std::string clean;
      for (char c : digits)
        if (c != '_')
          clean += c;
      // 2^63 is allowed so that `-9223372036854775808` can be written.
      auto [p, ec] = std::from_chars(clean.data(), clean.data() + clean.size(), u);
      if (ec != std::errc() || u != (uint64_t(1) << 63)) {
        error(loc, fmt::format("integer literal '{}' does not fit in 64 bits", tok().text));
        return nullptr;
      }
    }
    auto e = std::make_unique<IntLitExpr>(loc);
    e->digits = std::string(digits);
    e->suffix = std::string(suffix);
    e->value = v >= 0 ? static_cast<uint64_t>(v) : uint64_t(1) << 63; // only 2^63 fails parseInt64
    advance();
    return e;
  }
  auto e = std::make_unique<FloatLitExpr>(loc);
  e->digits = std::string(digits);
  e->suffix = std::string(suffix);
  std::string clean;
  for (char c : digits)
    if (c != '_')
      clean += c;
  // strtod, not std::stod: out of range is a diagnostic here, not an
  // exception later. Underflow to 0 or a subnormal is accepted.
  errno = 0;
  char *end = nullptr;
  e->value = std::strtod(clean.c_str(), &end);
  if (std::isinf(e->value) || (errno == ERANGE && std::fabs(e->value) > 1.0)) {
    error(loc, fmt::format("float literal '{}' is out of range (the largest f64 is about 1.8e308)",
                           tok().text));
    return nullptr;
  }
  advance();
  return e;
}

static std::string unescape(std::string_view lit) {
  std::string s;
  for (size_t i = 1; i + 1 < lit.size(); ++i) {
    char c = lit[i];
    if (c == '\\' && i + 2 < lit.size()) {
      char n = lit[++i];
      switch (n) {
      case 'n': s += '\n'; break;
      case 't': s += '\t'; break;
      case 'r': s += '\r'; break;
      case '0': s += '\0'; break;
      default: s += n; break;
      }
    } else {
      s += c;
    }
  }
  return s;
}

ExprPtr Parser::parsePrimary() {
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case Tok::int_lit:
  case Tok::float_lit:
    return parseNumber();
  case Tok::kw_true:
  case Tok::kw_false: {
    bool v = at(Tok::kw_true);
    advance();
    return std::make_unique<BoolLitExpr>(v, loc);
  }
  case Tok::string_lit: {
    auto e = std::make_unique<StringLitExpr>(unescape(tok().text), loc);
    advance();
    return e;
  }
  case Tok::kw_none:
    advance();
    return std::make_unique<NoneLitExpr>(loc);
  case Tok::ident: {
    auto e = std::make_unique<NameExpr>(std::string(tok().text), loc);
    advance();
    return e;
  }
  case Tok::l_paren:
    return parseParenOrTuple();
  case Tok::l_brack:
    return parseBracket();
  case Tok::kw_if:
    return parseIf();
  case Tok::kw_match:
    return parseMatch();
  case Tok::l_brace: {
    auto b = std::make_unique<BlockExpr>(loc);
    bool saved = noStructLit_;
    noStructLit_ = false;
    bool ok = parseBlock(b->block, [&] { return std::string("to open a block"); });
    noStructLit_ = saved;
    return ok ? std::move(b) : nullptr;
  }
  default:
    errorExpected("an expression");
    return nullptr;
  }
}

ExprPtr Parser::parseParenOrTuple() {
  SourceLoc loc = tok().loc;
  advance();
  bool saved = noStructLit_;
  noStructLit_ = false;
  auto tup = std::make_unique<TupleExpr>(loc);
  bool trailingComma = false;
  if (!parseList(
          Tok::r_paren,
          [&] {
            tup->elements.push_back(parseExpr());
            return tup->elements.back() != nullptr;
          },
          &trailingComma))
    return nullptr;
  noStructLit_ = saved;
  if (!expect(Tok::r_paren, "to close the parenthesized expression"))
    return nullptr;
  if (tup->elements.size() == 1 && !trailingComma)
    return std::move(tup->elements[0]);
  return tup;
}

ExprPtr Parser::parseBracket() {
  SourceLoc loc = tok().loc;
  advance(); // '['
  bool saved = noStructLit_;
  noStructLit_ = false;
  if (at(Tok::ident) && peek().is(Tok::colon)) {
    auto c = std::make_unique<ComprehensionExpr>(loc);
    while (!at(Tok::r_brack)) {
      IndexBinder b;
      if (!expectIdent(b.name, "index name in comprehension"))
        return nullptr;
      if (!expect(Tok::colon, [&] { return fmt::format("and a domain after index '{}'", b.name.name); }))
        return nullptr;
      if (!(b.domain = parseExpr()))
        return nullptr;
      c->indices.push_back(std::move(b));
      if (!consume(Tok::comma))
        break;
    }
    noStructLit_ = saved;
    if (!expect(Tok::r_brack, "to close the comprehension's index list"))
      return nullptr;
    if (!(c->body = parseExpr()))
      return nullptr;
    return c;
  }
  auto a = std::make_unique<ArrayLitExpr>(loc);
  if (!parseList(Tok::r_brack, [&] {
        a->elements.push_back(parseExpr());
        return a->elements.back() != nullptr;
      }))
    return nullptr;
  noStructLit_ = saved;
  if (!expect(Tok::r_brack, "to close the array literal"))
    return nullptr;
  return a;
}

ExprPtr Parser::parseIf() {
  auto e = std::make_unique<IfExpr>(tok().loc);
  advance();
  bool saved = noStructLit_;
  noStructLit_ = true;
  e->cond = parseExpr();
  noStructLit_ = saved;
  if (!e->cond || !parseBlock(e->thenBlock, [&] { return std::string("to open the body of 'if'"); }))
    return nullptr;
  if (consume(Tok::kw_else)) {
    if (at(Tok::kw_if)) {
      DepthGuard guard(*this);
      if (!guard.ok || !(e->elseIf = parseIf()))
        return nullptr;
    } else {
      e->elseBlock = std::make_unique<Block>();
      if (!parseBlock(*e->elseBlock, [&] { return std::string("or 'if' after 'else'"); }))
        return nullptr;
    }
  }
  return e;
}

ExprPtr Parser::parseMatch() {
  auto m = std::make_unique<MatchExpr>(tok().loc);
  advance();
  bool saved = noStructLit_;
  noStructLit_ = true;
  m->scrutinee = parseExpr();
  noStructLit_ = saved;
  if (!m->scrutinee || !expect(Tok::l_brace, "to open the arms of 'match'"))
    return nullptr;
  while (!at(Tok::r_brace) && !at(Tok::eof)) {
    MatchArm arm;
    arm.loc = tok().loc;
    if (!(arm.pattern = parsePattern()))
      return nullptr;
    if (!expect(Tok::fat_arrow, "after the pattern of a match arm"))
      return nullptr;
    if (!(arm.body = parseExpr()))
      return nullptr;
    m->arms.push_back(std::move(arm));
    if (consume(Tok::comma))
      continue;
    if (!tok().newlineBefore && !at(Tok::r_brace) &&
        m->arms.back().body->kind != Expr::Kind::BlockExpr) {
      errorExpected("',' or a newline between match arms");
      return nullptr;
    }
  }
  if (!expect(Tok::r_brace, "to close 'match'"))
    return nullptr;
  if (m->arms.empty()) {
    error(m->loc, "'match' needs at least one arm");
    return nullptr;
  }
  return m;
}

PatternPtr Parser::parsePattern() {
  DepthGuard guard(*this);
  if (!guard.ok)
    return nullptr;
  SourceLoc loc = tok().loc;
  switch (tok().kind) {
  case Tok::underscore:
    advance();
    return std::make_unique<WildcardPattern>(loc);
  case Tok::kw_none: {
    advance();
    auto c = std::make_unique<CtorPattern>(loc);
    c->path.push_back({"none", loc});
    return c;
  }
  case Tok::int_lit:
  case Tok::float_lit:
  case Tok::string_lit:
  case Tok::kw_true:
  case Tok::kw_false:
  case Tok::minus: {
    ExprPtr lit;
    if (at(Tok::minus)) {
      advance();
      if (!at(Tok::int_lit) && !at(Tok::float_lit)) {
        errorExpected("a number after '-' in a pattern");
        return nullptr;
      }
      ExprPtr n = parseNumber();
      if (!n)
        return nullptr;
      lit = std::make_unique<UnaryExpr>(UnaryOp::Neg, std::move(n), loc);
    } else {
      lit = parsePrimary();
    }
    if (!lit)
      return nullptr;
    return std::make_unique<LiteralPattern>(std::move(lit), loc);
  }
  case Tok::l_paren: {
    advance();
    auto t = std::make_unique<TuplePattern>(loc);
    bool trailing = false;
    if (!parseList(
            Tok::r_paren,
            [&] {
              t->elements.push_back(parsePattern());
              return t->elements.back() != nullptr;
            },
            &trailing))
      return nullptr;
    if (!expect(Tok::r_paren, "to close the tuple pattern"))
      return nullptr;
    if (t->elements.size() == 1 && !trailing)
      return std::move(t->elements[0]);
    return t;
  }
  case Tok::ident: {
    std::vector<Ident> path;
    if (!parsePath(path, "pattern"))
      return nullptr;
    if (path.size() == 1 && !(at(Tok::l_paren) && !tok().newlineBefore))
      return std::make_unique<BindingPattern>(path[0].name, loc);
    auto c = std::make_unique<CtorPattern>(loc);
    c->path = std::move(path);
    if (at(Tok::l_paren) && !tok().newlineBefore) {
      advance();
      c->hasArgs = true;
      if (!parseList(Tok::r_paren, [&] {
            c->args.push_back(parsePattern());
            return c->args.back() != nullptr;
          }))
        return nullptr;
      if (!expect(Tok::r_paren, "to close the pattern's arguments"))
        return nullptr;
    }
    return c;
  }
  default:
    errorExpected("a pattern (a name, '_', a literal, 'none', 'some(x)', a "
                  "variant or a tuple)");
    return nullptr;
  }
}

} // namespace

std::unique_ptr<Module> linnet::parseModule(const SourceManager &sm,
                                            uint32_t buffer,
                                            DiagnosticEngine &diag) {
  // Lexer and parser errors carry the code "syntax" (Diagnostics.h).
  std::string outer = diag.setCategory("syntax");
  Parser p(sm, buffer, diag);
  std::unique_ptr<Module> m = p.parseModule();
  diag.setCategory(std::move(outer));
  return m;
}
