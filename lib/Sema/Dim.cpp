//===- Dim.cpp - Symbolic dimension expressions in normal form ------------===//
#include "linnet/Sema/Dim.h"

#include "linnet/ir/ir.hpp"
#include "linnet/Support/DimArith.h"

#include <algorithm>

using namespace linnet::sema;

thread_local uint64_t Dim::overflows_ = 0;

namespace {
// Checked arithmetic: dims come from user input and must never be UB. An
// overflow wraps (so the result is still defined) and is counted, and the
// caller that formed the dim reports it (Dim::OverflowCheck).
int64_t addW(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    Dim::noteOverflow();
  return r;
}
int64_t mulW(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    Dim::noteOverflow();
  return r;
}
// INT64_MIN / -1 and INT64_MIN % -1 are UB in C++.
int64_t divI(int64_t a, int64_t b) { return b == -1 ? mulW(a, -1) : a / b; }
int64_t remI(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
// Floored, as every consumer of dims computes them (DimArith.h); an
// overflow (INT64_MIN / -1) is noted, as the other operations note theirs.
int64_t floorDivI(int64_t a, int64_t b) {
  std::optional<int64_t> q = linnet::dimarith::apply(linnet::dimarith::Op::FloorDiv, a, b);
  if (!q)
    Dim::noteOverflow();
  return q.value_or(0);
}
int64_t floorModI(int64_t a, int64_t b) {
  std::optional<int64_t> r = linnet::dimarith::apply(linnet::dimarith::Op::Mod, a, b);
  if (!r)
    Dim::noteOverflow();
  return r.value_or(0);
}

int compareMonomials(const std::vector<AtomRef> &a, const std::vector<AtomRef> &b) {
  if (a.size() != b.size())
    return a.size() < b.size() ? -1 : 1;
  for (size_t i = 0; i < a.size(); ++i)
    if (int c = Dim::compareAtoms(*a[i], *b[i]))
      return c;
  return 0;
}
} // namespace

Dim::Dim(int64_t c) {
  if (c != 0)
    terms_.push_back({c, {}});
}

Dim Dim::fromAtom(AtomRef a) {
  Dim d;
  d.terms_.push_back({1, {std::move(a)}});
  return d;
}

Dim Dim::sym(std::string id, std::string name) {
  return fromAtom(std::make_shared<Atom>(Atom{Atom::Kind::Sym, std::move(id), std::move(name), {}}));
}
Dim Dim::packSize(std::string id, std::string name) {
  return fromAtom(
      std::make_shared<Atom>(Atom{Atom::Kind::PackSize, std::move(id), std::move(name), {}}));
}

int Dim::compareAtoms(const Atom &a, const Atom &b) {
  if (&a == &b)
    return 0;
  if (a.kind != b.kind)
    return a.kind < b.kind ? -1 : 1;
  if (int c = a.id.compare(b.id))
    return c < 0 ? -1 : 1;
  if (a.args.size() != b.args.size())
    return a.args.size() < b.args.size() ? -1 : 1;
  for (size_t i = 0; i < a.args.size(); ++i)
    if (int c = compare(a.args[i], b.args[i]))
      return c;
  return 0;
}

int Dim::compare(const Dim &a, const Dim &b) {
  if (a.terms_.size() != b.terms_.size())
    return a.terms_.size() < b.terms_.size() ? -1 : 1;
  for (size_t i = 0; i < a.terms_.size(); ++i) {
    if (int c = compareMonomials(a.terms_[i].atoms, b.terms_[i].atoms))
      return c;
    if (a.terms_[i].coeff != b.terms_[i].coeff)
      return a.terms_[i].coeff < b.terms_[i].coeff ? -1 : 1;
  }
  return 0;
}

void Dim::normalize() {
  for (Term &t : terms_)
    std::sort(t.atoms.begin(), t.atoms.end(),
              [](const AtomRef &x, const AtomRef &y) { return compareAtoms(*x, *y) < 0; });
  std::sort(terms_.begin(), terms_.end(), [](const Term &x, const Term &y) {
    return compareMonomials(x.atoms, y.atoms) < 0;
  });
  std::vector<Term> merged;
  for (Term &t : terms_) {
    if (!merged.empty() && compareMonomials(merged.back().atoms, t.atoms) == 0)
      merged.back().coeff = addW(merged.back().coeff, t.coeff);
    else
      merged.push_back(std::move(t));
  }
  merged.erase(std::remove_if(merged.begin(), merged.end(),
                              [](const Term &t) { return t.coeff == 0; }),
               merged.end());
  terms_ = std::move(merged);
}

std::optional<int64_t> Dim::constant() const {
  if (terms_.empty())
    return 0;
  if (terms_.size() == 1 && terms_[0].atoms.empty())
    return terms_[0].coeff;
  return std::nullopt;
}

Dim linnet::sema::operator+(const Dim &a, const Dim &b) {
  Dim r = a;
  r.terms_.insert(r.terms_.end(), b.terms_.begin(), b.terms_.end());
  r.normalize();
  return r;
}
Dim Dim::operator-() const {
  Dim r = *this;
  for (Term &t : r.terms_)
    t.coeff = mulW(t.coeff, -1);
  return r;
}
Dim linnet::sema::operator-(const Dim &a, const Dim &b) { return a + (-b); }
Dim linnet::sema::operator*(const Dim &a, const Dim &b) {
  Dim r;
  for (const Dim::Term &x : a.terms_)
    for (const Dim::Term &y : b.terms_) {
      Dim::Term t{mulW(x.coeff, y.coeff), x.atoms};
      t.atoms.insert(t.atoms.end(), y.atoms.begin(), y.atoms.end());
      r.terms_.push_back(std::move(t));
    }
  r.normalize();
  return r;
}

// a / b when b divides a exactly (as polynomials), else nullopt.
static std::optional<Dim> exactDiv(const Dim &a, const Dim &b) {
  std::optional<int64_t> cb = b.constant();
  if (cb) {
    if (*cb == 0)
      return std::nullopt;
    for (const Dim::Term &t : a.terms()) {
      if (remI(t.coeff, *cb) != 0)
        return std::nullopt;
    }
    Dim r;
    for (const Dim::Term &t : a.terms()) {
      Dim m = divI(t.coeff, *cb);
      for (const AtomRef &x : t.atoms)
        m = m * Dim::atom(x);
      r = r + m;
    }
    return r;
  }
  if (a == b)
    return Dim(1);
  // Single-term divisor c * X1 * X2...: every term of a must contain its atoms.
  if (b.terms().size() != 1)
    return std::nullopt;
  const Dim::Term &d = b.terms()[0];
  Dim r;
  for (const Dim::Term &t : a.terms()) {
    if (remI(t.coeff, d.coeff) != 0)
      return std::nullopt;
    std::vector<AtomRef> rest = t.atoms;
    for (const AtomRef &f : d.atoms) {
      auto it = std::find_if(rest.begin(), rest.end(), [&](const AtomRef &x) {
        return Dim::compareAtoms(*x, *f) == 0;
      });
      if (it == rest.end())
        return std::nullopt;
      rest.erase(it);
    }
    Dim m = divI(t.coeff, d.coeff);
    for (const AtomRef &x : rest)
      m = m * Dim::atom(x);
    r = r + m;
  }
  return r;
}

Dim Dim::atom(AtomRef a) { return fromAtom(std::move(a)); }

Dim Dim::floorDiv(const Dim &a, const Dim &b) {
  std::optional<int64_t> ca = a.constant(), cb = b.constant();
  if (ca && cb && *cb != 0)
    return floorDivI(*ca, *cb);
  if (std::optional<Dim> q = exactDiv(a, b))
    return *q;
  return fromAtom(std::make_shared<Atom>(Atom{Atom::Kind::FloorDiv, "", "", {a, b}}));
}

Dim Dim::mod(const Dim &a, const Dim &b) {
  std::optional<int64_t> ca = a.constant(), cb = b.constant();
  if (ca && cb && *cb != 0)
    return floorModI(*ca, *cb);
  if (exactDiv(a, b))
    return 0;
  return fromAtom(std::make_shared<Atom>(Atom{Atom::Kind::Mod, "", "", {a, b}}));
}

Dim Dim::minMax(const Dim &a, const Dim &b, bool isMax) {
  std::optional<int64_t> ca = a.constant(), cb = b.constant();
  if (ca && cb)
    return isMax ? std::max(*ca, *cb) : std::min(*ca, *cb);
  if (a == b)
    return a;
  // Two dims that differ by a constant are ordered.
  if (std::optional<int64_t> d = (a - b).constant())
    return (*d > 0) == isMax ? a : b;
  // min and max commute: order the arguments so min(A, B) == min(B, A).
  Atom at{isMax ? Atom::Kind::Max : Atom::Kind::Min, "", "", {a, b}};
  if (compare(b, a) < 0)
    std::swap(at.args[0], at.args[1]);
  return fromAtom(std::make_shared<Atom>(std::move(at)));
}
Dim Dim::min(const Dim &a, const Dim &b) { return minMax(a, b, false); }
Dim Dim::max(const Dim &a, const Dim &b) { return minMax(a, b, true); }

static Dim rebuildAtom(const Atom &a, const std::function<std::optional<Dim>(const Atom &)> &f) {
  switch (a.kind) {
  case Atom::Kind::Sym:
  case Atom::Kind::PackSize:
    if (std::optional<Dim> r = f(a))
      return *r;
    return a.kind == Atom::Kind::Sym ? Dim::sym(a.id, a.name) : Dim::packSize(a.id, a.name);
  case Atom::Kind::FloorDiv:
    return Dim::floorDiv(a.args[0].substitute(f), a.args[1].substitute(f));
  case Atom::Kind::Mod:
    return Dim::mod(a.args[0].substitute(f), a.args[1].substitute(f));
  case Atom::Kind::Min:
    return Dim::min(a.args[0].substitute(f), a.args[1].substitute(f));
  case Atom::Kind::Max:
    return Dim::max(a.args[0].substitute(f), a.args[1].substitute(f));
  }
  return Dim();
}

Dim Dim::substitute(const std::function<std::optional<Dim>(const Atom &)> &f) const {
  Dim r;
  for (const Term &t : terms_) {
    Dim m = t.coeff;
    for (const AtomRef &x : t.atoms)
      m = m * rebuildAtom(*x, f);
    r = r + m;
  }
  return r;
}

void Dim::collectSymbols(std::vector<const Atom *> &out) const {
  for (const Term &t : terms_)
    for (const AtomRef &x : t.atoms) {
      if (x->kind == Atom::Kind::Sym || x->kind == Atom::Kind::PackSize) {
        if (std::none_of(out.begin(), out.end(), [&](const Atom *o) {
              return o->kind == x->kind && o->id == x->id;
            }))
          out.push_back(x.get());
      } else {
        for (const Dim &d : x->args)
          d.collectSymbols(out);
      }
    }
}

namespace {

nlohmann::json atomJson(const Atom &a) {
  switch (a.kind) {
  case Atom::Kind::Sym: return {{"sym", a.id}, {"name", a.name}};
  case Atom::Kind::PackSize: return {{"packsize", a.id}, {"name", a.name}};
  case Atom::Kind::FloorDiv:
  case Atom::Kind::Mod:
  case Atom::Kind::Min:
  case Atom::Kind::Max: {
    const char *op = a.kind == Atom::Kind::FloorDiv ? "floordiv"
                     : a.kind == Atom::Kind::Mod    ? "mod"
                     : a.kind == Atom::Kind::Min    ? "min"
                                                    : "max";
    return {{"op", op}, {"args", {a.args[0].toJson(), a.args[1].toJson()}}};
  }
  }
  return nullptr;
}

nlohmann::json termJson(const Dim::Term &t) {
  if (t.atoms.empty())
    return t.coeff;
  if (t.coeff == 1 && t.atoms.size() == 1)
    return atomJson(*t.atoms[0]);
  nlohmann::json args = nlohmann::json::array();
  if (t.coeff != 1)
    args.push_back(t.coeff);
  for (const AtomRef &a : t.atoms)
    args.push_back(atomJson(*a));
  return {{"op", "mul"}, {"args", args}};
}

} // namespace

nlohmann::json Dim::toJson() const {
  if (terms_.empty())
    return 0;
  if (terms_.size() == 1)
    return termJson(terms_[0]);
  // Symbolic terms first, the constant last, as the source would write it.
  nlohmann::json args = nlohmann::json::array();
  for (const Term &t : terms_)
    if (!t.atoms.empty())
      args.push_back(termJson(t));
  for (const Term &t : terms_)
    if (t.atoms.empty())
      args.push_back(termJson(t));
  return {{"op", "add"}, {"args", args}};
}

// One printer of dims, the plan's (ir::dimStr): a message shows a dim as
// the plan, runtime.json and the runtime's errors do.
std::string Dim::str() const { return ir::dimStr(toJson()); }
