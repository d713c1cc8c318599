"""Checks a Chrome trace-event JSON file the way Perfetto's importer reads it."""
import json
import sys

doc = json.load(open(sys.argv[1]))
events = doc["traceEvents"]
complete = [e for e in events if e["ph"] == "X"]
for e in complete:
    for key in ("name", "ts", "dur", "pid", "tid"):
        assert key in e, (key, e)
    assert e["dur"] >= 0 and e["ts"] >= 0, e
names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
assert all(e["tid"] in names for e in complete)
assert doc["otherData"]["concrete"].startswith("sha256:")
print(f"valid trace: {len(complete)} complete events on {len(names)} queues")
