"""Derives each bad planning document in this folder from a good one by one
targeted edit, so that every verifier check has a negative input that
differs from a valid plan in exactly the way the check names.

    python3 gen_bad_plans.py LINNET OUTDIR

LINNET is the linnet binary. The good documents are those `linnet build`
makes of test/mlir/distributed-plan.mlir (named relative to the repository
root, as the stored inputs record it): the portable plan, and the concrete
plan and MachineIR bound to `--target cuda`. Each edit is a list of JSON
pointer operations; the result is written in canonical form (sorted keys,
two-space indent, trailing newline), byte-identical to linnet's writer.
planning-inputs.test regenerates them and compares with the stored files.
"""
import copy
import json
import os
import shutil
import subprocess
import sys

SOURCE = "test/mlir/distributed-plan.mlir"

# file -> (good document, [(op, pointer, value)]); ops: set, add (object key
# or list index), remove, move (list element at pointer to index value).
EDITS = {
    "bad-portable-task-ref.json": ("portable", [("add", "/tasks/3/depends_on/0", "task.distributed.k9.nowhere")]),
    "bad-portable-dag.json": ("portable", [("add", "/tasks/0/depends_on/0", "task.distributed.k0.boundary")]),
    "bad-portable-dag-closure.json": ("portable", [("remove", "/tasks/4/depends_on/0", None)]),
    "bad-portable-buffer-lifecycle.json": ("portable", [("set", "/buffers/8/bound_semantic", "")]),
    "bad-portable-resources.json": ("portable", [("set", "/tasks/3/resources/engine_class", "tensor-core")]),
    "bad-portable-work-facts.json": ("portable", [("set", "/tasks/3/facts/ops/lower", -5)]),
    "bad-portable-objective-identity.json": ("portable", [("set", "/objectives/1/id", "obj.latency")]),
    "bad-portable-lineage.json": ("portable", [("set", "/tasks/4/provenance/location", "")]),
    "bad-portable-target-bound-field.json": ("portable", [("add", "/tasks/3/device", "cuda:0")]),
    "bad-portable-vendor-value.json": (
        "portable", [("add", "/tasks/3/alternatives/2", {"capability": "library.cublas.spmv", "needs": []})]),
    "bad-portable-concurrency-group.json": (
        "portable", [("set", "/concurrency_groups/0/tasks/0", "task.distributed.k0.halo-pack.x")]),
    "bad-concrete-dag.json": ("concrete", [("add", "/commands/0/depends_on/0", "cmd.distributed.k0.boundary")]),
    "bad-concrete-ordering.json": ("concrete", [("move", "/commands/2", 0)]),
    "bad-concrete-tokens.json": (
        "concrete", [("set", "/commands/2/sync/kind", "wait"), ("remove", "/commands/2/sync/signal", None)]),
    "bad-concrete-synchronization.json": (
        "concrete", [("set", "/commands/3/sync/kind", "wait"), ("remove", "/commands/3/sync/signal", None),
                     ("set", "/commands/4/sync/kind", "none"), ("remove", "/commands/4/sync/wait", None)]),
    "bad-concrete-implementation.json": ("concrete", [("set", "/commands/1/body/implementation", "")]),
    "bad-concrete-placement.json": ("concrete", [("set", "/commands/1/body/queue", "cuda:7/compute.q0")]),
    "bad-concrete-buffer-lifetime.json": ("concrete", [("set", "/buffers/1/first_command", 3)]),
    "bad-concrete-buffer-overlap.json": ("concrete", [("set", "/buffers/2/offset", 0)]),
    "bad-concrete-address-bounds.json": ("concrete", [("set", "/buffers/2/offset", 1048576)]),
    "bad-concrete-capacity.json": ("concrete", [("set", "/devices/0/memory_free_bytes", 4096)]),
    "bad-concrete-fingerprint.json": ("concrete", [("set", "/target/fingerprint", "sha256:1234")]),
    "bad-concrete-extension.json": ("concrete", [("set", "/extension/launches/1/block_x", 2000)]),
    "bad-concrete-lineage.json": ("concrete", [("set", "/commands/4/portable_task", "")]),
    "bad-machine-entry.json": ("machine", [("add", "/entry_points/0/commands/5", "cmd.distributed.k0.halo-pack.x")]),
    "bad-machine-section.json": ("machine", [("set", "/sections/0/kind", "code")]),
    "bad-machine-executable.json": ("machine", [("set", "/executables/0/symbol", "linnet_missing")]),
    "bad-machine-abi.json": ("machine", [("set", "/abi/triple", "x86_64-unknown-linux-gnu")]),
}


def resolve(doc, pointer):
    parts = pointer.lstrip("/").split("/")
    parent = doc
    for p in parts[:-1]:
        parent = parent[int(p)] if isinstance(parent, list) else parent[p]
    last = parts[-1]
    return parent, int(last) if isinstance(parent, list) else last


def apply(doc, op, pointer, value):
    parent, key = resolve(doc, pointer)
    if op == "set":
        if isinstance(parent, dict) and key not in parent:
            raise KeyError(f"set {pointer}: no such key (use add)")
        parent[key] = value
    elif op == "add":
        if isinstance(parent, list):
            parent.insert(key, value)
        else:
            if key in parent:
                raise KeyError(f"add {pointer}: key exists (use set)")
            parent[key] = value
    elif op == "remove":
        del parent[key]
    elif op == "move":
        parent.insert(value, parent.pop(key))
    else:
        raise ValueError(op)


def canonical(doc):
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main():
    linnet, out = sys.argv[1], os.path.abspath(sys.argv[2])
    linnet = os.path.abspath(linnet) if os.sep in linnet else shutil.which(linnet)
    root = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
    os.makedirs(out, exist_ok=True)
    goods = {}
    for kind, args in (("portable", ["--emit", "portable"]),
                       ("concrete", ["--target", "cuda", "--emit", "concrete"]),
                       ("machine", ["--target", "cuda", "--emit", "machine"])):
        text = subprocess.check_output([linnet, "build", SOURCE] + args, cwd=root).decode()
        goods[kind] = json.loads(text)
        assert canonical(goods[kind]) == text, f"the good {kind} document is not canonical"
    for name, (kind, ops) in sorted(EDITS.items()):
        doc = copy.deepcopy(goods[kind])
        for op, pointer, value in ops:
            apply(doc, op, pointer, value)
        assert doc != goods[kind], name
        with open(os.path.join(out, name), "w", encoding="utf-8") as f:
            f.write(canonical(doc))


if __name__ == "__main__":
    main()
