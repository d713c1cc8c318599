// liblinnet_runtime.so: the device backends the runtime loads artifacts of
// other ABIs with (CUDA), registered when the library is loaded.
#include "linnet/Target/CUDA/CudaRuntime.h"

namespace {
[[maybe_unused]] const bool registered = (linnet::cuda::registerCudaRuntime(), true);
} // namespace
