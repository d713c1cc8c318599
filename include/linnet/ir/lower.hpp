//===- lower.hpp - Lowering checked linnet to Core IR -----------*- C++ -*-===//
//
// Turns Sema's typed program into Core IR regions: one per function, reducer
// part and constant. Types come from Sema's recorded facts (never
// re-derived), in the plan's JSON forms below, which the plan writer shares.
// Value ids are assigned in lowering order from 0, so output is
// deterministic.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_IR_LOWER_HPP
#define LINNET_IR_LOWER_HPP

#include "linnet/Sema/Program.h"
#include "linnet/ir/ir.hpp"

namespace linnet::ir {

// Plan forms of Sema's dims, shapes, dtypes, generic values and types.
json dimToJson(const sema::Dim &d);
json shapeToJson(const sema::Shape &s);
json dtypeToJson(const sema::Dtype &d);
json genericValueToJson(const sema::GenericValue &v);
json typeToJson(const sema::Type &t);

Region lowerFunction(const sema::Program &p, const sema::FunctionInfo &f);
Region lowerReducerPart(const sema::Program &p, const sema::NominalInfo &reducer,
                        const sema::ReducerPart &part);
Region lowerConst(const sema::Program &p, const sema::ConstInfo &c);

} // namespace linnet::ir

#endif // LINNET_IR_LOWER_HPP
