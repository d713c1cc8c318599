//===- TargetRegistry.cpp - The targets of this program --------------------===//
#include "linnet/Target/Target.h"

#include <mutex>

namespace linnet::target {

namespace {
struct Registry {
  std::mutex mutex;
  std::vector<const Target *> targets;
};
Registry &registry() {
  static Registry r;
  return r;
}
} // namespace

void registerTarget(const Target &target) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Target *&t : r.targets)
    if (t->kind() == target.kind()) {
      t = &target;
      return;
    }
  r.targets.push_back(&target);
}

const Target *lookupTarget(llvm::StringRef kind) {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  for (const Target *t : r.targets)
    if (t->kind() == kind)
      return t;
  return nullptr;
}

std::vector<const Target *> registeredTargets() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.targets;
}

} // namespace linnet::target
