//===- Backends.cpp - The runtime ABIs a runtime can load ------------------===//
//
// The CPU ABI is the runtime's own; device backends (lib/Target/<T>/Runtime)
// register theirs. Kept apart from Runtime.cpp: the artifact readers (and
// their fuzzers) ask which ABIs are known without loading anything.
//
//===----------------------------------------------------------------------===//
#include "linnet/Runtime/Artifact.h"
#include "linnet/Runtime/Runtime.h"

#include <memory>
#include <mutex>

using namespace linnet::rt;

DeviceSession::~DeviceSession() = default;

namespace {
std::mutex &backendsMutex() {
  static std::mutex m;
  return m;
}
std::vector<std::unique_ptr<DeviceBackend>> &backends() {
  static std::vector<std::unique_ptr<DeviceBackend>> b;
  return b;
}
} // namespace

void linnet::rt::registerDeviceBackend(DeviceBackend backend) {
  std::lock_guard<std::mutex> lock(backendsMutex());
  for (auto &b : backends())
    if (b->abi == backend.abi) {
      *b = std::move(backend);
      return;
    }
  backends().push_back(std::make_unique<DeviceBackend>(std::move(backend)));
}

const DeviceBackend *linnet::rt::findDeviceBackend(std::string_view abi) {
  std::lock_guard<std::mutex> lock(backendsMutex());
  for (auto &b : backends())
    if (b->abi == abi)
      return b.get();
  return nullptr;
}

bool linnet::rt::runtimeAbiKnown(std::string_view abi) { return abi == kCpuRuntimeAbi || findDeviceBackend(abi); }

std::string linnet::rt::knownRuntimeAbis() {
  std::lock_guard<std::mutex> lock(backendsMutex());
  std::string out = kCpuRuntimeAbi;
  for (auto &b : backends())
    out += ", " + b->abi;
  return out;
}
