//===- ArtifactCache.h - The one cache of artifacts built from .ln -*- C++ -*-===//
//
// `linnet run/generate/profile MODEL.ln` and the Python package (through
// `linnet build --cached`) build a model on demand into this cache and reuse
// the entry while nothing that decides the artifact changed. The key covers:
//
//  - the compiler: its version and the build ids (GNU build-id, else the
//    file's SHA-256) of the running program and of libLLVM/libMLIR, so a
//    rebuilt compiler never reuses what an older one made;
//  - what the code is made for: the target's codeIdentity() (host CPU and
//    features, a GPU's architecture) and the planning files it reads;
//  - the source and exactly the files the front end resolves its imports to
//    (path and text), resolved again at each lookup, so a module that now
//    shadows another changes the key; nothing else beside the model is read;
//  - every option of the build (-D, -I, --root, target, emulate, impl, ...);
//  - the weights' presence set (their tensor names) and the binding manifest.
//
// The cache's root is $LINNET_CACHE_DIR, else $XDG_CACHE_HOME/linnet, else
// $HOME/.cache/linnet, never a shared fallback. Missing components are made
// 0700; a root (or an entry) owned by another user, or that others can
// write, is refused: a planted entry would be native code that runs. An
// entry is used only once every file its manifest lists matches its digest
// (as the runtime checks it); a damaged one is rebuilt. Entries are built in
// a staging directory and renamed into place whole (Support/AtomicFile.h).
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_COMPILER_ARTIFACTCACHE_H
#define LINNET_COMPILER_ARTIFACTCACHE_H

#include "linnet/Compiler/Compiler.h"

#include <iosfwd>
#include <optional>
#include <string>

namespace linnet::compiler {

/// The cache's root directory, created (0700) if missing and checked: owned
/// by the effective user and writable by nobody else. nullopt with `error`
/// saying which directory and why.
std::optional<std::string> artifactCacheRoot(std::string &error);

/// Empty when `dir` (which exists) is owned by the effective user and not
/// writable by group or others; otherwise why not ("owned by uid 65534, not
/// you (uid 1000)", "writable by others (mode 0777)").
std::string checkPrivateDirectory(const std::string &dir);

/// The text the key of `options` is the SHA-256 of (see above); nullopt
/// after reporting to `diags` (an unreadable source or target file).
std::optional<std::string> artifactCacheKey(const Options &options, support::DiagSink &diags);

/// The artifact directory for `options` (its `output` and `dumpIR` are
/// ignored): a cache entry that verifies, else one built now. nullopt after
/// reporting the errors to `diags` (the build's own among them). Notes
/// (building, a damaged entry rebuilt) go to `diags` too.
std::optional<std::string> cachedArtifact(Options options, support::DiagSink &diags);

/// A source generated in memory (a traced Python module), stored at a path
/// fixed by its text, `<root>/sources/<digest>/<name>.ln`, so that its
/// entries are found again. nullopt with `error`.
std::optional<std::string> cachedSource(const std::string &text, const std::string &name,
                                        std::string &error);

} // namespace linnet::compiler

#endif // LINNET_COMPILER_ARTIFACTCACHE_H
