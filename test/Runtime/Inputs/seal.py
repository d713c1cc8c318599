#!/usr/bin/env python3
"""Writes manifest.json for a hand-assembled artifact directory: the files
named on the command line (the first is the library) with their SHA-256 and
size, as `linnet build` lists them. Usage: seal.py DIR LIBRARY [FILE...]"""
import hashlib, json, os, sys

d, files = sys.argv[1], sys.argv[2:]
entries = []
for f in files:
    data = open(os.path.join(d, f), 'rb').read()
    entries.append({"path": f, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)})
doc = {"schema": "linnet.program-artifact/1", "abi": {"runtime_abi": "linnet-cpu-packed-v1"},
       "library": files[0], "files": entries}
open(os.path.join(d, "manifest.json"), "w").write(json.dumps(doc, indent=2) + "\n")
