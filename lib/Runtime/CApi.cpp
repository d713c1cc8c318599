//===- CApi.cpp - C API of the linnet runtime -----------------------------===//
#include "linnet-c/Runtime.h"
#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Runtime.h"

#include <string>

using namespace linnet::rt;
using linnet::rt::DistributedExecutor;

struct linnet_model {
  std::unique_ptr<Model> model;
  std::vector<OwnedTensor> results; // backs the last call's outputs
  std::string dir;
};

namespace {
thread_local std::string gLastError;

int fail(std::string message) {
  gLastError = std::move(message);
  return 1;
}
/// The C tensors as views, checked (shape, dtype, data for their bytes).
bool inputViews(const char *fn, const linnet_tensor *inputs, size_t numInputs, std::vector<TensorView> &views) {
  for (size_t i = 0; i < numInputs; ++i) {
    const linnet_tensor &t = inputs[i];
    if (t.rank < 0 || (t.rank > 0 && !t.shape))
      return !fail(std::string(fn) + ": input " + std::to_string(i) + " has no shape");
    if (t.dtype < LINNET_BOOL || t.dtype > LINNET_F64)
      return !fail(std::string(fn) + ": input " + std::to_string(i) + " has an unknown dtype");
    TensorView v;
    v.dtype = static_cast<DType>(t.dtype);
    v.shape.assign(t.shape, t.shape + t.rank);
    // The element count decides how many bytes the code reads: checked.
    int64_t n = 1, bytes = 0;
    for (int64_t d : v.shape)
      if (d < 0 || __builtin_mul_overflow(n, d, &n) ||
          __builtin_mul_overflow(n, int64_t(dtypeSize(v.dtype)), &bytes))
        return !fail(std::string(fn) + ": input " + std::to_string(i) +
                    " has a negative or too large shape");
    if (n > 0 && !t.data)
      return !fail(std::string(fn) + ": input " + std::to_string(i) + " has no data");
    v.data = {static_cast<const std::byte *>(t.data), static_cast<size_t>(n) * dtypeSize(v.dtype)};
    views.push_back(std::move(v));
  }
  return true;
}

/// Points `outputs` at `results`.
void setOutputs(std::vector<OwnedTensor> &results, linnet_tensor *outputs) {
  for (size_t r = 0; r < results.size(); ++r) {
    OwnedTensor &o = results[r];
    outputs[r] = {static_cast<linnet_dtype>(o.dtype), static_cast<int32_t>(o.shape.size()), o.shape.data(),
                  o.data.data()};
  }
}

DistributedExecutor gExecutor{};
bool gHasExecutor = false;
} // namespace

void linnet::rt::registerDistributedExecutor(const DistributedExecutor &e) {
  gExecutor = e;
  gHasExecutor = true;
}

const DistributedExecutor *linnet::rt::distributedExecutor() { return gHasExecutor ? &gExecutor : nullptr; }

extern "C" const char *linnet_last_error(void) { return gLastError.c_str(); }

extern "C" int linnet_model_open(const char *artifactDir, const char *weightsPath,
                                 const char *bindingPath, linnet_model **out) {
  if (!artifactDir || !out)
    return fail("linnet_model_open: artifact_dir and out are required");
  LoadOptions opts;
  opts.weightsPath = weightsPath ? weightsPath : "";
  std::string error;
  if (bindingPath) {
    auto binding = BindingMap::load(bindingPath, error);
    if (!binding)
      return fail(error);
    std::shared_ptr<BindingMap> b(std::move(binding));
    opts.externalName = [b](const std::string &p) { return b->externalName(p); };
    opts.binding = b;
  }
  auto model = Model::load(artifactDir, opts, error);
  if (!model)
    return fail(error);
  *out = new linnet_model{std::move(model), {}, artifactDir};
  return 0;
}

extern "C" void linnet_model_close(linnet_model *model) { delete model; }

extern "C" size_t linnet_model_num_results(const linnet_model *model, const char *entry) {
  const EntrySig *e = model && entry ? model->model->findEntry(entry) : nullptr;
  return e ? e->results.size() : 0;
}

extern "C" int linnet_model_call(linnet_model *model, const char *entry,
                                 const linnet_tensor *inputs, size_t numInputs,
                                 linnet_tensor *outputs, size_t numOutputs) {
  if (!model || !entry || (numInputs > 0 && !inputs) || (numOutputs > 0 && !outputs))
    return fail("linnet_model_call: model, entry, and inputs/outputs for nonzero counts are required");
  std::vector<TensorView> views;
  if (!inputViews("linnet_model_call", inputs, numInputs, views))
    return 1;
  const EntrySig *sig = model->model->findEntry(entry);
  if (sig && numOutputs < sig->results.size())
    return fail("linnet_model_call: entry '" + std::string(entry) + "' has " +
                std::to_string(sig->results.size()) + " results, room given for " +
                std::to_string(numOutputs));
  std::string error;
  if (!model->model->call(entry, views, model->results, error))
    return fail(error);
  setOutputs(model->results, outputs);
  return 0;
}

extern "C" int linnet_model_call_distributed(linnet_model *model, const char *entry,
                                             const linnet_tensor *inputs, size_t numInputs,
                                             linnet_tensor *outputs, size_t numOutputs, double timeoutSeconds) {
  const DistributedExecutor *x = distributedExecutor();
  if (!x)
    return fail("linnet_model_call_distributed: this runtime was built without MPI (LINNET_DISTRIBUTED)");
  if (!model || !entry || (numInputs > 0 && !inputs) || (numOutputs > 0 && !outputs))
    return fail("linnet_model_call_distributed: model, entry, and inputs/outputs for nonzero counts are required");
  if (!(timeoutSeconds > 0))
    return fail("linnet_model_call_distributed: timeout_seconds must be positive");
  std::vector<TensorView> views;
  if (!inputViews("linnet_model_call_distributed", inputs, numInputs, views))
    return 1;
  std::vector<OwnedTensor> owned;
  for (const TensorView &v : views) {
    OwnedTensor t;
    t.dtype = v.dtype;
    t.shape = v.shape;
    t.data.assign(v.data.begin(), v.data.end());
    owned.push_back(std::move(t));
  }
  const EntrySig *sig = model->model->findEntry(entry);
  if (sig && numOutputs < sig->results.size())
    return fail("linnet_model_call_distributed: entry '" + std::string(entry) + "' has " +
                std::to_string(sig->results.size()) + " results, room given for " + std::to_string(numOutputs));
  std::string error;
  if (!x->call(*model->model, model->dir, entry, owned, model->results, timeoutSeconds, error))
    return fail(error);
  setOutputs(model->results, outputs);
  return 0;
}

extern "C" int linnet_distributed_rank(void) {
  const DistributedExecutor *x = distributedExecutor();
  return x ? x->rank() : -1;
}

extern "C" int linnet_distributed_size(void) {
  const DistributedExecutor *x = distributedExecutor();
  return x ? x->size() : -1;
}

extern "C" void linnet_distributed_finalize(void) {
  if (const DistributedExecutor *x = distributedExecutor())
    x->finalize();
}
