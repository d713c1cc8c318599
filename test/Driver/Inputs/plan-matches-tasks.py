"""The portable plan of an artifact against the Task IR its code came from.

usage: plan-matches-tasks.py ARTIFACT_DIR TASKS.mlir

Every gf kernel task of portable.json must carry the schedule of a
gf_kernel.launch of the build's Task IR (01-tasks.mlir of --dump-ir), in
order: the plans and model.so are made from one run of the gf passes.
Prints one line per kernel and 'ok', or what differs and exits 1.
"""
import json
import re
import sys

art, tasks = sys.argv[1], sys.argv[2]
plan = json.load(open(f"{art}/portable.json"))
kernels = [t["kernel"] for t in plan["tasks"] if t.get("kernel")]
text = open(tasks).read()
launches = []
for props in re.findall(r'"gf_kernel\.launch"\([^)]*\) <\{(.*?)\}>', text):
    def num(key):
        m = re.search(rf"\b{key} = (\d+) : i64", props)
        return int(m.group(1)) if m else None
    trav = re.search(r'traversal = "([^"]+)"', props)
    launches.append({"block_rows": num("block_rows"), "block_neighbors": num("block_neighbors"),
                     "num_warps": num("num_warps"), "traversal": trav.group(1) if trav else None})
if len(kernels) != len(launches) or not kernels:
    print(f"{len(kernels)} kernel tasks in the plan, {len(launches)} launches in the Task IR")
    sys.exit(1)
bad = 0
for k, l in zip(kernels, launches):
    got = {key: k.get(key) for key in l}
    print(f"{k['function']}: {got}")
    if got != l:
        print(f"  the Task IR has {l}")
        bad += 1
print("ok" if not bad else f"{bad} differ")
sys.exit(1 if bad else 0)
