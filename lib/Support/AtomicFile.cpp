//===- AtomicFile.cpp - Outputs that appear whole or not at all -----------===//
#include "linnet/Support/AtomicFile.h"
#include "linnet/Support/Input.h"

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <iostream>
#include <list>
#include <mutex>
#include <optional>
#include <random>
#include <set>
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

/// One input of an InputScope, identified when the scope opened.
struct InputFile {
  std::string given;  // as the command named it
  fs::path canonical; // links resolved (weakly, when it does not exist)
  bool exists = false;
  dev_t dev = 0;
  ino_t ino = 0;
};

struct Scope {
  unsigned long long id;
  std::vector<InputFile> files;
};

std::mutex gScopesMutex;
std::list<Scope> gScopes;
unsigned long long gNextScope = 1;

InputFile identify(const std::string &path) {
  InputFile f;
  f.given = path;
  std::error_code ec;
  f.canonical = fs::weakly_canonical(path, ec);
  if (ec)
    f.canonical = fs::absolute(path, ec).lexically_normal();
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    f.exists = true;
    f.dev = st.st_dev;
    f.ino = st.st_ino;
  }
  return f;
}

/// Every input of every open scope (a copy: scopes may close meanwhile).
std::vector<InputFile> currentInputs() {
  std::lock_guard<std::mutex> lock(gScopesMutex);
  std::vector<InputFile> all;
  for (const Scope &s : gScopes)
    all.insert(all.end(), s.files.begin(), s.files.end());
  for (const std::string &source : input::sourcesRead())
    all.push_back(identify(source));
  return all;
}

/// Why the existing directory `dir` (not a link) may not be replaced by an
/// artifact, or "" when it may: it is empty, or it is a linnet artifact by
/// its manifest's schema and holds nothing but the files its manifest lists.
/// A file merely named manifest.json does not make a folder an artifact.
std::string notReplaceable(const std::string &dir) {
  std::error_code ec;
  if (fs::is_empty(dir, ec) && !ec)
    return "";
  const std::string advice = "refusing to replace it (give a new or an artifact directory)";
  std::string manifest = (fs::path(dir) / "manifest.json").string();
  struct stat st;
  if (::lstat(manifest.c_str(), &st) != 0 || !S_ISREG(st.st_mode))
    return fmt::format("'{}' is a directory that holds no artifact: {}", dir, advice);
  std::string text, err, where;
  std::optional<nlohmann::json> j;
  if (input::readFile(manifest, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, err))
    j = input::parseJson(text, where, err);
  std::string schema;
  if (j && j->is_object() && j->contains("schema") && (*j)["schema"].is_string())
    schema = (*j)["schema"].get<std::string>();
  if (schema.rfind("linnet.program-artifact/", 0) != 0)
    return fmt::format("'{}' holds a manifest.json that is not a linnet artifact's (its schema is not "
                       "linnet.program-artifact/N): {}",
                       dir, advice);
  std::set<std::string> listed = {"manifest.json"};
  if (auto files = j->find("files"); files != j->end() && files->is_array())
    for (const nlohmann::json &f : *files)
      if (f.is_object() && f.contains("path") && f["path"].is_string())
        listed.insert(fs::path(f["path"].get<std::string>()).begin()->string());
  std::vector<std::string> others;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
    if (!listed.count(it->path().filename().string()))
      others.push_back(it->path().filename().string());
  if (ec)
    return fmt::format("cannot read the directory '{}': {}", dir, ec.message());
  if (!others.empty()) {
    std::sort(others.begin(), others.end());
    return fmt::format("'{}' is an artifact that also holds '{}', which its manifest does not list: "
                       "refusing to replace it (move {} out, or give a new directory)",
                       dir, others.front(), others.size() == 1 ? "it" : "them");
  }
  return "";
}
} // namespace

AtomicOutput::AtomicOutput(std::string path, std::string &error) : path_(std::move(path)) {
  if (std::string why = checkOutput(path_, OutputKind::File); !why.empty()) {
    error = why;
    return;
  }
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

InputScope::InputScope(const std::vector<std::string> &paths) {
  Scope scope;
  for (const std::string &p : paths) {
    if (p.empty() || p == "-")
      continue;
    scope.files.push_back(identify(p));
    // An artifact is read file by file: none of its files may be an output.
    std::error_code ec;
    if (fs::is_directory(p, ec) && fs::exists(fs::path(p) / "manifest.json", ec))
      for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec))
        scope.files.push_back(identify(it->path().string()));
    // A sharded checkpoint's index is read with its shards: none of them
    // may be an output either (the reader refuses a shard outside its
    // folder; whatever the index says, only its folder's files are named).
    if (p.size() > 5 && p.compare(p.size() - 5, 5, ".json") == 0 && fs::is_regular_file(p, ec)) {
      std::string text, why, where;
      if (input::readFile(p, input::maxJsonBytes(), "LINNET_MAX_JSON_BYTES", text, why))
        if (std::optional<nlohmann::json> doc = input::parseJson(text, where, why);
            doc && doc->is_object() && doc->contains("weight_map") && (*doc)["weight_map"].is_object())
          for (auto &[name, shard] : (*doc)["weight_map"].items())
            if (shard.is_string())
              scope.files.push_back(identify((fs::path(p).parent_path() / shard.get<std::string>()).string()));
    }
  }
  std::lock_guard<std::mutex> lock(gScopesMutex);
  id_ = scope.id = gNextScope++;
  gScopes.push_back(std::move(scope));
}

InputScope::~InputScope() {
  std::lock_guard<std::mutex> lock(gScopesMutex);
  gScopes.remove_if([&](const Scope &s) { return s.id == id_; });
}

std::string checkOutput(const std::string &given, OutputKind kind) {
  if (given.empty() || given == "-")
    return "";
  std::string path = stripSlashes(given);
  struct stat lst;
  bool exists = ::lstat(path.c_str(), &lst) == 0;
  std::vector<InputFile> inputs = currentInputs();
  bool dirKind = kind != OutputKind::File;
  // Compared as the file it names (a link followed), so that the message
  // names the input at stake.
  struct stat target;
  bool targetExists = exists && ::stat(path.c_str(), &target) == 0;
  std::error_code ec;
  fs::path canonical = fs::weakly_canonical(path, ec);
  for (const InputFile &in : inputs) {
    bool same = targetExists && in.exists ? target.st_dev == in.dev && target.st_ino == in.ino
                                          : !ec && !in.canonical.empty() && canonical == in.canonical;
    if (same)
      return fmt::format("the output '{}' is the input '{}': refusing to {} it (write the output "
                         "elsewhere)",
                         given, in.given, dirKind ? "replace" : "overwrite");
  }
  // A link at the last component is neither followed (it could point at a
  // source) nor replaced (the user's link would silently become a file).
  if (exists && S_ISLNK(lst.st_mode)) {
    std::error_code lec;
    fs::path to = fs::read_symlink(path, lec);
    return fmt::format("the output '{}' is a symbolic link (to '{}'): refusing to write through it or "
                       "replace it (remove the link, or name a file that is not one)",
                       given, to.string());
  }
  if (!exists)
    return "";
  if (kind == OutputKind::File)
    return S_ISDIR(lst.st_mode) ? fmt::format("the output '{}' is a directory (a file was expected)", given)
                                : "";
  if (!S_ISDIR(lst.st_mode))
    return fmt::format("'{}' exists and is not a directory", given);
  if (kind == OutputKind::Directory)
    return ""; // files are added by name, each checked; nothing is removed
  // An artifact replaces the whole directory: nothing read may be inside.
  for (const InputFile &in : inputs) {
    if (!in.exists)
      continue;
    for (fs::path p = in.canonical.parent_path(); !p.empty(); p = p.parent_path()) {
      struct stat st;
      if (::stat(p.c_str(), &st) == 0 && st.st_dev == lst.st_dev && st.st_ino == lst.st_ino)
        return fmt::format("the output directory '{}' holds the input '{}': refusing to replace it "
                           "(write the artifact elsewhere)",
                           given, in.given);
      if (p == p.root_path())
        break;
    }
  }
  return notReplaceable(path);
}

bool checkCommandOutput(const char *command, const std::string &out, OutputKind kind) {
  std::string why = checkOutput(out, kind);
  if (why.empty())
    return true;
  std::cerr << fmt::format("linnet {}: error: {}\n", command, why);
  return false;
}

bool prepareOutputDir(const std::string &path, std::string &error) {
  error = checkOutput(path, OutputKind::Directory);
  if (!error.empty())
    return false;
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) {
    error = fmt::format("cannot create the directory '{}': {}", path, ec.message());
    return false;
  }
  return true;
}

StagingDir::StagingDir(std::string dest, std::string &error) : dest_(stripSlashes(std::move(dest))) {
  if (std::string why = checkOutput(dest_, OutputKind::Artifact); !why.empty()) {
    error = why;
    return;
  }
  std::error_code ec;
  std::string parent = parentOf(dest_);
  fs::create_directories(parent, ec);
  if (ec) {
    error = fmt::format("cannot create '{}': {}", parent, ec.message());
    return;
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
  done_ = commitDirectory(path_, dest_, error);
  return done_;
}

bool commitDirectory(const std::string &staged, const std::string &destGiven, std::string &error) {
  std::string dest = stripSlashes(destGiven);
  // Checked again: the destination may have changed since the build began.
  if (std::string why = checkOutput(dest, OutputKind::Artifact); !why.empty()) {
    error = why;
    return false;
  }
  // Another build may commit between any two steps: retry a few times, each
  // step leaving `dest` either absent or some build's whole artifact.
  for (int attempt = 0; attempt < 8; ++attempt) {
    if (::rename(staged.c_str(), dest.c_str()) == 0)
      return true;
    if (errno != EEXIST && errno != ENOTEMPTY) {
      error = fmt::format("cannot move '{}' to '{}': {}", staged, dest, std::strerror(errno));
      return false;
    }
    // `dest` is an earlier artifact: swap it for the new one in one step
    // (the old one lands at the staging name and is removed).
    if (::renameat2(AT_FDCWD, staged.c_str(), AT_FDCWD, dest.c_str(), RENAME_EXCHANGE) == 0) {
      std::error_code ec;
      fs::remove_all(staged, ec);
      return true;
    }
    if (errno == ENOENT)
      continue; // it vanished (another build moved it aside): try again
    if (errno != EINVAL && errno != ENOSYS) {
      error = fmt::format("cannot replace '{}': {}", dest, std::strerror(errno));
      return false;
    }
    // No exchange on this filesystem: move the old one aside, then the new
    // one in (`dest` is absent for that instant).
    std::string old = dest + ".old-" + uniqueSuffix();
    if (::rename(dest.c_str(), old.c_str()) != 0 && errno != ENOENT) {
      error = fmt::format("cannot move the previous '{}' aside: {}", dest, std::strerror(errno));
      return false;
    }
    bool moved = ::rename(staged.c_str(), dest.c_str()) == 0;
    if (!moved)
      ::rename(old.c_str(), dest.c_str()); // put the previous one back
    std::error_code ec;
    fs::remove_all(old, ec);
    if (moved)
      return true;
  }
  error = fmt::format("cannot move '{}' to '{}': other builds keep replacing it", staged, dest);
  return false;
}

} // namespace linnet::support
