//===- Parser.h - Recursive-descent parser for linnet -----------*- C++ -*-===//
//
// Parses one source buffer into an ast::Module. The parser never stops at the
// first error: it reports through the DiagnosticEngine, resynchronizes at the
// next statement, member or item, and keeps going until the error limit.
// Statements end at a newline (or ';'); postfix '(' and '[' must stay on the
// line of their operand.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SYNTAX_PARSER_H
#define LINNET_SYNTAX_PARSER_H

#include "linnet/Syntax/AST.h"
#include "linnet/Syntax/Diagnostics.h"

#include <memory>

namespace linnet {

/// Parses `buffer`. Always returns a module (possibly partial); check
/// `diag.hasErrors()` to know whether it is complete.
std::unique_ptr<ast::Module> parseModule(const SourceManager &sm, uint32_t buffer,
                                         DiagnosticEngine &diag);

} // namespace linnet

#endif // LINNET_SYNTAX_PARSER_H
