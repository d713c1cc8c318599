"""Arena regions against the tasks that use them: for a concrete plan (and
its portable plan), prints how many intermediates a later task reads (in
its operands or in its element code), how many of those reads extend the
region's life past its writer's command, and the pairs of regions that are
live at the same command and share bytes (none in a correct plan)."""
import json
import sys

portable = json.load(open(sys.argv[1]))
concrete = json.load(open(sys.argv[2]))
writer = {}
for t in portable["tasks"]:
    for b in t["writes"]:
        writer.setdefault(b, t["id"])
read_after = sum(1 for t in portable["tasks"] for b in t["reads"]
                 if b in writer and writer[b] != t["id"])
regions = [r for r in concrete["buffers"] if not r["persistent"] and not r["external"]]
longer = sum(1 for r in regions if r["last_command"] > r["first_command"])
clashes = []
for i, a in enumerate(regions):
    for b in regions[i + 1:]:
        if a["memory_space"] != b["memory_space"]:
            continue
        live = a["first_command"] <= b["last_command"] and b["first_command"] <= a["last_command"]
        share = a["offset"] < b["offset"] + b["bytes"] and b["offset"] < a["offset"] + a["bytes"]
        if live and share:
            clashes.append((a["id"], b["id"]))
peak = max((r["offset"] + r["bytes"] for r in regions), default=0)
arena = sum(a["arena_bytes"] for a in concrete["arenas"])
print(f"reads of intermediates: {read_after > 0}, regions live past their writer: {longer > 0}, "
      f"clashes: {len(clashes)} {clashes[:3]}, regions within the arena: {peak <= arena}")
