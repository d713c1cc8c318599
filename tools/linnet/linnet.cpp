//===- linnet.cpp - The linnet command-line driver ------------------------===//
//
// One CLI for the whole compiler. Exit status: 0 success, 1 errors in the
// user's input (source, plans, weights), 2 usage errors (bad flags, or a
// subcommand that is not implemented yet).
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CUDA/CudaRuntime.h"
#include "BuildCommand.h"
#include "DiagnosticsOutput.h"
#include "GenerateCommand.h"
#include "InitWeightsCommand.h"
#include "QuantizeCommand.h"
#include "SimulateServingCommand.h"
#include "InspectCommand.h"
#include "PlanCommand.h"
#include "ProfileCommand.h"
#include "RunCommand.h"
#include "linnet/Config.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Input.h"
#include "linnet/Support/Timing.h"
#include "linnet/Syntax/ASTDumper.h"
#include "linnet/Syntax/Parser.h"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <llvm/Support/Casting.h>
#include <llvm/Support/thread.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

using namespace linnet;

namespace {

enum ExitCode { Success = 0, InputError = 1, UsageError = 2 };

struct CheckOptions {
  std::vector<std::string> files;
  bool verify = false;
  bool split = false;
  bool syntaxOnly = false;
  unsigned errorLimit = 20;
};

/// One unit of parsing: a whole file, or a `// -----` chunk of it.
struct Chunk {
  uint32_t buffer;
};

/// Loads `path` and, with --split-input-file, splits it at lines that are
/// exactly `// -----`; each chunk keeps the original line numbers.
bool loadChunks(SourceManager &sm, const std::string &path, bool split,
                std::vector<Chunk> &out) {
  std::string error;
  std::optional<uint32_t> whole = sm.addFile(path, error);
  if (!whole) {
    tool::diags().report(support::Diag::error("io", fmt::format("cannot read '{}': {}", path, error)));
    return false;
  }
  if (!split) {
    out.push_back({*whole});
    return true;
  }
  std::string_view text = sm.text(*whole);
  size_t start = 0;
  uint32_t line = 1, startLine = 1;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos)
      eol = text.size();
    std::string_view l = text.substr(pos, eol - pos);
    if (l == "// -----" || l == "// -----\r") {
      out.push_back({sm.addBuffer(path, std::string(text.substr(start, pos - start)), startLine)});
      start = eol + 1;
      startLine = line + 1;
    }
    pos = eol + 1;
    ++line;
  }
  if (start <= text.size())
    out.push_back({sm.addBuffer(path, std::string(text.substr(start)), startLine)});
  return true;
}

struct Summary {
  unsigned blocks = 0, functions = 0, structs = 0, enums = 0, consts = 0,
           reducers = 0, members = 0;
};

Summary summarize(const ast::Module &m) {
  Summary s;
  for (const ast::DeclPtr &d : m.decls) {
    switch (d->kind) {
    case ast::Decl::Kind::Block: {
      ++s.blocks;
      for (const ast::DeclPtr &inner : llvm::cast<ast::BlockDecl>(*d).body)
        inner->kind == ast::Decl::Kind::Member ? ++s.members : ++s.functions;
      break;
    }
    case ast::Decl::Kind::Function: ++s.functions; break;
    case ast::Decl::Kind::Struct: ++s.structs; break;
    case ast::Decl::Kind::Enum: ++s.enums; break;
    case ast::Decl::Kind::Const: ++s.consts; break;
    case ast::Decl::Kind::Reducer: ++s.reducers; break;
    case ast::Decl::Kind::Member: ++s.members; break;
    }
  }
  return s;
}

/// A build on a terminal that takes more than two seconds shows the stage
/// it is in and the time so far on one line of stderr, erased at the end.
class ProgressLine {
public:
  ProgressLine() {
    const char *term = std::getenv("TERM");
    if (!isatty(STDERR_FILENO) || (term && std::strcmp(term, "dumb") == 0))
      return;
    thread_ = std::thread([this] { run(); });
  }
  ~ProgressLine() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable())
      thread_.join();
    if (shown_)
      std::fputs("\r\033[K", stderr);
  }

private:
  void run() {
    using namespace std::chrono;
    auto start = steady_clock::now();
    std::unique_lock<std::mutex> lock(mutex_);
    while (!cv_.wait_for(lock, milliseconds(250), [this] { return done_; })) {
      double s = duration<double>(steady_clock::now() - start).count();
      if (s < 2)
        continue;
      const char *stage = support::currentStageName();
      std::fprintf(stderr, "\r\033[Klinnet build: %s (%.0f s)", stage ? stage : "working", s);
      std::fflush(stderr);
      shown_ = true;
    }
  }
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false, shown_ = false;
};

int runCheck(const CheckOptions &opts) {
  bool anyError = false;
  for (const std::string &file : opts.files) {
    SourceManager sm;
    std::vector<Chunk> chunks;
    if (!loadChunks(sm, file, opts.split, chunks)) {
      anyError = true;
      continue;
    }
    for (const Chunk &c : chunks) {
      DiagnosticEngine diag(sm, tool::diags());
      diag.setErrorLimit(opts.errorLimit);
      diag.setCollect(opts.verify);
      std::unique_ptr<ast::Module> m = parseModule(sm, c.buffer, diag);
      if (!diag.hasErrors() && !opts.syntaxOnly)
        tool::semaCheck(sm, c.buffer, file, diag);
      if (opts.verify) {
        if (!verifyDiagnostics(sm, c.buffer, diag.collected(), std::cerr))
          anyError = true;
        continue;
      }
      if (diag.hasErrors()) {
        // The count is for people: the structured forms hold the errors.
        if (!tool::diagnosticsOutput().active())
          std::cerr << fmt::format("{}: {} error{}\n", file, diag.errorCount(), diag.errorCount() == 1 ? "" : "s");
        anyError = true;
        continue;
      }
      if (opts.split)
        continue;
      Summary s = summarize(*m);
      std::cout << fmt::format(
          "{}: ok: module {}: {} import{}, {} block{} ({} member{}), {} "
          "function{}, {} struct{}, {} enum{}, {} const{}, {} reducer{}\n",
          file, m->path.empty() ? std::string("<anonymous>") : ast::joinPath(m->path),
          m->imports.size(), m->imports.size() == 1 ? "" : "s", s.blocks,
          s.blocks == 1 ? "" : "s", s.members, s.members == 1 ? "" : "s",
          s.functions, s.functions == 1 ? "" : "s", s.structs,
          s.structs == 1 ? "" : "s", s.enums, s.enums == 1 ? "" : "s", s.consts,
          s.consts == 1 ? "" : "s", s.reducers, s.reducers == 1 ? "" : "s");
    }
  }
  return anyError ? InputError : Success;
}

struct ParseOptions {
  std::string file;
  bool dumpAst = false;
  bool print = false;
  bool roundTrip = false;
};

int runParse(const ParseOptions &opts) {
  SourceManager sm;
  std::vector<Chunk> chunks;
  if (!loadChunks(sm, opts.file, false, chunks))
    return InputError;
  DiagnosticEngine diag(sm, tool::diags());
  std::unique_ptr<ast::Module> m = parseModule(sm, chunks[0].buffer, diag);
  if (diag.hasErrors())
    return InputError;
  if (opts.roundTrip) {
    // print → parse → dump must equal dump: the printer loses nothing.
    std::string printed = printSource(*m);
    uint32_t again = sm.addBuffer(opts.file + " (printed)", printed);
    DiagnosticEngine diag2(sm, &std::cerr);
    std::unique_ptr<ast::Module> m2 = parseModule(sm, again, diag2);
    if (diag2.hasErrors()) {
      std::cerr << "linnet: error: printed source does not parse:\n" << printed;
      return InputError;
    }
    std::string d1 = dumpAST(*m), d2 = dumpAST(*m2);
    if (d1 != d2) {
      std::cerr << "linnet: error: AST changed after print and re-parse\n--- "
                   "original\n"
                << d1 << "--- re-parsed\n"
                << d2;
      return InputError;
    }
    std::cout << fmt::format("{}: round trip ok\n", opts.file);
  }
  if (opts.print)
    std::cout << printSource(*m);
  if (opts.dumpAst || (!opts.print && !opts.roundTrip))
    std::cout << dumpAST(*m);
  return Success;
}

/// The options that name what a command writes, and what each is
/// (AtomicFile.h). `build -o` is checked by the build itself, which knows
/// whether it writes an artifact, a folder of products or a file.
std::optional<support::OutputKind> outputKind(const std::string &command, const CLI::Option *opt) {
  if (opt->check_name("--dump-ir"))
    return support::OutputKind::Directory;
  if (opt->check_name("--diagnostics-file") || opt->check_name("--calibrate"))
    return support::OutputKind::File;
  if (opt->check_name("-o") || opt->check_name("--output")) {
    if (command == "profile")
      return support::OutputKind::Directory;
    return support::OutputKind::File;
  }
  return std::nullopt;
}

/// Every existing path the parsed command's options name, its outputs
/// excepted: `FILE`, `NAME=FILE` (--input) and `NAME=A,B` (--relation).
/// Collected once, before the command runs, so that no option that reads a
/// file can be forgotten; the command's InputScope makes every writer
/// refuse to write over one of them.
std::vector<std::string> commandInputs(const CLI::App *cmd) {
  std::vector<std::string> inputs;
  auto add = [&](const std::string &p) {
    struct stat st;
    if (!p.empty() && p != "-" && ::lstat(p.c_str(), &st) == 0)
      inputs.push_back(p);
  };
  // Options whose values are names or numbers, never files: a folder that
  // happens to share one (an artifact built into `cpu`, an output `main`)
  // is not an input of the command.
  static const std::set<std::string> names = {
      "--diagnostics", "--emit", "--entry", "--error-limit", "--impl", "--iterations", "--matmul-precision", "--block-products",
      "--max-new-tokens", "--numerics", "--prompt", "--ranks", "--repeat", "--root", "--runtime-checks",
      "--seed", "--source-name", "--timeout", "--variants", "--warmup", "-D", "query"};
  for (const CLI::Option *opt : cmd->get_options()) {
    if (outputKind(cmd->get_name(), opt) || names.count(opt->get_name()))
      continue;
    for (const std::string &v : opt->results()) {
      // A target is a file only as a path (`cpu` names a shipped target).
      if (opt->get_name() == "--target" && v.find('/') == std::string::npos && !v.ends_with(".json"))
        continue;
      add(v);
      if (size_t eq = v.find('='); eq != std::string::npos) {
        std::string rest = v.substr(eq + 1);
        add(rest);
        for (size_t b = 0, c; b <= rest.size(); b = c + 1) {
          c = std::min(rest.find(',', b), rest.size());
          add(rest.substr(b, c - b));
        }
      }
    }
  }
  return inputs;
}

/// Refuses, before the command does any work, a named output that is one of
/// its inputs, a symbolic link, a directory where a file goes, or given
/// twice (one output would overwrite the other).
bool checkCommandOutputs(const CLI::App *cmd) {
  std::vector<std::string> seen;
  for (const CLI::Option *opt : cmd->get_options()) {
    std::optional<support::OutputKind> kind = outputKind(cmd->get_name(), opt);
    if (!kind)
      continue;
    for (const std::string &v : opt->results()) {
      if (v.empty() || v == "-")
        continue;
      for (const std::string &other : seen)
        if (support::sameFile(v, other)) {
          std::cerr << fmt::format("linnet {}: error: '{}' is given for two outputs (one would overwrite "
                                   "the other)\n",
                                   cmd->get_name(), v);
          return false;
        }
      seen.push_back(v);
      if (cmd->get_name() == "build" && opt->check_name("-o"))
        continue;
      if (!support::checkCommandOutput(cmd->get_name().c_str(), v, *kind))
        return false;
    }
  }
  return true;
}

} // namespace

static int linnetMain(int argc, char **argv) {
  // Artifacts of every target this program can run: the CPU's own ABI and
  // the device backends (docs/cuda-abi.md).
  linnet::cuda::registerCudaRuntime();
  CLI::App app{"linnet: an ahead-of-time compiler for neural-network models "
               "and graph computations"};
  app.require_subcommand(0, 1);
  app.set_version_flag("--version",
                       fmt::format("linnet {} (commit {})", LINNET_VERSION,
                                   LINNET_GIT_COMMIT));

  CheckOptions check;
  CLI::App *checkCmd = app.add_subcommand("check", "Parse and check linnet source files");
  checkCmd->add_option("files", check.files, "Source files (.ln)")->required();
  checkCmd->add_flag("--verify-diagnostics", check.verify,
                     "Check diagnostics against expected-error comments in the source");
  checkCmd->add_flag("--syntax-only", check.syntaxOnly, "Parse only: skip semantic checks");
  checkCmd->add_flag("--split-input-file", check.split,
                     "Treat each '// -----' separated chunk as its own file");
  checkCmd->add_option("--error-limit", check.errorLimit,
                       "Stop after this many errors (0: no limit)")
      ->default_val(20);
  checkCmd->add_option("-I", tool::gIncludeDirs, "Add a module search root")->allow_extra_args(false);

  ParseOptions parse;
  CLI::App *parseCmd = app.add_subcommand("parse", "Parse one file and print its syntax tree");
  parseCmd->add_option("file", parse.file, "Source file (.ln)")->required();
  parseCmd->add_flag("--dump-ast", parse.dumpAst, "Print the AST as S-expressions (default)");
  parseCmd->add_flag("--print", parse.print, "Print the source back in canonical layout");
  parseCmd->add_flag("--round-trip", parse.roundTrip,
                     "Check that printing and re-parsing gives the same AST");

  std::vector<std::string> rest;
  CLI::App *planCmd = tool::addPlanCommand(app);
  CLI::App *irCmd = tool::addIrCommand(app);
  CLI::App *inspectCmd = tool::addInspectCommand(app);
  CLI::App *initWeightsCmd = tool::addInitWeightsCommand(app);
  CLI::App *quantizeCmd = tool::addQuantizeCommand(app);
  CLI::App *simulateServingCmd = tool::addSimulateServingCommand(app);
  CLI::App *buildCmd = tool::addBuildCommand(app);
  CLI::App *runCmd = tool::addRunCommand(app);
  CLI::App *generateCmd = tool::addGenerateCommand(app);
  CLI::App *profileCmd = tool::addProfileCommand(app);
  CLI::App *explainCmd = tool::addExplainCommand(app);
  // --diagnostics=json|sarif and --diagnostics-file on the commands CI runs.
  for (CLI::App *cmd : {checkCmd, planCmd, buildCmd})
    tool::diagnosticsOutput().addOptions(cmd);
  bool timing = false;
  buildCmd->add_flag("--timing", timing,
                     "Print the time of each stage and MLIR pass to stderr (MLIR's execution time report)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp &e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion &e) {
    return app.exit(e);
  } catch (const CLI::ParseError &e) {
    app.exit(e);
    return UsageError;
  }

  // The command's inputs, for the one output guard (AtomicFile.h): every
  // file or folder it writes is checked against them.
  std::optional<support::InputScope> inputScope;
  for (CLI::App *cmd : app.get_subcommands()) {
    inputScope.emplace(commandInputs(cmd));
    if (!checkCommandOutputs(cmd))
      return UsageError;
  }

  // Every command reports through one sink (tool::diags()): text on
  // stderr, or the records --diagnostics asks for. `check` and `parse`
  // keep the plain `linnet:` of the front end's messages.
  tool::DiagnosticsOutput &diagnostics = tool::diagnosticsOutput();
  for (CLI::App *cmd : app.get_subcommands())
    diagnostics.begin(cmd == checkCmd || cmd == parseCmd ? "" : cmd->get_name());
  if (checkCmd->parsed())
    return diagnostics.finish(runCheck(check));
  if (parseCmd->parsed())
    return runParse(parse);
  if (planCmd->parsed())
    return diagnostics.finish(tool::runPlan());
  if (irCmd->parsed())
    return tool::runIr();
  if (inspectCmd->parsed())
    return tool::runInspect();
  if (initWeightsCmd->parsed())
    return tool::runInitWeights();
  if (quantizeCmd->parsed())
    return tool::runQuantize();
  if (simulateServingCmd->parsed())
    return tool::runSimulateServing();
  if (runCmd->parsed())
    return tool::runRun();
  if (profileCmd->parsed())
    return tool::runProfile();
  if (explainCmd->parsed())
    return tool::runExplain();
  if (generateCmd->parsed())
    return tool::runGenerate();
  if (buildCmd->parsed()) {
    std::optional<support::TimingSession> session;
    if (timing)
      session.emplace(); // prints its report when the build is done
    std::optional<ProgressLine> progress;
    if (!timing && !diagnostics.active())
      progress.emplace();
    int rc = tool::runBuild();
    progress.reset();
    session.reset();
    return diagnostics.finish(rc);
  }
  std::cerr << app.help();
  return UsageError;
}

// The front end recurses over expressions, to the depth the parser allows
// (200 levels of nesting, 1000 operators in a chain): the command runs on a
// thread with a 256 MiB stack (reserved, touched only as deep as it goes),
// so that those limits hold in every build, sanitized ones included, whose
// frames are several times larger.
int main(int argc, char **argv) {
  // Every source a command reads is one of its inputs (Input.h).
  linnet::input::recordSourceReads(true);
  int rc = 0;
  llvm::thread worker(std::optional<unsigned>(256u << 20), [&] { rc = linnetMain(argc, argv); });
  worker.join();
  return rc;
}
