//===- Interpreter.h - The reference interpreter of Core IR -----*- C++ -*-===//
//
// Executes an entry of a plan directly on its Core IR: the instantiated root
// block with its weights and state, every op kind of include/linnet/ir/ir.hpp,
// values kept in their exact dtype (f32 arithmetic in float). It is the
// oracle compiled code is held against and a debugging aid, so it is written
// to be obviously correct, not fast; docs/interpreter.md states its semantic
// choices. It depends on the plan reader and the runtime's tensor files only.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_INTERP_INTERPRETER_H
#define LINNET_INTERP_INTERPRETER_H

#include "linnet/Plan/PlanReader.h"
#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/Numerics.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace linnet::interp {

struct LoadOptions {
  /// Weights (.safetensors); may be empty for a model without params.
  std::string weightsPath;
  /// Map the weights, or read them into memory first (`--no-mmap`).
  bool mapWeights = true;
  /// Maps a canonical path to the tensor's name in the weights file (a
  /// binding manifest); identity when unset.
  std::function<std::string(const std::string &)> externalName;
  /// The binding manifest itself, for the tensors it says are stored in
  /// another row order (rt::applyBindingTransforms); none when unset.
  std::shared_ptr<const rt::BindingMap> binding;
  /// How f16/bf16 compute (a build's numerics policy, recorded in its
  /// artifact): the oracle evaluates as the compiled code was built.
  support::NumericsPolicy numerics = support::NumericsPolicy::AsWritten;
};

/// One input of an entry as the command line names it: a tensor or scalar
/// argument by its name, or a relation argument `g` as `g.row_ptr` and
/// `g.col_idx` (`relation` set to `g` on both).
struct InputSig {
  std::string name, relation;
  std::string type; // source spelling, for messages
};

class Interpreter {
public:
  /// Instantiates the plan's root block and binds its weights (the
  /// interpreter keeps the plan). On failure returns null and sets `error`
  /// to every problem found, one per line.
  static std::unique_ptr<Interpreter> load(plan::Plan plan, const LoadOptions &opts, std::string &error);
  ~Interpreter();

  /// The root block's entries, by short name (`prefill`).
  std::vector<std::string> entries() const;
  /// The inputs of `entry` in order, or nullopt if there is no such entry.
  std::optional<std::vector<InputSig>> inputs(const std::string &entry) const;
  /// The number of results of `entry`.
  size_t resultCount(const std::string &entry) const;

  /// Calls `entry` with one tensor per input (in inputs() order; a scalar
  /// argument is a 0-d tensor). Fills `results` with the entry's results in
  /// their declared dtypes. State persists from one call to the next.
  bool call(const std::string &entry, const std::vector<rt::TensorView> &inputs,
            std::vector<rt::OwnedTensor> &results, std::string &error);
  /// Checks `inputs` as call() does (dtypes, shapes, relations, the
  /// entry's `where` clause) without running.
  bool check(const std::string &entry, const std::vector<rt::TensorView> &inputs,
             std::string &error);

  /// The current value of a state tensor by canonical path
  /// (`model.layers.0.self_attn.k_cache`), or nullopt.
  std::optional<rt::OwnedTensor> state(const std::string &path) const;

  struct Impl;

private:
  Interpreter() = default;
  /// call()'s checks; runs the entry and fills `results` when given.
  bool invoke(const std::string &entry, const std::vector<rt::TensorView> &inputs,
              std::vector<rt::OwnedTensor> *results, std::string &error);
  std::unique_ptr<Impl> impl_;
};

} // namespace linnet::interp

#endif // LINNET_INTERP_INTERPRETER_H
