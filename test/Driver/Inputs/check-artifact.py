#!/usr/bin/env python3
"""Checks that an artifact directory is whole: manifest.json lists every
file with a matching SHA-256 and size. Usage: check-artifact.py DIR"""
import hashlib, json, os, sys

d = sys.argv[1]
m = json.load(open(os.path.join(d, "manifest.json")))
assert m["files"], "no files"
for f in m["files"]:
    data = open(os.path.join(d, f["path"]), "rb").read()
    if hashlib.sha256(data).hexdigest() != f["sha256"] or len(data) != f["bytes"]:
        sys.exit(f"{f['path']}: does not match the manifest")
assert m["digests"]["library"] == "sha256:" + [f for f in m["files"] if f["path"] == "model.so"][0]["sha256"]
print("whole")
