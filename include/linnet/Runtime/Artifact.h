//===- Artifact.h - The artifact manifest and its checked files -*- C++ -*-===//
//
// An artifact directory is trusted only through its manifest.json, which
// lists every file the runtime reads with its SHA-256 and size
// (docs/runtime-abi.md, "manifest.json"). A VerifiedArtifact reads the
// manifest strictly, refuses any listed path that leaves the directory
// (absolute, `..`, or a symlink that resolves outside), and hands out a
// file's bytes only after they match their digest: what is parsed or loaded
// is exactly what was hashed, never a second read of the disk.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_RUNTIME_ARTIFACT_H
#define LINNET_RUNTIME_ARTIFACT_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace linnet::rt {

/// The manifest schema this runtime reads.
inline constexpr const char *kArtifactManifestSchema = "linnet.program-artifact/1";
/// The runtime ABI this runtime implements itself: host code called with
/// packed memref descriptors (docs/runtime-abi.md). Other ABIs are served
/// by the device backends registered with it (Runtime.h).
inline constexpr const char *kCpuRuntimeAbi = "linnet-cpu-packed-v1";

/// Whether `abi` is this runtime's own or a registered device backend's.
bool runtimeAbiKnown(std::string_view abi);
/// The ABIs runtimeAbiKnown accepts, for messages ("a, b").
std::string knownRuntimeAbis();

struct ArtifactFileEntry {
  std::string path;   // relative to the artifact directory
  std::string sha256; // 64 lowercase hex digits
  uint64_t bytes = 0;
};

/// What the runtime takes from manifest.json.
struct ArtifactManifest {
  std::string library; // the code library, one of `files`
  /// The numerics policy the code was built under ("as-written",
  /// "f32-compute"): an interpreter of the artifact's plan takes it.
  std::string numerics = "as-written";
  /// What its f32 products may round to ("highest", "tf32").
  std::string matmulPrecision = "highest";
  std::string blockProducts = "exact"; // --block-products: exact | int8
  std::vector<ArtifactFileEntry> files;
  const ArtifactFileEntry *find(std::string_view path) const;
};

/// Parses manifest.json's text: a known `schema`, `library` (a listed
/// file), `files` (each `{path, sha256, bytes}`, paths unique and inside
/// the directory). Errors read "files[1].sha256: expected ..., found ...".
bool parseArtifactManifest(std::string_view text, ArtifactManifest &out, std::string &error);

/// Empty when `path` may name a file of an artifact: relative, no `.` or
/// `..` component, no empty component, no backslash or control character;
/// otherwise what is wrong with it.
std::string checkArtifactPath(std::string_view path);

/// An artifact directory whose manifest was read and checked.
class VerifiedArtifact {
public:
  /// Reads `dir`/manifest.json. On failure returns null and sets `error`
  /// to "<dir>/manifest.json: <problem>".
  static std::unique_ptr<VerifiedArtifact> open(const std::string &dir, std::string &error);

  const std::string &dir() const { return dir_; }
  const ArtifactManifest &manifest() const { return manifest_; }

  /// Reads listed file `path` once into `bytes` and checks its size and
  /// digest. Refuses a path the manifest does not list, one that resolves
  /// outside the directory, and anything but a regular file.
  bool read(const std::string &path, std::string &bytes, std::string &error) const;

private:
  std::string dir_, realDir_;
  ArtifactManifest manifest_;
};

} // namespace linnet::rt

#endif
