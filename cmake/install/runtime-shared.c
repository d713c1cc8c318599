/* liblinnet_runtime.so: the C API of include/linnet-c/Runtime.h, from the
 * static runtime library linked in whole (cmake/LinnetInstall.cmake). */
#include "linnet-c/Runtime.h"
