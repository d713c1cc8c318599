"""Compiled `.ln` models as `torch.nn.Module`s.

`linnet.load(ARTIFACT_DIR, weights=...)` and `linnet.compile("model.ln",
root=..., dims=...)` return a `LinnetModule`: its parameters and buffers are
created from the artifact's manifest (runtime.json) under their canonical
paths (`fc1.weight`, so `state_dict()` / `load_state_dict()` use those
names), its entries are methods taking and returning torch tensors, and its
state (a KV cache) is kept by the loaded model between calls.

The compiled code runs with the parameters' current values: after a change
(an optimizer step, `load_state_dict`) the next call hands the new values to
the runtime, which reloads the model (its state starts again from zero).

The compiled entries have no backward: the parameters do not require grad,
and a result computed from something that does (an input, or a parameter
set to require grad) raises, when a gradient is asked through it, an error
naming the model and the entry; `module.reference()` is the differentiable
form of the same model.
"""

import json
import os
import tempfile

import numpy as np
import torch

from . import _compiler, _core
from .graph import Graph

_TORCH = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16,
          "bf16": torch.bfloat16, "i64": torch.int64, "i32": torch.int32, "i16": torch.int16,
          "i8": torch.int8, "u8": torch.uint8, "bool": torch.bool,
          # Block-quantized params (docs/language/05-types.md) are held as
          # their f32 values; the runtime quantizes them when it binds them.
          "q8_0": torch.float32, "q4_0": torch.float32, "q4_K": torch.float32,
          "q5_K": torch.float32, "q6_K": torch.float32}


def read_safetensors(path):
    """The tensors of a .safetensors file (or a sharded checkpoint's
    model.safetensors.index.json), by name: read by linnet's own reader, with
    every check `linnet run --weights` makes."""
    out = {}
    for name, dtype, shape, raw in _core.read_safetensors(os.fspath(path)):
        buf = bytearray(raw)
        t = torch.frombuffer(buf, dtype=_TORCH[dtype]) if buf else torch.empty(0, dtype=_TORCH[dtype])
        out[name] = t.reshape(shape)
    return out


def _runtime_info(artifact_dir, name="runtime.json"):
    path = os.path.join(artifact_dir, name)
    try:
        with open(path) as f:
            return json.load(f)
    except FileNotFoundError:
        raise FileNotFoundError(f"{artifact_dir}: not a linnet artifact (no {name})") from None


def _choose_variant(artifact_dir, info, held):
    """The runtime description the runtime loads for weights holding the
    tensors `held` (external names by canonical path): the first, among
    runtime.json and its variants, whose optional tensors (state excluded)
    are present exactly when the weights hold them (docs/runtime-abi.md,
    "Optional tensors")."""
    def optional(i):
        return [t for t in i.get("tensors", []) if t.get("optional") and t.get("kind") != "state"]

    # §9.4, as the runtime decides (Runtime.cpp): an optional sub block is
    # absent when the weights lack a tensor it requires; its other tensors in
    # the weights are then not used.
    block_held = {}
    for t in info.get("tensors", []):
        if t.get("block"):
            block_held.setdefault(t["block"], True)
            if t.get("required") and not held(t["path"]):
                block_held[t["block"]] = False

    def used(t):
        return held(t["path"]) and block_held.get(t.get("block"), True)

    def matches(i):
        return all(t.get("present", True) == used(t) for t in optional(i))

    if not info.get("variants") or matches(info):
        return info
    built = [info]
    for name in info["variants"]:
        v = _runtime_info(artifact_dir, name)
        if matches(v):
            return v
        built.append(v)
    have = [t["path"] for t in optional(info) if used(t)]
    sets = ["{" + ", ".join(t["path"] for t in optional(i) if t.get("present", True)) + "}"
            for i in built]
    raise ValueError(f"the weights hold the optional tensors {{{', '.join(have)}}}, but the "
                     f"artifact {artifact_dir} has libraries only for these sets of them: "
                     f"{', '.join(sets)} (build with these weights, or with --variants each)")


class _NoBackward(torch.autograd.Function):
    """Passes a compiled entry's results through; asked for a gradient, says
    that the entry has none instead of leaving the gradients None."""

    @staticmethod
    def forward(ctx, what, count, *tensors):
        ctx.what = what
        outs = tensors[:count]
        ctx.mark_non_differentiable(*[o for o in outs if not o.dtype.is_floating_point])
        return outs

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"{ctx.what()} has no backward: a compiled linnet model is not "
                           "differentiable from Python. For gradients use module.reference() "
                           "(the same model as a PyTorch module); call it under torch.no_grad() "
                           "or with inputs that do not require grad to use it as a constant.")


class _Holder(torch.nn.Module):
    pass


class LinnetModule(torch.nn.Module):
    """A compiled linnet model; see the module docstring."""

    def __init__(self, artifact_dir, weights=None, binding=None, mmap=True):
        super().__init__()
        self._artifact = os.path.abspath(artifact_dir)
        self._binding = binding
        self._mmap = bool(mmap)
        info = _runtime_info(self._artifact)
        external = {}
        if weights is not None:
            src = read_safetensors(weights) if isinstance(weights, (str, os.PathLike)) \
                else dict(weights)
            external = src
        names = self._external_names(binding, [t["path"] for t in info.get("tensors", [])])
        # Optional tensors are bound at load time, as `linnet run` does.
        info = _choose_variant(self._artifact, info,
                               lambda path: names.get(path, path) in external)
        self._tensors = [t for t in info.get("tensors", [])]
        self._params = []  # (path, kind) of present params and buffers
        self._to_canonical = {ext: path for path, ext in names.items() if ext != path}
        # An absent optional block's tensors may be in the weights: unused,
        # as the runtime leaves them (§9.4), not unexpected.
        known = {names.get(t["path"], t["path"]) for t in self._tensors
                 if t.get("kind") in ("param", "buffer")
                 and (t.get("present", True) or t.get("block"))}
        unexpected = sorted(set(external) - known)
        if unexpected:
            raise ValueError(f"unexpected tensor{'s' if len(unexpected) > 1 else ''} "
                             f"{', '.join(map(repr, unexpected))} in the weights: the artifact "
                             f"has no such parameter or buffer (present: "
                             f"{', '.join(sorted(known)) or 'none'})")
        for t in self._tensors:
            kind = t.get("kind")
            if kind not in ("param", "buffer") or not t.get("present", True):
                continue
            path, dtype, shape = t["path"], _TORCH[t["dtype"]], tuple(t["shape"])
            ext = names.get(path, path)
            if ext in external:
                value = torch.as_tensor(external[ext])
                if tuple(value.shape) != shape or value.dtype != dtype:
                    raise ValueError(f"tensor {path!r}: expected {t['dtype']} {list(shape)}, "
                                     f"found {value.dtype} {list(value.shape)}")
                value = value.detach().clone()
            elif weights is not None and not t.get("optional", False):
                raise ValueError(f"missing {kind} {path!r} in the weights: expected "
                                 f"{t['dtype']} {list(shape)}")
            else:
                value = torch.zeros(shape, dtype=dtype)
                if dtype.is_floating_point and kind == "param":
                    torch.nn.init.normal_(value, std=0.02)
            owner, leaf = self._owner(path)
            if kind == "param" and dtype.is_floating_point:
                # No backward through the compiled code (see _NoBackward).
                owner.register_parameter(leaf, torch.nn.Parameter(value, requires_grad=False))
            else:
                owner.register_buffer(leaf, value)
            self._params.append(path)
        self._model = None
        self._synced = None
        self._weights_file = None
        self._entries = {}
        for e in info.get("entries", []):
            self._entries[e["name"]] = e
        for name in self._entries:
            if hasattr(type(self), name) or name in self._modules:
                continue
            object.__setattr__(self, name, self._method(name))

    @staticmethod
    def _external_names(binding, paths):
        """canonical path -> its name in external weights (a binding manifest,
        docs/binding-manifest.md; identity without one)."""
        if binding is None:
            return {}
        return dict(zip(paths, _core.binding_names(os.fspath(binding), list(paths))))

    def load_state_dict(self, state_dict, strict=True):
        """Also takes the external names of the binding manifest the module
        was loaded with (Hugging Face names for examples/llama.ln)."""
        renamed = {self._to_canonical.get(k, k): v for k, v in state_dict.items()}
        return super().load_state_dict(renamed, strict=strict)

    def _owner(self, path):
        parts = path.split(".")
        mod = self
        for p in parts[:-1]:
            if p not in mod._modules:
                mod.add_module(p, _Holder())
            mod = mod._modules[p]
        return mod, parts[-1]

    def _current(self):
        sd = self.state_dict(keep_vars=True)
        return {p: sd[p] for p in self._params}

    def _sync(self):
        cur = self._current()
        stamp = tuple((p, t.data_ptr(), t._version) for p, t in cur.items())
        if self._model is not None and stamp == self._synced:
            return
        weights = ""
        # A model whose every parameter is optional and absent still takes a
        # weights file (an empty one): without one the runtime asks for it.
        if cur or any(t.get("kind") in ("param", "buffer") for t in self._tensors):
            if self._weights_file is None:
                fd, self._weights_file = tempfile.mkstemp(suffix=".safetensors", prefix="linnet-")
                os.close(fd)
            # The model loaded from the previous file reads it while it lives
            # (a writer may not replace a live model's input): let it go first.
            self._model = None
            _core.write_safetensors(self._weights_file,
                                    {p: t.detach().contiguous().numpy() for p, t in cur.items()})
            weights = self._weights_file
        self._model = _core.Model(self._artifact, weights, "", mmap=self._mmap)
        self._synced = stamp

    def __del__(self):
        f = getattr(self, "_weights_file", None)
        if f and os.path.exists(f):
            os.unlink(f)

    def entries(self):
        return list(self._entries)

    def reference(self):
        """The same model as a pure-PyTorch module (linnet.reference) with a
        copy of this module's current parameters: for checking and
        fine-tuning."""
        from .reference import ReferenceModule
        with open(os.path.join(self._artifact, "plan.json")) as f:
            plan = json.load(f)
        return ReferenceModule(plan, weights={k: v.detach() for k, v in self.state_dict().items()})

    def state_tensor(self, path):
        """The current value of a state tensor (None before the first call)."""
        if self._model is None:
            return None
        s = self._model.state(path)
        if s is None:
            return None
        dtype = next((t.get("dtype") for t in self._tensors if t.get("path") == path), None)
        return torch.from_numpy(s).view(torch.bfloat16) if dtype == "bf16" else torch.from_numpy(s)

    def call(self, entry, *args, **kwargs):
        """Calls `entry` with torch tensors (positional in signature order, or
        by name; a relation takes a linnet.Graph). Returns a tensor, or a
        tuple when the entry has several results."""
        if entry not in self._entries:
            raise ValueError(f"no entry {entry!r} (entries: {', '.join(self._entries)})")
        sig = self._entries[entry]
        logical = []  # input names, a relation once
        for i in sig["inputs"]:
            name = i["name"]
            rel = i.get("relation")
            if rel:
                if rel not in logical:
                    logical.append(rel)
            else:
                logical.append(name)
        if len(args) > len(logical):
            raise TypeError(f"{entry}() takes {len(logical)} inputs ({', '.join(logical)}), "
                            f"given {len(args)}")
        bound = dict(zip(logical, args))
        for k, v in kwargs.items():
            if k not in logical:
                raise TypeError(f"{entry}() has no input {k!r} (inputs: {', '.join(logical)})")
            if k in bound:
                raise TypeError(f"{entry}() got input {k!r} twice")
            bound[k] = v
        missing = [n for n in logical if n not in bound]
        if missing:
            raise TypeError(f"{entry}() is missing input{'s' if len(missing) > 1 else ''} "
                            f"{', '.join(missing)}")
        orders = self._edge_orders(entry, sig, bound)
        arrays, grad_inputs = [], []
        for i in sig["inputs"]:
            name, rel = i["name"], i.get("relation")
            if rel:
                gr = bound[rel]
                arrays.append(gr.row_ptr.numpy() if name.endswith(".row_ptr")
                              else gr.col_idx.numpy())
                continue
            v = bound[name]
            if isinstance(v, np.ndarray) and orders:
                v = torch.from_numpy(v)
            if isinstance(v, torch.Tensor):
                if v.requires_grad:
                    grad_inputs.append(v)
                v = v.detach()
                for axis, dim in enumerate(i["shape"]):
                    if dim in orders and axis < v.dim():  # COO order -> the relation's
                        v = v.index_select(axis, orders[dim][0])
                if v.dtype == torch.bfloat16:  # numpy has no bf16: its bits travel
                    v = v.contiguous().view(torch.int16)
                arrays.append(v.contiguous().numpy())
            elif isinstance(v, np.ndarray):
                arrays.append(v)
            elif isinstance(v, (int, float)) and not isinstance(v, bool):
                arrays.append(np.asarray(v, dtype=_np_dtype(i["dtype"])))
            else:
                raise TypeError(f"{entry}(): input {name!r}: expected a torch.Tensor, found "
                                f"{type(v).__name__}")
        self._sync()
        results = [torch.from_numpy(r) for r in self._model.call(entry, arrays)]
        for k, r in enumerate(sig.get("results", [])):
            if r.get("dtype") == "bf16":  # bf16 comes back as its bits
                results[k] = results[k].view(torch.bfloat16)
        for k, r in enumerate(sig.get("results", [])):
            for axis, dim in enumerate(r["shape"]):
                if dim in orders:  # the relation's order -> COO order
                    results[k] = results[k].index_select(axis, orders[dim][1])
        if torch.is_grad_enabled():
            grad_inputs += [p for p in self.parameters() if p.requires_grad]
            if grad_inputs:
                results = list(_NoBackward.apply(lambda: self._describe(entry), len(results),
                                                 *results, *grad_inputs))
        return results[0] if len(results) == 1 else tuple(results)

    def _edge_orders(self, entry, sig, bound):
        """{edge generic: (COO -> CSR permutation, its inverse)} for the
        relations given a graph made with Graph.from_coo: the entry reads a
        relation in CSR order, so tensors with an axis over its edges are
        permuted into that order, and results with one permuted back."""
        orders = {}
        for i in sig["inputs"]:
            rel = i.get("relation")
            if not rel or not i["name"].endswith(".col_idx"):
                continue
            gr = bound[rel]
            if not isinstance(gr, Graph):
                raise TypeError(f"{entry}(): relation {rel!r}: expected a linnet.Graph, "
                                f"found {type(gr).__name__}")
            if gr.edge_order is None:
                continue
            dim = i["shape"][0]
            if not isinstance(dim, str) or not dim.isidentifier():
                # A fixed edge count: which axes are per edge is not known.
                sized = [x["name"] for x in sig["inputs"] if not x.get("relation")
                         and dim in x["shape"]] + [f"result {k}" for k, r in
                                                   enumerate(sig.get("results", []))
                                                   if dim in r["shape"]]
                if sized:
                    raise ValueError(
                        f"{entry}(): relation {rel!r} has a fixed edge count ({dim}) and "
                        f"{', '.join(sized)} an axis of that size: pass a graph made with "
                        "Graph.from_csr and per-edge tensors in its order (a COO graph's "
                        "CSR order is graph.edge_order)")
                continue
            if dim in orders and not torch.equal(orders[dim][0], gr.edge_order):
                raise ValueError(f"{entry}(): relations with the same edge count {dim} were "
                                 "given COO graphs whose edges sort differently: per-edge "
                                 "tensors cannot follow both")
            orders[dim] = (gr.edge_order, gr.edge_order_inverse())
        return orders

    def _describe(self, entry):
        try:
            with open(os.path.join(self._artifact, "plan.json")) as f:
                plan = json.load(f)
            model = f"{plan['module']}::{plan['root']['name']}"
        except (OSError, KeyError, ValueError):
            model = "the model"
        return f"the entry {entry!r} of the compiled linnet model {model} ({self._artifact})"

    def _method(self, entry):
        def method(*args, **kwargs):
            return self.call(entry, *args, **kwargs)
        method.__name__ = entry
        method.__doc__ = f"Calls the compiled entry {entry!r}."
        return method

    def forward(self, *args, **kwargs):
        if "forward" not in self._entries:
            raise TypeError(f"the model has no entry 'forward' (entries: "
                            f"{', '.join(self._entries)}): call one by name")
        return self.call("forward", *args, **kwargs)


def _np_dtype(name):
    return {"f32": np.float32, "f64": np.float64, "i64": np.int64, "i32": np.int32,
            "i16": np.int16, "i8": np.int8, "u8": np.uint8, "bool": np.bool_,
            "f16": np.float16}[name]


def load(artifact_dir, weights=None, binding=None, mmap=True):
    """A compiled artifact directory as a LinnetModule. `weights`: a
    .safetensors path or a dict of tensors by canonical path (or by the
    binding manifest's names); None initializes them randomly. The module
    reads a weights file once, into its parameters; the runtime is handed
    them through a private file that it maps, or with `mmap=False` reads
    into memory (docs/security.md, "Weights that change under a run")."""
    return LinnetModule(artifact_dir, weights=weights, binding=binding, mmap=mmap)


def compile(path, root=None, dims=None, weights=None, binding=None, numerics=None):  # noqa: A001
    """Compiles a .ln file for the CPU (cached) and loads it (see load). The
    weights decide which optional tensors (a `bias: ...? = none`) are
    compiled in; without weights they are absent. `numerics`: the build's
    numerics policy ("as-written", "f32-compute": language §8.4)."""
    if weights is None or isinstance(weights, (str, os.PathLike)):
        return load(_compiler.build_file(path, root=root, dims=dims, weights=weights,
                                         binding=binding, numerics=numerics),
                    weights=weights, binding=binding)
    tensors = {k: torch.as_tensor(v).detach().contiguous().numpy() for k, v in dict(weights).items()}
    with tempfile.TemporaryDirectory(prefix="linnet-") as tmp:
        wpath = os.path.join(tmp, "weights.safetensors")
        _core.write_safetensors(wpath, tensors)
        art = _compiler.build_file(path, root=root, dims=dims, weights=wpath, binding=binding,
                                   numerics=numerics)
    return load(art, weights=weights, binding=binding)
