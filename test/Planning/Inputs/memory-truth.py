"""memory-truth.py PORTABLE CONCRETE: prints the persistent buffers of a
build's plans and checks that the concrete plan accounts for them."""
import json
import sys

p = json.load(open(sys.argv[1]))
c = json.load(open(sys.argv[2]))
persistent = [b for b in p["buffers"] if b["storage"] == "PERSISTENT"]
for b in persistent:
    print(b["id"], b["role"], b["bytes"]["upper"], "read" if b["readers"] else "unread")
total = sum(b["bytes"]["upper"] for b in p["buffers"])
print("memory_bytes_per_rank", p["requirements"]["memory_bytes_per_rank"]["upper"] == total)
regions = [r for r in c["buffers"] if r["persistent"]]
arena = c["arenas"][0]
print("persistent_bytes", arena["persistent_bytes"],
      arena["persistent_bytes"] == sum(b["bytes"]["upper"] for b in persistent),
      len(regions) == len(persistent))
