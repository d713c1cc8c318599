//===- core.cpp - linnet._core: the runtime from Python ------------------===//
//
// Binds linnet::rt::Model (include/linnet/Runtime/Runtime.h): load a CPU
// ProgramArtifact with its weights, describe its entries and tensors, and call
// an entry with numpy arrays (or anything with the buffer protocol). Inputs
// are read in place when they are C-contiguous and of the entry's dtype;
// results are handed to numpy without a copy (the array owns the runtime's
// buffer). The model's state lives in the Model object between calls.
//
//===----------------------------------------------------------------------===//
#include "linnet/Target/CUDA/CudaRuntime.h"
#include "linnet/Profile/Profile.h"
#include "linnet/ir/ir.hpp"
#if LINNET_HAS_MPI
#include "linnet/Distributed/Run.h"
#endif
#include "linnet/Runtime/Binding.h"
#include "linnet/Runtime/Runtime.h"
#include "linnet/Runtime/TensorFiles.h"
#include "linnet/Support/AtomicFile.h"

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <map>
#include <memory>
#include <algorithm>
#include <cstdlib>
#include <thread>
#include <string>
#include <variant>
#include <vector>

namespace py = pybind11;
using namespace linnet::rt;

// The relation builder compiled models link (lib/Target/CPU/RelationBuild.c,
// compiled into this module): Graph.knn and Graph.radius build exactly the
// relations std.graph builds.
extern "C" void _mlir_ciface_linnet_relation_build(void *posDst, void *posSrc, void *rowPtr, void *colIdx,
                                                   int64_t kind, int64_t k, int64_t excludeSelf, double r);

/// The builder's threads here (RelationBuild.c's weak hook): the module
/// links no OpenMP runtime (torch's libgomp may be loaded beside it), so the
/// rows go to std::threads, one a core or OMP_NUM_THREADS. The builder hands
/// rows out from an atomic counter; every thread runs until none is left.
extern "C" void linnet_relation_build_parallel(void (*fn)(void *), void *arg) {
  unsigned n = std::max(1u, std::thread::hardware_concurrency());
  if (const char *env = std::getenv("OMP_NUM_THREADS"))
    if (int v = std::atoi(env); v > 0)
      n = unsigned(v);
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < n; ++t)
    threads.emplace_back(fn, arg);
  fn(arg);
  for (std::thread &t : threads)
    t.join();
}

namespace {

struct Memref2F64 {
  double *allocated, *aligned;
  int64_t offset, sizes[2], strides[2];
};
struct Memref1I64 {
  int64_t *allocated, *aligned;
  int64_t offset, sizes[1], strides[1];
};

/// (row_ptr, col_idx) of the relation std.graph's knn (kind 0) or radius
/// (kind 1) builds from [M, D] destination and [N, D] source positions.
py::tuple relationBuild(py::array_t<double, py::array::c_style | py::array::forcecast> dst,
                        py::array_t<double, py::array::c_style | py::array::forcecast> src, int64_t kind,
                        int64_t k, bool excludeSelf, double r) {
  if (dst.ndim() != 2 || src.ndim() != 2 || dst.shape(1) != src.shape(1))
    throw py::value_error("positions must be [points, axes] arrays with the same number of axes");
  if (k < 1)
    throw py::value_error("the neighbour count must be positive, found " + std::to_string(k));
  int64_t m = dst.shape(0), n = src.shape(0), d = dst.shape(1);
  if (excludeSelf && m != n)
    throw py::value_error("excluding self pairs needs one point set");
  py::array_t<int64_t> rowPtr(m + 1), colIdx(m * k);
  Memref2F64 a{const_cast<double *>(dst.data()), const_cast<double *>(dst.data()), 0, {m, d}, {d, 1}};
  Memref2F64 b{const_cast<double *>(src.data()), const_cast<double *>(src.data()), 0, {n, d}, {d, 1}};
  Memref1I64 rp{rowPtr.mutable_data(), rowPtr.mutable_data(), 0, {m + 1}, {1}};
  Memref1I64 ci{colIdx.mutable_data(), colIdx.mutable_data(), 0, {m * k}, {1}};
  {
    py::gil_scoped_release release;
    _mlir_ciface_linnet_relation_build(&a, &b, &rp, &ci, kind, k, excludeSelf ? 1 : 0, r);
  }
  int64_t edges = rowPtr.data()[m];
  return py::make_tuple(rowPtr, colIdx[py::slice(0, edges, 1)]);
}

/// numpy dtype for a linnet dtype; bf16 (which numpy lacks) travels as its
/// bits, an int16 array (linnet.LinnetModule views it as torch.bfloat16).
py::dtype numpyDType(DType t) {
  switch (t) {
  case DType::Bool: return py::dtype("bool");
  case DType::U8: return py::dtype("uint8");
  case DType::I8: return py::dtype("int8");
  case DType::I16: return py::dtype("int16");
  case DType::I32: return py::dtype("int32");
  case DType::I64: return py::dtype("int64");
  case DType::F16: return py::dtype("float16");
  case DType::F32: return py::dtype("float32");
  case DType::F64: return py::dtype("float64");
  case DType::BF16: return py::dtype("int16");
  }
  throw py::type_error("linnet: bf16 tensors have no numpy dtype");
}

/// linnet dtype of a numpy array; throws TypeError for anything else.
DType linnetDType(const py::array &a, const std::string &what) {
  py::dtype d = a.dtype();
  char kind = d.kind();
  size_t size = d.itemsize();
  if (kind == 'b' && size == 1) return DType::Bool;
  if (kind == 'u' && size == 1) return DType::U8;
  if (kind == 'i') {
    if (size == 1) return DType::I8;
    if (size == 2) return DType::I16;
    if (size == 4) return DType::I32;
    if (size == 8) return DType::I64;
  }
  if (kind == 'f') {
    if (size == 2) return DType::F16;
    if (size == 4) return DType::F32;
    if (size == 8) return DType::F64;
  }
  throw py::type_error(what + ": unsupported dtype " + std::string(py::str(d)) +
                       " (expected bool, uint8, int8/16/32/64, float16/32/64)");
}

/// `a` in native byte order: the runtime reads little-endian bytes, so a
/// big-endian array ('>f4') is converted (a copy), never reinterpreted.
py::array nativeOrder(py::array a) {
  if (py::cast<bool>(a.dtype().attr("isnative")))
    return a;
  py::object native = a.dtype().attr("newbyteorder")("=");
  return py::array::ensure(a.attr("astype")(native), py::array::c_style);
}

py::object sigDim(const SigDim &d) {
  if (std::holds_alternative<int64_t>(d))
    return py::int_(std::get<int64_t>(d));
  return py::str(std::get<std::string>(d));
}

py::dict tensorSig(const TensorSig &s) {
  py::dict d;
  d["name"] = s.name;
  d["dtype"] = dtypeName(s.dtype);
  py::list shape;
  for (const SigDim &x : s.shape)
    shape.append(sigDim(x));
  d["shape"] = shape;
  d["relation"] = s.relation;
  return d;
}

/// A numpy array that owns a runtime result (no copy).
py::array toNumpy(OwnedTensor &&t) {
  auto *owned = new OwnedTensor(std::move(t));
  py::capsule base(owned, [](void *p) { delete static_cast<OwnedTensor *>(p); });
  std::vector<py::ssize_t> shape(owned->shape.begin(), owned->shape.end());
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = static_cast<py::ssize_t>(dtypeSize(owned->dtype));
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  // numpy wants a non-null pointer even for an empty array.
  static std::byte empty[8];
  void *data = owned->data.empty() ? static_cast<void *>(empty) : owned->data.data();
  return py::array(numpyDType(owned->dtype), shape, strides, data, base);
}

class PyModel {
public:
  PyModel(const std::string &dir, const std::string &weights, const std::string &binding, bool mmap)
      : inputs_(std::vector<std::string>{dir, weights, binding}), dir_(dir) {
    LoadOptions opts;
    opts.weightsPath = weights;
    opts.mapWeights = mmap;
    std::string error;
    if (!binding.empty()) {
      auto map = BindingMap::load(binding, error);
      if (!map)
        throw py::value_error(error);
      std::shared_ptr<BindingMap> b(std::move(map));
      opts.externalName = [b](const std::string &p) { return b->externalName(p); };
      opts.binding = b;
    }
    {
      py::gil_scoped_release release;
      model_ = Model::load(dir, opts, error);
    }
    if (!model_)
      throw py::value_error(error);
  }

  py::list entries() const {
    py::list out;
    for (const EntrySig &e : model_->info().entries) {
      py::dict d;
      d["name"] = e.name;
      d["generics"] = e.generics;
      py::list ins, res;
      for (const TensorSig &s : e.inputs)
        ins.append(tensorSig(s));
      for (const TensorSig &s : e.results)
        res.append(tensorSig(s));
      d["inputs"] = ins;
      d["results"] = res;
      out.append(d);
    }
    return out;
  }

  py::list tensors() const {
    py::list out;
    for (const ModelTensor &t : model_->info().tensors) {
      py::dict d;
      d["path"] = t.path;
      d["kind"] = t.kind == TensorKind::Param ? "param" : t.kind == TensorKind::Buffer ? "buffer" : "state";
      d["dtype"] = dtypeName(t.dtype);
      d["shape"] = t.shape;
      d["optional"] = t.optional;
      d["present"] = t.present;
      out.append(d);
    }
    return out;
  }

  /// The inputs of `entry` as views of arrays kept in `keep` (checked
  /// against its signature: count, dtype; shapes are the runtime's).
  std::vector<TensorView> inputViews(const std::string &entry, const py::sequence &args,
                                     std::vector<py::array> &keep) {
    const EntrySig *sig = model_->findEntry(entry);
    if (!sig) {
      std::string names;
      for (const EntrySig &e : model_->info().entries)
        names += (names.empty() ? "" : ", ") + e.name;
      throw py::value_error("no entry '" + entry + "' (entries: " + names + ")");
    }
    if (args.size() != sig->inputs.size())
      throw py::type_error("entry '" + entry + "' takes " + std::to_string(sig->inputs.size()) +
                           " inputs, given " + std::to_string(args.size()));
    std::vector<TensorView> views;
    for (size_t i = 0; i < args.size(); ++i) {
      const TensorSig &s = sig->inputs[i];
      py::object obj = args[i];
      py::array a = py::array::ensure(obj);
      if (!a)
        throw py::type_error("input '" + s.name + "': expected an array, found " +
                             std::string(py::str(py::type::of(obj).attr("__name__"))));
      DType t = linnetDType(a, "input '" + s.name + "'");
      if (s.dtype == DType::BF16 && t == DType::I16)
        t = DType::BF16; // bf16 bits (numpy has no bf16)
      if (t != s.dtype)
        throw py::type_error("input '" + s.name + "': expected dtype " + dtypeName(s.dtype) +
                             ", found " + dtypeName(t));
      a = nativeOrder(std::move(a));
      if (!(a.flags() & py::array::c_style))
        a = py::array::ensure(a, py::array::c_style);
      TensorView v;
      v.dtype = t;
      for (py::ssize_t k = 0; k < a.ndim(); ++k)
        v.shape.push_back(a.shape(k));
      v.data = {static_cast<const std::byte *>(a.data()), static_cast<size_t>(a.nbytes())};
      views.push_back(std::move(v));
      keep.push_back(std::move(a));
    }
    return views;
  }

  py::list call(const std::string &entry, const py::sequence &args) {
    std::vector<py::array> keep; // the (possibly converted) arrays, alive while the code runs
    std::vector<TensorView> views = inputViews(entry, args, keep);
    std::vector<OwnedTensor> results;
    std::string error;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = model_->call(entry, views, results, error);
    }
    if (!ok)
      throw py::value_error(error);
    py::list out;
    for (OwnedTensor &r : results)
      out.append(toNumpy(std::move(r)));
    return out;
  }

  /// `linnet profile` from Python (LinnetProfile): warm-up and timed calls
  /// of `entry`, then the measured ObservationSet and the run's timeline
  /// (Chrome trace events) as JSON texts.
  py::dict profile(const std::string &entry, const py::sequence &args, unsigned iterations, unsigned warmup) {
    if (iterations == 0)
      throw py::value_error("iterations must be at least 1");
    std::vector<py::array> keep;
    std::vector<TensorView> views = inputViews(entry, args, keep);
    linnet::profile::ArtifactPlans plans;
    linnet::profile::Measurement measured;
    std::string error;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = linnet::profile::readArtifactPlans(dir_, plans, error) &&
           linnet::profile::measure(*model_, entry, views, {warmup, iterations}, measured, error);
    }
    if (!ok)
      throw py::value_error(error);
    linnet::planning::ObservationSet obs =
        linnet::profile::observations(measured, plans.concrete, plans.manifest.libraryDigest.value_or(""));
    linnet::planning::Timeline tl = linnet::profile::measuredTimeline(measured, plans.portable, plans.concrete,
                                                                      plans.manifest, obs, dir_);
    py::dict out;
    out["observations"] = linnet::planning::canonicalDump(linnet::planning::toJson(obs));
    out["trace"] = linnet::planning::toJson(tl).dump();
    out["command_timers"] = measured.commandTimers;
    out["dropped_events"] = measured.droppedEvents;
    return out;
  }

  /// A distributed artifact's entry on the ranks of the MPI job this
  /// process is one of (LinnetDistributed): rank 0 passes the inputs and
  /// gets the gathered results; the other ranks pass none and get None.
  py::object callDistributed(const std::string &entry, const py::sequence &args, double timeout) {
    const linnet::rt::DistributedExecutor *x = linnet::rt::distributedExecutor();
    if (!x)
      throw py::value_error("this linnet was built without MPI (LINNET_DISTRIBUTED): no distributed runs");
    if (!(timeout > 0))
      throw py::value_error("timeout must be positive");
    int rank = x->rank();
    std::vector<OwnedTensor> owned;
    if (rank == 0) {
      std::vector<py::array> keep;
      for (const TensorView &v : inputViews(entry, args, keep)) {
        OwnedTensor t;
        t.dtype = v.dtype;
        t.shape = v.shape;
        t.data.assign(v.data.begin(), v.data.end());
        owned.push_back(std::move(t));
      }
    } else if (py::len(args) != 0) {
      throw py::value_error("rank " + std::to_string(rank) + " passes no inputs: rank 0 holds them");
    }
    std::vector<OwnedTensor> results;
    std::string error;
    bool ok;
    {
      py::gil_scoped_release release;
      ok = x->call(*model_, dir_, entry, owned, results, timeout, error);
    }
    if (!ok)
      throw py::value_error(error);
    if (rank != 0)
      return py::none();
    py::list out;
    for (OwnedTensor &r : results)
      out.append(toNumpy(std::move(r)));
    return out;
  }

  py::object state(const std::string &path) const {
    const OwnedTensor *t = model_->state(path);
    if (!t)
      return py::none();
    OwnedTensor copy = *t;
    return toNumpy(std::move(copy));
  }

private:
  // What the model reads, while it lives: no writer of this process (the
  // output guard, AtomicFile.h) may replace it.
  linnet::support::InputScope inputs_;
  std::string dir_;
  std::unique_ptr<Model> model_;
};

} // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "linnet runtime: load a compiled artifact and call its entries";
  // CUDA artifacts too (their backend opens the CUDA driver when one loads).
  linnet::cuda::registerCudaRuntime();
#if LINNET_HAS_MPI
  linnet::dist::registerExecutor();
  m.attr("has_distributed") = true;
#else
  m.attr("has_distributed") = false;
#endif
  py::class_<PyModel>(m, "Model")
      .def(py::init<const std::string &, const std::string &, const std::string &, bool>(),
           py::arg("artifact_dir"), py::arg("weights") = "", py::arg("binding") = "", py::arg("mmap") = true,
           "Loads the artifact in artifact_dir with weights from a .safetensors file "
           "(empty: none) and an optional binding manifest. With mmap (the default) the weights "
           "file is mapped and must not change while the model lives (truncated, the process "
           "ends with SIGBUS); mmap=False reads it into memory first, for files others can write. "
           "While the model lives, its artifact, weights and binding are inputs no writer of "
           "this process may replace.")
      .def("entries", &PyModel::entries, "The entries' signatures.")
      .def("tensors", &PyModel::tensors, "The model's parameters, buffers and state (manifest).")
      .def("call", &PyModel::call, py::arg("entry"), py::arg("inputs"),
           "Calls an entry with a list of arrays (a relation is two arrays, row_ptr and "
           "col_idx, in the signature's order); returns the list of results.")
      .def("state", &PyModel::state, py::arg("path"), "A copy of a state tensor, or None.")
      .def("call_distributed", &PyModel::callDistributed, py::arg("entry"), py::arg("inputs"),
           py::arg("timeout") = 60.0,
           "Calls an entry of a distributed artifact (linnet build --ranks N) in a program an MPI "
           "launcher started once a rank (mpirun -n N python ...): rank 0 passes the inputs and gets "
           "the gathered results; the other ranks pass [] and get None. A rank that fails or waits "
           "longer than `timeout` seconds ends every rank (docs/distributed.md).")
      .def("profile", &PyModel::profile, py::arg("entry"), py::arg("inputs"), py::arg("iterations") = 10,
           py::arg("warmup") = 2,
           "Times `iterations` calls of an entry after `warmup` untimed ones, and every command of "
           "them when the artifact was built with --profile (docs/profiling.md). Returns a dict: "
           "'observations' (the measured ObservationSet, JSON), 'trace' (the run's timeline, Chrome "
           "trace-event JSON), 'command_timers' and 'dropped_events'. State persists across the calls.");
  m.def("distributed_rank", [] {
    const linnet::rt::DistributedExecutor *x = linnet::rt::distributedExecutor();
    return x ? x->rank() : -1;
  }, "This process's rank in its MPI job (starting MPI); -1 without MPI.");
  m.def("distributed_size", [] {
    const linnet::rt::DistributedExecutor *x = linnet::rt::distributedExecutor();
    return x ? x->size() : -1;
  }, "The ranks of this process's MPI job; -1 without MPI.");
  m.def("distributed_finalize", [] {
    if (const linnet::rt::DistributedExecutor *x = linnet::rt::distributedExecutor())
      x->finalize();
  }, "Ends MPI for this process, after its last distributed call.");
  m.def("eval_dim", [](const std::string &dim, const std::map<std::string, int64_t> &dims) -> py::object {
    nlohmann::json d;
    try {
      d = nlohmann::json::parse(dim);
    } catch (const std::exception &e) {
      throw py::value_error(std::string("eval_dim: not a JSON dim: ") + e.what());
    }
    std::string why;
    std::optional<int64_t> v = linnet::ir::evalDim(
        d,
        [&](const std::string &sym) -> std::optional<int64_t> {
          auto it = dims.find(sym);
          return it == dims.end() ? std::nullopt : std::optional<int64_t>(it->second);
        },
        nullptr, why);
    if (!why.empty())
      throw py::value_error(why);
    if (!v)
      return py::none();
    return py::int_(*v);
  }, py::arg("dim"), py::arg("dims"),
     "The value of a plan dim (its JSON text) with generics bound by `dims` (sym -> value), "
     "by the compiler's one dim arithmetic (/ and % floor); None when a name is unbound; "
     "ValueError on a zero divisor or a 64-bit overflow.");
  m.def("relation_build", &relationBuild, py::arg("pos_dst"), py::arg("pos_src"), py::arg("kind"), py::arg("k"),
        py::arg("exclude_self"), py::arg("r") = 0.0,
        "(row_ptr, col_idx) of std.graph's knn (kind 0) or radius (kind 1) relation: each "
        "destination's neighbours nearest first, ties by source index.");
  m.def(
      "binding_names",
      [](const std::string &binding, const std::vector<std::string> &paths) {
        std::string error;
        auto map = BindingMap::load(binding, error);
        if (!map)
          throw py::value_error(error);
        std::vector<std::string> out;
        for (const std::string &p : paths)
          out.push_back(map->externalName(p));
        return out;
      },
      py::arg("binding"), py::arg("paths"),
      "The external tensor name of each canonical path under a binding manifest.");
  m.def(
      "read_safetensors",
      [](const std::string &path) {
        std::string error;
        std::unique_ptr<SafeTensorsFile> f = SafeTensorsFile::open(path, error, /*map=*/false);
        if (!f)
          throw py::value_error(error);
        py::list out;
        for (const auto &[name, t] : f->tensors())
          out.append(py::make_tuple(name, dtypeName(t.dtype), t.shape,
                                    py::bytes(reinterpret_cast<const char *>(t.data.data()), t.data.size())));
        return out;
      },
      py::arg("path"),
      "The tensors of a .safetensors file or a sharded checkpoint's index, read by linnet's "
      "reader (every check of `linnet run --weights`): a list of (name, dtype, shape, bytes).");
  m.def(
      "write_safetensors",
      [](const std::string &path, const py::dict &tensors) {
        std::vector<py::array> keep;
        std::map<std::string, TensorView> views;
        for (auto [k, v] : tensors) {
          std::string name = py::cast<std::string>(k);
          py::array a = py::array::ensure(v, py::array::c_style);
          if (!a)
            throw py::type_error("tensor '" + name + "': expected an array");
          a = nativeOrder(std::move(a)); // safetensors is little-endian
          TensorView t;
          t.dtype = linnetDType(a, "tensor '" + name + "'");
          for (py::ssize_t i = 0; i < a.ndim(); ++i)
            t.shape.push_back(a.shape(i));
          t.data = {static_cast<const std::byte *>(a.data()), static_cast<size_t>(a.nbytes())};
          views[name] = std::move(t);
          keep.push_back(std::move(a));
        }
        std::string error;
        if (!writeSafeTensors(path, views, error))
          throw py::value_error(error);
      },
      py::arg("path"), py::arg("tensors"),
      "Writes a dict of arrays as a .safetensors file, through a temporary file and a rename, "
      "and through linnet's output guard: a path that is a symbolic link, a directory, or a "
      "file a loaded Model reads is refused (ValueError).");
  m.def(
      "check_output",
      [](const std::string &path, const std::string &kind) {
        linnet::support::OutputKind k;
        if (kind == "file")
          k = linnet::support::OutputKind::File;
        else if (kind == "directory")
          k = linnet::support::OutputKind::Directory;
        else if (kind == "artifact")
          k = linnet::support::OutputKind::Artifact;
        else
          throw py::value_error("kind: expected 'file', 'directory' or 'artifact', found '" + kind + "'");
        std::string why = linnet::support::checkOutput(path, k);
        if (!why.empty())
          throw py::value_error(why);
      },
      py::arg("path"), py::arg("kind") = "file",
      "linnet's output guard (the one every linnet writer goes through): raises ValueError "
      "saying why when `path` may not be written as a file, a directory linnet writes files "
      "into, or an artifact directory replaced whole.");
}
