//===- AtomicFile.h - Outputs that appear whole or not at all ---*- C++ -*-===//
//
// Every file linnet writes goes to a temporary file in the destination's
// directory (same filesystem) and is renamed over it only once complete, so
// a failed or killed command never leaves a truncated output and never
// destroys the previous one. An artifact directory is built in a staging
// directory beside it and swapped in the same way. And an output that is one
// of the command's inputs is refused before anything is written.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_ATOMICFILE_H
#define LINNET_SUPPORT_ATOMICFILE_H

#include <string>
#include <string_view>
#include <vector>

namespace linnet::support {

/// A file written through a temporary file beside `path`, renamed over it by
/// commit(); destroyed uncommitted, the temporary file is removed and
/// `path` was never touched. For outputs too large to build in memory.
class AtomicOutput {
public:
  /// On failure `error` says why and ok() is false.
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
/// On failure `error` says why (without the path) and `path` is unchanged.
bool writeFileAtomic(const std::string &path, std::string_view bytes, std::string &error);

/// True when `a` and `b` name the same file: the same device and inode when
/// both exist, else the same canonical path (the output may not exist yet).
bool sameFile(const std::string &a, const std::string &b);

/// Checks that output `out` is none of `inputs` (empty entries are skipped);
/// prints "linnet CMD: error: ..." naming both and returns false if it is.
bool checkOutputIsNotInput(const char *command, const std::string &out,
                           const std::vector<std::string> &inputs);

/// A directory built beside its destination and moved into place whole.
/// The staging name is unique per process and call; a StagingDir that is
/// neither committed nor kept removes its directory when destroyed.
class StagingDir {
public:
  /// Creates `<dest>.tmp-<pid>-<random>` beside `dest`. On failure
  /// `error` says why and path() is empty.
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
