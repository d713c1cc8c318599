//===- Dim.h - Symbolic dimension expressions in normal form ----*- C++ -*-===//
//
// A Dim is a polynomial with integer coefficients over atoms: generic dims,
// shape-pack sizes, and opaque floordiv/mod/min/max nodes whose arguments are
// themselves normalized. Every constructor normalizes, so structural equality
// is semantic equality for the polynomial part: `Heads * Head == Head * Heads`,
// `(A + 1) + 2 == A + 3`. Constants fold everywhere.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SEMA_DIM_H
#define LINNET_SEMA_DIM_H

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace linnet::sema {

class Dim;

/// An indivisible factor of a monomial.
struct Atom {
  enum class Kind { Sym, PackSize, FloorDiv, Mod, Min, Max };
  Kind kind;
  std::string id;   // Sym / PackSize: stable symbol id
  std::string name; // Sym / PackSize: display name
  std::vector<Dim> args;
};
using AtomRef = std::shared_ptr<const Atom>;

class Dim {
public:
  /// One product `coeff * atoms[0] * atoms[1] ...`; atoms sorted, may repeat.
  struct Term {
    int64_t coeff;
    std::vector<AtomRef> atoms;
  };

  Dim() = default; // zero
  Dim(int64_t c);  // NOLINT: integers are dims
  static Dim sym(std::string id, std::string name);
  static Dim packSize(std::string id, std::string name);

  friend Dim operator+(const Dim &a, const Dim &b);
  friend Dim operator-(const Dim &a, const Dim &b);
  friend Dim operator*(const Dim &a, const Dim &b);
  Dim operator-() const;
  static Dim floorDiv(const Dim &a, const Dim &b);
  static Dim mod(const Dim &a, const Dim &b);
  static Dim min(const Dim &a, const Dim &b);
  static Dim max(const Dim &a, const Dim &b);

  bool isConstant() const { return terms_.empty() || (terms_.size() == 1 && terms_[0].atoms.empty()); }
  std::optional<int64_t> constant() const;
  const std::vector<Term> &terms() const { return terms_; }

  /// Replaces symbols (by id) with dims and renormalizes.
  Dim substitute(const std::function<std::optional<Dim>(const Atom &)> &f) const;
  /// Ids of every Sym / PackSize atom that occurs, recursively.
  void collectSymbols(std::vector<const Atom *> &out) const;

  /// Source-like spelling: `Heads * Head`, `A + 3`, `min(A, B)`, `N / 2`.
  std::string str() const;
  /// The plan's form of the dim (plan format: `{"op": "add", "args": ...}`,
  /// `{"sym": id, "name": N}`, integers).
  nlohmann::json toJson() const;

  friend bool operator==(const Dim &a, const Dim &b) { return compare(a, b) == 0; }
  friend bool operator!=(const Dim &a, const Dim &b) { return compare(a, b) != 0; }
  friend bool operator<(const Dim &a, const Dim &b) { return compare(a, b) < 0; }
  static int compare(const Dim &a, const Dim &b);
  static int compareAtoms(const Atom &a, const Atom &b);

  static Dim atom(AtomRef a);

  /// Overflow: coefficients are int64; an operation that overflows wraps
  /// and is counted here. A caller that forms a dim from user input takes
  /// an OverflowCheck before and asks it afterwards.
  static void noteOverflow() { ++overflows_; }
  struct OverflowCheck {
    uint64_t before = overflows_;
    bool overflowed() const { return overflows_ != before; }
  };

private:
  static thread_local uint64_t overflows_;
  static Dim fromAtom(AtomRef a);
  static Dim minMax(const Dim &a, const Dim &b, bool isMax);
  void normalize();
  std::vector<Term> terms_;
};

Dim operator+(const Dim &a, const Dim &b);
Dim operator-(const Dim &a, const Dim &b);
Dim operator*(const Dim &a, const Dim &b);

} // namespace linnet::sema

#endif // LINNET_SEMA_DIM_H
