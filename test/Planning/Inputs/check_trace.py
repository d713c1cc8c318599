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
instants = [e for e in events if e["ph"] == "i"]
for e in instants:
    assert e["s"] in ("g", "p", "t") and e["ts"] >= 0, e
counters = [e for e in events if e["ph"] == "C"]
for e in counters:
    assert all(isinstance(v, (int, float)) for v in e["args"].values()), e
names = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "thread_name"}
assert all(e["tid"] in names for e in complete + instants)
bundle = doc["otherData"]
for ref in ("concrete", "projection", "trace"):
    assert bundle[ref].startswith("sha256:"), ref
# The bundle references; it never copies the command DAG.
assert "commands" not in bundle and "intervals" not in bundle
print(f"valid trace: {len(complete)} complete events on {len(names)} queues, "
      f"{len(instants)} signals, {len(set(e['name'] for e in counters))} counter tracks")
