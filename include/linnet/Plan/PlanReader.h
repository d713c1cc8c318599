//===- PlanReader.h - Loading a JSON plan into Core IR ----------*- C++ -*-===//
//
// The only way later stages read a plan: the document is checked against
// the format (docs/plan-format.md), every body is loaded into Core IR and
// verified, and every call's callee must be a function of the plan. Problems
// name their JSON path (`functions[3].body.ops[7].operands[0]: unknown value
// id 42`). writePlan() gives back the same document, byte for byte once
// printed, so plan -> read -> write is the identity.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLAN_PLANREADER_H
#define LINNET_PLAN_PLANREADER_H

#include "linnet/ir/ir.hpp"

#include <optional>
#include <string>
#include <vector>

namespace linnet::plan {

using json = nlohmann::json;

struct ManifestEntry {
  std::string path; // `model.layers[*].self_attn.q_proj.weight`
  std::string kind; // param, buffer, state
  json dtype, shape, repeat;
  bool optional = false;
};

struct Function {
  std::string name, kind; // kind: fn, op, entry
  std::optional<std::string> block;
  bool pub = false;
  json generics, constraints, results;
  std::vector<std::string> states;
  json reducer; // null, or {name, part, properties} for a reducer's part
  ir::Region body;
};

struct Constant {
  std::string name;
  bool pub = false;
  json type;
  bool contextual = false;
  ir::Region body;
};

struct Plan {
  int version = 1;
  std::string module;
  json root; // null for a --functions plan
  std::vector<ManifestEntry> manifest;
  json blocks;
  std::vector<Function> functions;
  std::vector<Constant> constants;
  const Function *function(const std::string &name) const;
};

/// At most this many problems are reported, then "too many errors".
inline constexpr size_t kMaxProblems = 50;

/// Loads and checks a plan; on failure returns nullopt with the problems.
std::optional<Plan> readPlan(const json &doc, std::vector<ir::Problem> &problems);
/// Parses `text` first, strictly (input::parseJson: a syntax error, a
/// duplicate key or nesting deeper than 512 is a problem at its JSON path).
std::optional<Plan> readPlanText(const std::string &text, std::vector<ir::Problem> &problems);
json writePlan(const Plan &p);

} // namespace linnet::plan

#endif // LINNET_PLAN_PLANREADER_H
