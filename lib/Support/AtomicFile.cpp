//===- AtomicFile.cpp - Outputs that appear whole or not at all -----------===//
#include "linnet/Support/AtomicFile.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <random>
#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace linnet::support {
namespace {

std::string uniqueSuffix() {
  static std::random_device rd;
  return fmt::format("{}-{:08x}", ::getpid(), rd());
}

/// The directory a path's file lives in ("." for a bare name).
std::string parentOf(const std::string &path) {
  fs::path p = fs::path(path).parent_path();
  return p.empty() ? std::string(".") : p.string();
}

/// The umask, read without changing it for more than an instant.
mode_t currentUmask() {
  mode_t m = ::umask(022);
  ::umask(m);
  return m;
}

/// Names with no trailing separator: `dir/` and `dir` are one destination.
std::string stripSlashes(std::string p) {
  while (p.size() > 1 && p.back() == '/')
    p.pop_back();
  return p;
}

/// A directory that holds an artifact (or nothing) may be replaced; any
/// other directory is the user's and is never swapped away.
bool replaceable(const std::string &dir) {
  std::error_code ec;
  if (fs::is_empty(dir, ec))
    return true;
  for (const char *f : {"manifest.json", "runtime.json", "model.so"})
    if (fs::exists(fs::path(dir) / f, ec))
      return true;
  return false;
}
} // namespace

AtomicOutput::AtomicOutput(std::string path, std::string &error) : path_(std::move(path)) {
  std::string dir = parentOf(path_);
  std::string tmpl = (fs::path(dir) / ("." + fs::path(path_).filename().string() + ".tmp-XXXXXX")).string();
  std::vector<char> name(tmpl.begin(), tmpl.end());
  name.push_back('\0');
  int fd = ::mkstemp(name.data());
  if (fd < 0) {
    error = fmt::format("cannot create a temporary file in '{}': {}", dir, std::strerror(errno));
    return;
  }
  tmp_ = name.data();
  // mkstemp creates 0600; an output gets what a plain create would give it.
  if (::fchmod(fd, 0666 & ~currentUmask()) != 0) {
    error = fmt::format("cannot set its permissions: {}", std::strerror(errno));
    ::close(fd);
    ::unlink(tmp_.c_str());
    return;
  }
  fd_ = fd;
}

AtomicOutput::~AtomicOutput() {
  if (fd_ >= 0) {
    ::close(fd_);
    ::unlink(tmp_.c_str());
  }
}

bool AtomicOutput::write(std::string_view bytes, std::string &error) {
  for (size_t off = 0; off < bytes.size();) {
    ssize_t n = ::write(fd_, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      error = fmt::format("cannot write: {}", std::strerror(n < 0 ? errno : ENOSPC));
      return false;
    }
    off += static_cast<size_t>(n);
  }
  return true;
}

bool AtomicOutput::commit(std::string &error) {
  int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) {
    error = fmt::format("cannot write: {}", std::strerror(errno));
    ::unlink(tmp_.c_str());
    return false;
  }
  if (::rename(tmp_.c_str(), path_.c_str()) != 0) {
    error = fmt::format("cannot rename the temporary file into place: {}", std::strerror(errno));
    ::unlink(tmp_.c_str());
    return false;
  }
  return true;
}

bool writeFileAtomic(const std::string &path, std::string_view bytes, std::string &error) {
  AtomicOutput out(path, error);
  return out.ok() && out.write(bytes, error) && out.commit(error);
}

bool sameFile(const std::string &a, const std::string &b) {
  if (a.empty() || b.empty() || a == "-" || b == "-")
    return false;
  struct stat sa, sb;
  if (::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ec1, ec2;
  fs::path ca = fs::weakly_canonical(a, ec1), cb = fs::weakly_canonical(b, ec2);
  return !ec1 && !ec2 && ca == cb;
}

bool checkOutputIsNotInput(const char *command, const std::string &out,
                           const std::vector<std::string> &inputs) {
  for (const std::string &in : inputs)
    if (sameFile(out, in)) {
      std::cerr << fmt::format("linnet {}: error: the output '{}' is the input '{}': refusing to "
                               "overwrite it (write the output elsewhere)\n",
                               command, out, in);
      return false;
    }
  return true;
}

StagingDir::StagingDir(std::string dest, std::string &error) : dest_(stripSlashes(std::move(dest))) {
  std::error_code ec;
  std::string parent = parentOf(dest_);
  fs::create_directories(parent, ec);
  if (ec) {
    error = fmt::format("cannot create '{}': {}", parent, ec.message());
    return;
  }
  struct stat st;
  if (::stat(dest_.c_str(), &st) == 0) {
    if (!S_ISDIR(st.st_mode)) {
      error = fmt::format("'{}' exists and is not a directory", dest_);
      return;
    }
    if (!replaceable(dest_)) {
      error = fmt::format("'{}' is a directory that holds no artifact: refusing to replace it "
                          "(give a new or an artifact directory)",
                          dest_);
      return;
    }
  }
  std::string p = dest_ + ".tmp-" + uniqueSuffix();
  if (::mkdir(p.c_str(), 0777) != 0) {
    error = fmt::format("cannot create the staging directory '{}': {}", p, std::strerror(errno));
    return;
  }
  path_ = std::move(p);
}

StagingDir::~StagingDir() {
  if (!done_ && !path_.empty()) {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
}

bool StagingDir::commit(std::string &error) {
  // Another build may commit between any two steps: retry a few times, each
  // step leaving `dest_` either absent or some build's whole artifact.
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::rename(path_.c_str(), dest_.c_str()) == 0) {
      done_ = true;
      return true;
    }
    if (errno != EEXIST && errno != ENOTEMPTY) {
      error = fmt::format("cannot move '{}' to '{}': {}", path_, dest_, std::strerror(errno));
      return false;
    }
    // `dest_` is an earlier artifact: swap it for the new one in one step
    // (the old one lands at the staging name and is removed).
    if (::renameat2(AT_FDCWD, path_.c_str(), AT_FDCWD, dest_.c_str(), RENAME_EXCHANGE) == 0) {
      std::error_code ec;
      fs::remove_all(path_, ec);
      done_ = true;
      return true;
    }
    if (errno == ENOENT)
      continue; // it vanished (another build moved it aside): try again
    if (errno != EINVAL && errno != ENOSYS) {
      error = fmt::format("cannot replace '{}': {}", dest_, std::strerror(errno));
      return false;
    }
    // No exchange on this filesystem: move the old one aside, then the new
    // one in (`dest_` is absent for that instant).
    std::string old = dest_ + ".old-" + uniqueSuffix();
    if (::rename(dest_.c_str(), old.c_str()) != 0 && errno != ENOENT) {
      error = fmt::format("cannot move the previous '{}' aside: {}", dest_, std::strerror(errno));
      return false;
    }
    bool moved = ::rename(path_.c_str(), dest_.c_str()) == 0;
    if (!moved)
      ::rename(old.c_str(), dest_.c_str()); // put the previous one back
    std::error_code ec;
    fs::remove_all(old, ec);
    if (moved) {
      done_ = true;
      return true;
    }
  }
  error = fmt::format("cannot move '{}' to '{}': other builds keep replacing it", path_, dest_);
  return false;
}

} // namespace linnet::support
