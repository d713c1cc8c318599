//===- parse-fuzzer.cpp - libFuzzer target for the linnet parser ----------===//
//
// Any input must parse without crashing, hanging or tripping a sanitizer, and
// every input that parses cleanly must survive print → parse with the same
// AST (the printer's contract). A violation aborts, which libFuzzer reports.
//
//===----------------------------------------------------------------------===//
#include "linnet/Syntax/ASTDumper.h"
#include "linnet/Syntax/Parser.h"

#include <cstdio>
#include <cstdlib>
#include <sstream>

using namespace linnet;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SourceManager sm;
  uint32_t buf = sm.addBuffer("fuzz.ln", std::string(reinterpret_cast<const char *>(data), size));
  std::ostringstream sink;
  DiagnosticEngine diag(sm, &sink);
  std::unique_ptr<ast::Module> m = parseModule(sm, buf, diag);
  if (diag.hasErrors())
    return 0;
  std::string printed = printSource(*m);
  uint32_t again = sm.addBuffer("printed.ln", printed);
  DiagnosticEngine diag2(sm, &sink);
  std::unique_ptr<ast::Module> m2 = parseModule(sm, again, diag2);
  if (diag2.hasErrors() || dumpAST(*m) != dumpAST(*m2)) {
    std::fprintf(stderr, "round trip failed\n--- printed\n%s\n--- diagnostics\n%s\n",
                 printed.c_str(), sink.str().c_str());
    std::abort();
  }
  return 0;
}
