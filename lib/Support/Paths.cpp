//===- Paths.cpp - Where an installed linnet finds its data ---------------===//

#include "linnet/Support/Paths.h"

#include <cstdlib>
#include <filesystem>

namespace fs = std::filesystem;

std::string linnet::support::dataDir() {
  if (const char *env = std::getenv("LINNET_DATA_DIR"); env && *env)
    return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec)
    return "share/linnet";
  return (exe.parent_path() / ".." / "share" / "linnet").lexically_normal().string();
}
