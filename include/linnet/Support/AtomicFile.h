//===- AtomicFile.h - Outputs that appear whole or not at all ---*- C++ -*-===//
//
// Every file linnet writes goes to a temporary file in the destination's
// directory (same filesystem) and is renamed over it only once complete, so
// a failed or killed command never leaves a truncated output and never
// destroys the previous one. An artifact directory is built in a staging
// directory beside it and swapped in the same way.
//
// Every output also goes through one guard, checkOutput(), which AtomicOutput,
// writeFileAtomic, StagingDir and prepareOutputDir call themselves, so no
// writer can skip it: an output that is one of the running command's inputs
// (InputScope; same device and inode, links resolved) is refused, a symbolic
// link at the output's last component is refused (never followed, never
// replaced), and an existing directory is replaced only when it is a linnet
// artifact by its manifest's schema and holds nothing its manifest does not
// list (docs/security.md, "Outputs").
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_ATOMICFILE_H
#define LINNET_SUPPORT_ATOMICFILE_H

#include <string>
#include <string_view>
#include <vector>

namespace linnet::support {

/// What an output is, for checkOutput().
enum class OutputKind {
  File,      ///< a file, replaced by a rename (AtomicOutput)
  Directory, ///< a folder linnet writes named files into and never empties
             ///< (--dump-ir, profile -o, build --emit all)
  Artifact,  ///< a folder replaced whole by a new artifact (StagingDir)
};

/// The inputs of what runs in this process. While a scope lives, every
/// output is refused when it is one of these paths (same device and inode
/// after resolving links; for a path that does not exist, the same canonical
/// path), or, for an artifact directory, when it holds one. A directory
/// input that is an artifact brings the files in it as inputs too. Scopes
/// may overlap: a CLI command opens one for every path its options name; the
/// Python binding one per loaded model (its artifact, weights and binding).
class InputScope {
public:
  explicit InputScope(const std::vector<std::string> &paths);
  ~InputScope();
  InputScope(const InputScope &) = delete;
  InputScope &operator=(const InputScope &) = delete;

private:
  unsigned long long id_;
};

/// The one guard every output goes through: empty when `path` may be
/// written as `kind`, else one sentence saying why not, naming the path (and
/// the input it would destroy). "-" (standard output) and "" always pass.
std::string checkOutput(const std::string &path, OutputKind kind);

/// Checks `path` as an OutputKind::Directory and creates it (with its
/// parents). On failure `error` says why.
bool prepareOutputDir(const std::string &path, std::string &error);

/// Moves the directory `staged` (built beside `dest`) to `dest` whole, as
/// StagingDir::commit does; `dest` is checked as an OutputKind::Artifact
/// first. For staging directories made elsewhere (the Python compile cache).
bool commitDirectory(const std::string &staged, const std::string &dest, std::string &error);

/// A file written through a temporary file beside `path`, renamed over it by
/// commit(); destroyed uncommitted, the temporary file is removed and
/// `path` was never touched. For outputs too large to build in memory.
class AtomicOutput {
public:
  /// Checks `path` (checkOutput, OutputKind::File) and creates the temporary
  /// file. On failure `error` says why and ok() is false.
  AtomicOutput(std::string path, std::string &error);
  ~AtomicOutput();
  AtomicOutput(const AtomicOutput &) = delete;
  AtomicOutput &operator=(const AtomicOutput &) = delete;

  bool ok() const { return fd_ >= 0; }
  bool write(std::string_view bytes, std::string &error);
  bool commit(std::string &error);

private:
  std::string path_, tmp_;
  int fd_ = -1;
};

/// Writes `bytes` to `path` through a temporary file beside it and a rename.
/// On failure `error` says why and `path` is unchanged.
bool writeFileAtomic(const std::string &path, std::string_view bytes, std::string &error);

/// True when `a` and `b` name the same file: the same device and inode when
/// both exist, else the same canonical path (the output may not exist yet).
bool sameFile(const std::string &a, const std::string &b);

/// checkOutput(out, kind) for a command's named output, before any work:
/// prints "linnet CMD: error: ..." and returns false when it is refused.
bool checkCommandOutput(const char *command, const std::string &out, OutputKind kind);

/// A directory built beside its destination and moved into place whole.
/// The staging name is unique per process and call; a StagingDir that is
/// neither committed nor kept removes its directory when destroyed.
class StagingDir {
public:
  /// Checks `dest` (checkOutput, OutputKind::Artifact) and creates
  /// `<dest>.tmp-<pid>-<random>` beside it. On failure `error` says why and
  /// path() is empty.
  StagingDir(std::string dest, std::string &error);
  ~StagingDir();
  StagingDir(const StagingDir &) = delete;
  StagingDir &operator=(const StagingDir &) = delete;

  const std::string &path() const { return path_; }

  /// Moves the staging directory to `dest`: an existing `dest` (a previous
  /// artifact) is renamed aside first and removed after the new one is in
  /// place, so at every moment `dest` is a whole artifact or absent. When two
  /// commits race, the last complete one wins whole.
  bool commit(std::string &error);

private:
  std::string dest_, path_;
  bool done_ = false;
};

} // namespace linnet::support

#endif
