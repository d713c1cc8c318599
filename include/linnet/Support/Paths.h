//===- Paths.h - Where an installed linnet finds its data --------*- C++ -*-===//
//
// The standard library and the target files ship beside the tools, in
// <prefix>/share/linnet (`cmake --install`, the .deb, the wheel) and in
// <build>/share/linnet (staged at build time): found from the running
// executable, so a moved or installed tree needs no source checkout.
//
//===----------------------------------------------------------------------===//
#ifndef LINNET_SUPPORT_PATHS_H
#define LINNET_SUPPORT_PATHS_H

#include <string>

namespace linnet::support {

/// `$LINNET_DATA_DIR` when set, else <directory of the executable>/../share/linnet.
std::string dataDir();

} // namespace linnet::support

#endif // LINNET_SUPPORT_PATHS_H
