"""An artifact's plans against the library it ships, both ways.

usage: plans-match-library.py ARTIFACT_DIR

- every generated implementation of concrete.json names a function defined
  in model.so, every library implementation a routine whose linnet shim is
  there, and every command's implementation exists;
- every symbol and entry point of machine.json is defined in model.so, and
  every command of an entry point is a command of the concrete plan;
- every function of model.so that holds the model's code (not the C
  runtime's, OpenMP's outlined bodies, the BLAS shim or an entry's ABI
  wrapper, or an entry's C interface that holds only glue) is the symbol
  of an implementation that a command runs.
Prints a summary line and 'ok', or each mismatch and exits 1.
"""
import json
import subprocess
import sys

art = sys.argv[1]
nm = subprocess.run(["llvm-nm", "--defined-only", f"{art}/model.so"], capture_output=True, text=True,
                    check=True).stdout
defined = {line.split()[2] for line in nm.splitlines() if len(line.split()) == 3 and line.split()[1] in "TtWw"}
concrete = json.load(open(f"{art}/concrete.json"))
machine = json.load(open(f"{art}/machine.json"))
portable = json.load(open(f"{art}/portable.json"))
problems = []

impls = {i["id"]: i for i in concrete["implementations"]}
commands = {c["id"]: c for c in concrete["commands"]}
tasks = {t["id"] for t in portable["tasks"]}
run = set()
for c in concrete["commands"]:
    impl = c["body"].get("implementation")
    if impl is None:
        continue
    if impl not in impls:
        problems.append(f"{c['id']}: implementation {impl} is not in the plan")
    run.add(impl)
    if c.get("portable_task") not in tasks:
        problems.append(f"{c['id']}: portable task {c.get('portable_task')} is not in portable.json")
symbols_of_impls = set()
for i in impls.values():
    if i["kind"] == "generated":
        symbols_of_impls.add(i["symbol"])
        if i["symbol"] not in defined:
            problems.append(f"{i['id']}: symbol {i['symbol']!r} is not defined in model.so")
    elif i["kind"] == "library":
        if f"linnet_{i['routine']}" not in defined:
            problems.append(f"{i['id']}: routine {i['routine']} has no shim linnet_{i['routine']} in model.so")

for s in machine["symbols"]:
    if s["name"] not in defined:
        problems.append(f"machine.json: symbol {s['name']!r} is not defined in model.so")
entry_cmds = set()
for e in machine["entry_points"]:
    if e["name"] not in defined:
        problems.append(f"machine.json: entry point {e['name']!r} is not defined in model.so")
    for c in e["commands"]:
        entry_cmds.add(c)
        if c not in commands:
            problems.append(f"machine.json: entry point {e['name']} runs unknown command {c}")
for c in commands.values():
    if c["body"].get("implementation") and c["id"] not in entry_cmds:
        problems.append(f"{c['id']}: no entry point runs it")

runtime_names = {"_init", "_fini", "frame_dummy", "register_tm_clones", "deregister_tm_clones",
                 "__do_global_dtors_aux", "__cpu_indicator_init", "linnet_blas_load"}
model_fns = set()
for s in defined:
    if s in runtime_names or "..omp_par" in s or s.startswith(("linnet_cblas_", "linnet_entry_")):
        continue
    # The workspace stack the arenas come from (the shim's, docs/cpu-abi.md).
    if s.startswith(("linnet_workspace_", "linnet_ws_")):
        continue
    # A distributed build's hook trampolines (the shim's glue) and its hook.
    if s.startswith("_mlir_ciface_linnet_dist_"):
        continue
    if s.startswith(("get_available_features", "has_cpu_feature", "set_cpu_feature")):
        continue
    # MLIR's ownership-based deallocation: the helper that decides which of
    # several buffers a loop iteration replaced to free (-lower-deallocations).
    if s == "dealloc_helper":
        continue
    # An entry's C interface is its entry point's body: glue where the
    # entry has no work of its own (a relation kernel call, say).
    if s.startswith("_mlir_ciface_") and "linnet_entry_" + s[len("_mlir_ciface_"):] in \
            {e["name"] for e in machine["entry_points"]}:
        if s not in {impls[i]["symbol"] for i in run if impls[i]["kind"] == "generated"}:
            continue
    model_fns.add(s)
    if s not in {impls[i]["symbol"] for i in run if impls[i]["kind"] == "generated"}:
        problems.append(f"model.so: function {s!r} is not the implementation of any command")

print(f"{len(commands)} commands, {len(impls)} implementations, {len(model_fns)} model functions, "
      f"{len(machine['entry_points'])} entry points")
for p in problems:
    print(p)
print("ok" if not problems else f"{len(problems)} problems")
sys.exit(1 if problems else 0)
