//===- ArtifactCache.cpp - The one cache of artifacts built from .ln -------===//
//
// See ArtifactCache.h for what the key covers and what is refused.
//
//===----------------------------------------------------------------------===//
#include "linnet/Compiler/ArtifactCache.h"

#include "linnet/Config.h"
#include "linnet/Planning/Common.h"
#include "linnet/Planning/Target.h"
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Sema/Program.h"
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Digest.h"
#include "linnet/Support/Input.h"
#include "linnet/Syntax/Diagnostics.h"
#include "linnet/Syntax/SourceManager.h"

#include "llvm/Config/llvm-config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>
#include <sstream>

#include <elf.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace linnet::compiler {

using support::Diag;
namespace {

/// The GNU build-id notes of the running program and of the LLVM and MLIR
/// libraries it loaded: what the compiler is, whatever its version says.
struct BuildIds {
  std::vector<std::string> lines;
  bool mainHasId = false;
};

int collectBuildId(dl_phdr_info *info, size_t, void *data) {
  auto &ids = *static_cast<BuildIds *>(data);
  std::string name = info->dlpi_name ? info->dlpi_name : "";
  bool first = ids.lines.empty();
  if (!first && name.find("libLLVM") == std::string::npos && name.find("libMLIR") == std::string::npos)
    return 0;
  std::string id;
  for (int i = 0; i < info->dlpi_phnum && id.empty(); ++i) {
    const ElfW(Phdr) &ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE)
      continue;
    const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
    const char *end = p + ph.p_memsz;
    auto align4 = [](size_t n) { return (n + 3) & ~size_t(3); };
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const auto *n = reinterpret_cast<const ElfW(Nhdr) *>(p);
      const char *nm = p + sizeof(ElfW(Nhdr));
      const char *desc = nm + align4(n->n_namesz);
      if (desc + n->n_descsz > end)
        break;
      if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && std::memcmp(nm, "GNU", 4) == 0) {
        for (size_t k = 0; k < n->n_descsz; ++k)
          id += fmt::format("{:02x}", static_cast<unsigned char>(desc[k]));
        break;
      }
      p = desc + align4(n->n_descsz);
    }
  }
  if (first) {
    ids.mainHasId = !id.empty();
    ids.lines.push_back("program " + id);
    return 0;
  }
  if (id.empty()) {
    // No note: the library's size and time of change stand in for it.
    std::error_code ec;
    auto size = fs::file_size(name, ec);
    auto time = fs::last_write_time(name, ec).time_since_epoch().count();
    id = fmt::format("size {} mtime {}", ec ? 0 : size, ec ? 0 : time);
  }
  ids.lines.push_back(fmt::format("library {} {}", name, id));
  return 0;
}

const std::string &compilerIdentity() {
  static std::string text;
  static std::once_flag once;
  std::call_once(once, [] {
    BuildIds ids;
    dl_iterate_phdr(collectBuildId, &ids);
    text = fmt::format("compiler linnet {} {} LLVM {}\n", LINNET_VERSION, LINNET_GIT_COMMIT,
                       LLVM_VERSION_STRING);
    for (const std::string &l : ids.lines)
      text += l + "\n";
    if (!ids.mainHasId) {
      // Linked without --build-id: the program's own bytes.
      std::ifstream in("/proc/self/exe", std::ios::binary);
      std::stringstream ss;
      ss << in.rdbuf();
      text += "program sha256 " + support::sha256Hex(ss.str()) + "\n";
    }
  });
  return text;
}

/// The SHA-256 of a file's bytes; nullopt when it cannot be read.
/// Read as every reader of user files is (Input.h): regular files only
/// (a FIFO named as the binding would block the key), within the JSON limit.
std::optional<std::string> fileDigest(const std::string &path, std::string *why = nullptr) {
  std::string text, error;
  if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, error)) {
    if (why)
      *why = error;
    return std::nullopt;
  }
  return support::sha256Hex(text);
}

std::string modeText(mode_t mode) { return fmt::format("{:04o}", mode & 07777); }

/// Makes each missing component of `dir` with mode 0700.
bool makePrivateDirectories(const fs::path &dir, std::string &error) {
  fs::path cur;
  for (const fs::path &part : fs::absolute(dir).lexically_normal()) {
    if (part.empty())
      continue;
    cur /= part;
    struct stat st;
    if (::stat(cur.c_str(), &st) == 0) {
      if (!S_ISDIR(st.st_mode)) {
        error = fmt::format("'{}' is not a directory", cur.string());
        return false;
      }
      continue;
    }
    if (errno != ENOENT || (::mkdir(cur.c_str(), 0700) != 0 && errno != EEXIST)) {
      error = fmt::format("cannot create '{}': {}", cur.string(), std::strerror(errno));
      return false;
    }
  }
  return true;
}

/// Reads every file the entry's manifest lists and checks it against its
/// digest, as the runtime will before loading it. Empty when whole.
std::string verifyEntry(const std::string &dir) {
  std::string err;
  std::unique_ptr<rt::VerifiedArtifact> a = rt::VerifiedArtifact::open(dir, err);
  if (!a)
    return err;
  if (!a->manifest().find("runtime.json"))
    return dir + "/manifest.json lists no runtime.json";
  for (const rt::ArtifactFileEntry &f : a->manifest().files) {
    std::string bytes;
    if (!a->read(f.path, bytes, err))
      return err;
  }
  return {};
}

/// Diagnostics of the key's front-end pass are not shown: the build, which
/// runs next when there are any, reports them once.
struct Silent final : support::DiagSink {
  void handle(support::Diag) override {}
};

} // namespace

std::string checkPrivateDirectory(const std::string &dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0)
    return fmt::format("cannot read it: {}", std::strerror(errno));
  if (!S_ISDIR(st.st_mode))
    return "it is not a directory";
  if (st.st_uid != ::geteuid())
    return fmt::format("it is owned by uid {}, not you (uid {})", st.st_uid, ::geteuid());
  if (st.st_mode & (S_IWGRP | S_IWOTH))
    return fmt::format("it is writable by {} (mode {})", (st.st_mode & S_IWOTH) ? "others" : "its group",
                       modeText(st.st_mode));
  return {};
}

std::optional<std::string> artifactCacheRoot(std::string &error) {
  fs::path root;
  const char *source = nullptr;
  if (const char *x = std::getenv("LINNET_CACHE_DIR"); x && *x)
    root = x, source = "LINNET_CACHE_DIR";
  else if (const char *x = std::getenv("XDG_CACHE_HOME"); x && *x)
    root = fs::path(x) / "linnet", source = "XDG_CACHE_HOME";
  else if (const char *h = std::getenv("HOME"); h && *h)
    root = fs::path(h) / ".cache" / "linnet", source = "HOME";
  else {
    error = "no artifact cache directory: LINNET_CACHE_DIR, XDG_CACHE_HOME and HOME are unset "
            "(set LINNET_CACHE_DIR to a directory of your own)";
    return std::nullopt;
  }
  std::string why;
  if (!makePrivateDirectories(root, why)) {
    error = fmt::format("artifact cache '{}' (from {}): {}", root.string(), source, why);
    return std::nullopt;
  }
  if (std::string bad = checkPrivateDirectory(root.string()); !bad.empty()) {
    error = fmt::format("artifact cache '{}' (from {}): {}: refusing to use it (an entry there is code "
                        "that runs; use a directory only you can write, or set LINNET_CACHE_DIR)",
                        root.string(), source, bad);
    return std::nullopt;
  }
  return root.string();
}

std::optional<std::string> artifactCacheKey(const Options &o, support::DiagSink &diags) {
  std::string key = "linnet artifact cache 1\n" + compilerIdentity();

  // What the code is made for, and the planning files that shape it.
  PlanningInputs in;
  try {
    in = loadPlanningInputs(o.target, o.deployment, o.implementationPolicy, o.evidencePolicy,
                            o.simulationPolicy);
  } catch (const planning::SchemaError &e) {
    diags.report(Diag::error("input.schema", e.what()));
    return std::nullopt;
  }
  std::string dir = planning::defaultTargetsDir();
  auto orDefault = [&](const std::string &given, const std::string &name) {
    return given.empty() ? dir + "/policies/" + name : given;
  };
  key += fmt::format("target {} kind {}\ncode {}\n", o.target, in.target.kind,
                     targetForKind(in.target.kind).codeIdentity());
  for (const std::string &f :
       {planning::resolveTargetFile(o.target, dir),
        o.deployment.empty() ? planning::defaultDeploymentFile(in.target, dir) : o.deployment,
        orDefault(o.implementationPolicy, "implementation-default.json"),
        orDefault(o.evidencePolicy, "evidence-default.json"),
        orDefault(o.simulationPolicy, "simulation-default.json")}) {
    std::optional<std::string> d = fileDigest(f);
    key += fmt::format("planning {} {}\n", f, d ? *d : "unreadable");
  }

  // The source and exactly the modules its imports resolve to.
  SourceManager sm;
  std::string err;
  std::optional<uint32_t> buf = sm.addFile(o.file, err);
  if (!buf) {
    diags.report(Diag::error("io", fmt::format("cannot read '{}': {}", o.file, err)));
    return std::nullopt;
  }
  {
    Silent silent;
    DiagnosticEngine diag(sm, silent);
    std::unique_ptr<sema::Program> prog = sema::analyze(sm, *buf, o.file, diag, o.sema);
    key += fmt::format("file {}\n", o.file);
    for (const auto &m : prog->modules)
      key += fmt::format("module {} {} {}\n", m->name, fs::absolute(m->file).lexically_normal().string(),
                         support::sha256Hex(sm.text(m->buffer)));
  }

  // Every option of the build (dumpIR is a side output, never cached).
  std::vector<std::string> defines;
  for (const auto &[name, value] : o.defines)
    defines.push_back(name + "=" + value);
  std::sort(defines.begin(), defines.end());
  key += fmt::format("root {}\n", o.root);
  for (const std::string &d : defines)
    key += "define " + d + "\n";
  for (const std::string &d : o.sema.includeDirs)
    key += "include " + fs::absolute(d).lexically_normal().string() + "\n";
  key += fmt::format("stdlib {}\n", o.sema.stdlibDir);
  key += fmt::format("variants {} serial {} runtime-checks {} impl {} emit-mlir {} profile {} ranks {} "
                     "emulate {} host-kernels {} numerics {} matmul-precision {} block-products {}\n",
                     o.variants, o.serial, o.runtimeChecks, o.impl, o.emitMlir, o.profile, o.ranks,
                     o.emulate, o.hostKernels, support::toString(o.numerics),
                     support::toString(o.matmulPrecision), support::toString(o.blockProducts));
  // A configuration's constants are checked by the build: a key of its own,
  // so no entry built without the check answers for one with it.
  for (const plan::ConstantExpectation &c : o.constants)
    key += fmt::format("constant {} {} {}\n", c.constant, c.key, c.value.dump());

  // The weights decide which optional tensors are compiled in: their names.
  if (o.weights.empty()) {
    key += "weights none\n";
  } else {
    std::string werr;
    auto w = rt::SafeTensorsFile::open(o.weights, werr);
    if (!w) {
      diags.report(Diag::error("weights", werr));
      return std::nullopt;
    }
    std::vector<std::string> names;
    for (auto &[name, t] : w->tensors())
      names.push_back(name);
    std::sort(names.begin(), names.end());
    for (const std::string &n : names)
      key += "tensor " + n + "\n";
  }
  if (!o.binding.empty()) {
    std::string why;
    std::optional<std::string> d = fileDigest(o.binding, &why);
    if (!d) {
      diags.report(Diag::error("io", fmt::format("cannot read the binding manifest '{}': {}", o.binding, why)));
      return std::nullopt;
    }
    key += "binding " + *d + "\n";
  }
  return key;
}

std::optional<std::string> cachedArtifact(Options o, support::DiagSink &diags) {
  std::string err;
  std::optional<std::string> root = artifactCacheRoot(err);
  if (!root) {
    diags.report(Diag::error("cache", err));
    return std::nullopt;
  }
  std::optional<std::string> key = artifactCacheKey(o, diags);
  if (!key)
    return std::nullopt;
  std::string entry =
      (fs::path(*root) / (fs::path(o.file).stem().string() + "-" + support::sha256Hex(*key).substr(0, 32)))
          .string();

  struct stat st;
  if (::lstat(entry.c_str(), &st) == 0) {
    if (st.st_uid != ::geteuid()) {
      diags.report(Diag::error("cache", fmt::format("cache entry '{}' is owned by uid {}, not you (uid {}): "
                                                    "refusing to use it",
                                                    entry, st.st_uid, ::geteuid())));
      return std::nullopt;
    }
    std::string why;
    if (!S_ISDIR(st.st_mode))
      why = "not a directory";
    else if (st.st_mode & (S_IWGRP | S_IWOTH))
      why = fmt::format("writable by others (mode {})", modeText(st.st_mode));
    else
      why = verifyEntry(entry);
    if (why.empty())
      return entry;
    // The runtime's advice is what happens next.
    for (const char *advice : {" (rebuild it with `linnet build`)", "; rebuild it"})
      if (why.size() > std::strlen(advice) && why.compare(why.size() - std::strlen(advice), std::string::npos, advice) == 0)
        why.resize(why.size() - std::strlen(advice));
    diags.report(Diag::note(fmt::format("cache entry '{}' is damaged ({}): rebuilding it", entry, why)));
    // Out of the way first: a build replaces only a whole artifact.
    std::string aside = fmt::format("{}.damaged-{}", entry, ::getpid());
    std::error_code ec;
    if (::rename(entry.c_str(), aside.c_str()) != 0) {
      diags.report(Diag::error(
          "cache", fmt::format("cannot move the damaged cache entry '{}' aside: {}", entry, std::strerror(errno))));
      return std::nullopt;
    }
    fs::remove_all(aside, ec);
  }

  o.output = entry;
  o.dumpIR.clear();
  diags.report(Diag::note(fmt::format("building {} into {}", o.file, entry)));
  if (Compiler(o, diags).buildArtifact() != 0)
    return std::nullopt;
  ::chmod(entry.c_str(), 0700);
  // The build read the sources again: one changed meanwhile would leave an
  // entry under a key that does not describe it.
  std::optional<std::string> after = artifactCacheKey(o, diags);
  if (!after || *after != *key) {
    std::error_code ec;
    fs::remove_all(entry, ec);
    diags.report(
        Diag::error("cache", fmt::format("the sources of '{}' changed during its build; run it again", o.file)));
    return std::nullopt;
  }
  return entry;
}

std::optional<std::string> cachedSource(const std::string &text, const std::string &name, std::string &error) {
  bool ok = !name.empty() && name.size() <= 128 && name[0] != '.' &&
            std::all_of(name.begin(), name.end(),
                        [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; });
  if (!ok) {
    error = fmt::format("source name '{}': expected letters, digits, '_', '-' or '.' (not first)", name);
    return std::nullopt;
  }
  std::optional<std::string> root = artifactCacheRoot(error);
  if (!root)
    return std::nullopt;
  std::string digest = support::sha256Hex(text);
  fs::path dir = fs::path(*root) / "sources" / digest.substr(0, 32);
  if (!makePrivateDirectories(dir, error))
    return std::nullopt;
  std::string path = (dir / (name + ".ln")).string();
  // Kept while its bytes are the text (the name fixes them); else rewritten.
  if (std::optional<std::string> d = fileDigest(path); d && *d == digest)
    return path;
  if (!support::writeFileAtomic(path, text, error)) {
    error = fmt::format("cannot write '{}': {}", path, error);
    return std::nullopt;
  }
  return path;
}

} // namespace linnet::compiler
