//===- Timing.h - `linnet build --timing`: stages and MLIR passes -*- C++ -*-===//
//
// A TimingSession turns timing on for its lifetime and prints MLIR's
// execution time report (DefaultTimingManager, tree display, to stderr)
// when it ends. While one is open, every TimingStage nests a named timer
// under the stage around it, and enablePassTiming(pm) nests each pass of
// `pm` under the current stage (PassManager::enableTiming): the report is
// one tree of stages with their passes. With no session open, stages and
// enablePassTiming cost a thread-local read. One session per thread.
//
// Whether or not a session is open, the innermost stage's name is kept in
// currentStageName() for a progress line (linnet build on a terminal).
//
// Header-only: the libraries that time their pipelines (the importer, the
// CPU back end) need nothing but libMLIR, which they link already.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_TIMING_H
#define LINNET_SUPPORT_TIMING_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Support/Timing.h"

#include "llvm/ADT/StringRef.h"

#include <atomic>

namespace linnet::support {

namespace detail {
/// The innermost open scope of this thread's session; null: no session.
inline thread_local mlir::TimingScope *currentTimingScope = nullptr;
/// The innermost stage of the build (any thread may read it).
inline std::atomic<const char *> currentStage{nullptr};
} // namespace detail

/// The name of the innermost open stage, or null.
inline const char *currentStageName() { return detail::currentStage.load(std::memory_order_relaxed); }

class TimingSession {
public:
  TimingSession() {
    manager_.setEnabled(true);
    manager_.setDisplayMode(mlir::DefaultTimingManager::DisplayMode::Tree);
    root_ = manager_.getRootScope();
    outer_ = detail::currentTimingScope;
    detail::currentTimingScope = &root_;
  }
  /// The manager prints the report to stderr when it is destroyed, after
  /// the root scope (declared after it) has stopped.
  ~TimingSession() {
    detail::currentTimingScope = outer_;
    root_.stop();
  }
  TimingSession(const TimingSession &) = delete;
  TimingSession &operator=(const TimingSession &) = delete;

private:
  mlir::DefaultTimingManager manager_;
  mlir::TimingScope root_;
  mlir::TimingScope *outer_ = nullptr;
};

class TimingStage {
public:
  /// `name` must outlive the stage (a string literal).
  explicit TimingStage(const char *name) : outerName_(detail::currentStage.exchange(name)) {
    if (!detail::currentTimingScope)
      return;
    scope_ = detail::currentTimingScope->nest(name);
    outer_ = detail::currentTimingScope;
    detail::currentTimingScope = &scope_;
  }
  ~TimingStage() {
    detail::currentStage.store(outerName_);
    if (!outer_)
      return;
    scope_.stop();
    detail::currentTimingScope = outer_;
  }
  /// Ends this stage and starts the next one at the same level.
  void next(const char *name) {
    detail::currentStage.store(name);
    if (!outer_)
      return;
    scope_.stop();
    scope_ = outer_->nest(name);
  }
  TimingStage(const TimingStage &) = delete;
  TimingStage &operator=(const TimingStage &) = delete;

private:
  mlir::TimingScope scope_;
  mlir::TimingScope *outer_ = nullptr;
  const char *outerName_ = nullptr;
};

/// Times the passes of `pm` under the current stage, if a session is open.
inline void enablePassTiming(mlir::PassManager &pm) {
  if (detail::currentTimingScope)
    pm.enableTiming(*detail::currentTimingScope);
}

} // namespace linnet::support

#endif
