//===- ArtifactFiles.cpp - Reading an artifact's files through its digests ===//
#include "linnet/Runtime/Artifact.h"
#include "linnet/Support/Digest.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace linnet::rt {
namespace {

/// The symlink-free absolute form of `path`, or empty.
std::string realPath(const std::string &path) {
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) ? std::string(buf) : std::string();
}

} // namespace

std::unique_ptr<VerifiedArtifact> VerifiedArtifact::open(const std::string &dir, std::string &error) {
  std::string path = dir + "/manifest.json";
  std::unique_ptr<VerifiedArtifact> a(new VerifiedArtifact());
  a->dir_ = dir;
  a->realDir_ = realPath(dir);
  if (a->realDir_.empty()) {
    error = fmt::format("{}: not an artifact directory: {}", dir, std::strerror(errno));
    return nullptr;
  }
  std::string text, why;
  // The manifest is the one file read without a digest: it holds them.
  if (!input::readFile(path, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, why)) {
    if (errno == ENOENT || why == std::strerror(ENOENT))
      why = "missing: an artifact is loaded only through the manifest that lists its files' digests "
            "(rebuild it with `linnet build`)";
    error = fmt::format("{}: {}", path, why);
    return nullptr;
  }
  if (!parseArtifactManifest(text, a->manifest_, why)) {
    error = fmt::format("{}: {}", path, why);
    return nullptr;
  }
  return a;
}

bool VerifiedArtifact::read(const std::string &path, std::string &bytes, std::string &error) const {
  std::string full = dir_ + "/" + path;
  const ArtifactFileEntry *entry = manifest_.find(path);
  if (!entry) {
    error = fmt::format("{}: not listed in {}/manifest.json: the artifact reads no file its manifest does "
                        "not cover with a digest (rebuild it)",
                        full, dir_);
    return false;
  }
  // Listed paths are relative and free of `..` (parseArtifactManifest);
  // a symlink may still point anywhere, so resolve it and look.
  std::string real = realPath(full);
  if (real.empty()) {
    if (errno == ENOENT)
      error = fmt::format("{}: missing, although {}/manifest.json lists it (rebuild the artifact)", full, dir_);
    else
      error = fmt::format("{}: cannot open: {}", full, std::strerror(errno));
    return false;
  }
  if (real.compare(0, realDir_.size() + 1, realDir_ + "/") != 0) {
    error = fmt::format("{}: resolves to '{}', outside the artifact directory: refused", full, real);
    return false;
  }
  struct stat st;
  std::string why;
  int fd = input::openRegular(real, st, why);
  if (fd < 0) {
    error = fmt::format("{}: {}{}", full, why.rfind("is ", 0) == 0 ? "" : "cannot open: ", why);
    return false;
  }
  if (static_cast<uint64_t>(st.st_size) != entry->bytes) {
    ::close(fd);
    error = fmt::format("{}: artifact file whose size does not match its manifest (manifest.json records {} "
                        "bytes, the file has {}); rebuild it",
                        full, entry->bytes, static_cast<uint64_t>(st.st_size));
    return false;
  }
  bytes.resize(entry->bytes);
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::read(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    off += static_cast<size_t>(n);
  }
  ::close(fd);
  if (off != bytes.size()) {
    error = fmt::format("{}: cannot read all {} bytes", full, bytes.size());
    return false;
  }
  std::string have = support::sha256Hex(bytes);
  if (have != entry->sha256) {
    error = fmt::format("{}: artifact file whose digest does not match its manifest (manifest.json records "
                        "sha256:{}, the file is sha256:{}); rebuild it",
                        full, entry->sha256, have);
    return false;
  }
  return true;
}

} // namespace linnet::rt
