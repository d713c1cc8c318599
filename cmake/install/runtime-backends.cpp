// liblinnet_runtime.so: the device backends the runtime loads artifacts of
// other ABIs with (CUDA), registered when the library is loaded.
#include "linnet/Target/CUDA/CudaRuntime.h"

namespace {
[[maybe_unused]] const bool registered = (linnet::cuda::registerCudaRuntime(), true);
} // namespace

#if LINNET_HAS_MPI
// Distributed artifacts (linnet_model_call_distributed), where MPI was found.
#include "linnet/Distributed/Run.h"

namespace {
[[maybe_unused]] const bool distributed = (linnet::dist::registerExecutor(), true);
} // namespace
#endif
