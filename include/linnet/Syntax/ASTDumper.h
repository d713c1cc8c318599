//===- ASTDumper.h - Stable textual dump of the AST -------------*- C++ -*-===//
#ifndef LINNET_SYNTAX_ASTDUMPER_H
#define LINNET_SYNTAX_ASTDUMPER_H

#include "linnet/Syntax/AST.h"

#include <string>

namespace linnet {

/// S-expression dump of a module, one declaration or statement per line.
/// The format is stable: tests compare it verbatim.
std::string dumpAST(const ast::Module &module);

/// Pretty-prints a module back to linnet source in the canonical layout.
/// Parsing the output yields the same AST (see `linnet parse --round-trip`).
std::string printSource(const ast::Module &module);

} // namespace linnet

#endif // LINNET_SYNTAX_ASTDUMPER_H
