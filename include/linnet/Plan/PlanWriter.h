//===- PlanWriter.h - The JSON plan, version 1 ------------------*- C++ -*-===//
//
// Writes the document described in docs/plan-format.md from a checked
// program and (unless --functions) an instantiated root block. Output is
// deterministic: object keys sorted, arrays in a fixed order (modules by
// name, items in source order), ids derived from declarations.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_PLAN_PLANWRITER_H
#define LINNET_PLAN_PLANWRITER_H

#include "linnet/Sema/Instantiate.h"

#include <nlohmann/json.hpp>

namespace linnet::plan {

/// `inst` null: the --functions form (root null, empty manifest).
nlohmann::json buildPlan(const sema::Program &p, const sema::Instantiation *inst);
/// Two-space indented, trailing newline.
std::string printPlan(const nlohmann::json &plan);

// The pieces, for tests and for the plan reader's round trip.
nlohmann::json dimToJson(const sema::Dim &d);
nlohmann::json typeToJson(const sema::Type &t);

} // namespace linnet::plan

#endif // LINNET_PLAN_PLANWRITER_H
