//===- Machine.h - MachineIR container and target verifier ------*- C++ -*-===//
//
// The container target lowering fills: sections, symbols, entry points,
// the target ABI and references to executables (generated kernels or
// library routines). The CPU and CUDA code generators come later; until
// then generated sections are recorded with state "pending-codegen".
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLANNING_MACHINE_H
#define LINNET_PLANNING_MACHINE_H

#include "linnet/Planning/Concrete.h"

namespace linnet::planning {

inline constexpr const char *kMachineSchema = "linnet.machine-ir/1";

struct Section {
  std::string name;  // ".text", ".nv.kernels", ".linnet.plan"
  std::string kind;  // "code" | "ptx" | "cubin" | "rodata"
  std::string state; // "pending-codegen" | "present"
  int64_t bytes = 0;
  std::string digest; // of the contents when present
};
struct Symbol {
  std::string name, section;
  std::string kind; // "kernel" | "function" | "data"
  std::string implementation;
};
struct EntryPoint {
  std::string name;                  // exported entry, one per rank program
  std::vector<std::string> commands; // concrete commands in issue order
};
struct ExecutableRef {
  std::string implementation;
  std::string kind; // "symbol" | "library"
  std::string symbol, soname, routine;
};

struct MachineIR {
  std::string schema = kMachineSchema;
  std::string targetId, targetKind;
  std::string abiTriple, abiFingerprint;
  std::string concreteDigest;
  std::vector<Section> sections;
  std::vector<Symbol> symbols;
  std::vector<EntryPoint> entryPoints;
  std::vector<ExecutableRef> executables;
};

Json toJson(const MachineIR &m);
MachineIR machineFromJson(const Json &j);
/// The container for `c` before code generation.
MachineIR lowerToMachine(const ConcretePlan &c, const Target &t);
/// Legality and ABI compatibility before emission.
Diagnostics verifyMachine(const MachineIR &m, const ConcretePlan *c, const Target *t);

} // namespace linnet::planning

#endif // LINNET_PLANNING_MACHINE_H
