#!/usr/bin/env python3
"""Edits an artifact's manifest.json as an attacker would, for the integrity
tests. Usage: manifest_edit.py DIR ACTION [ARG...]
  reseal FILE...        recompute sha256 and bytes of the listed FILEs
  add-file PATH         list PATH (relative to DIR) with its real digest
  library PATH          make `library` name PATH (listing it with its digest)
  drop-file PATH        remove PATH from `files`
  drop-files            remove the whole `files` list
  schema NAME           set `schema`
  raw TEXT              replace the whole manifest by TEXT
"""
import hashlib, json, os, sys

d, action, args = sys.argv[1], sys.argv[2], sys.argv[3:]
path = os.path.join(d, "manifest.json")
m = json.load(open(path))

def entry(p):
    data = open(os.path.join(d, p), "rb").read()
    return {"path": p, "sha256": hashlib.sha256(data).hexdigest(), "bytes": len(data)}

def put(p):
    m["files"] = [f for f in m["files"] if f["path"] != p] + [entry(p)]

if action == "reseal":
    for p in args:
        put(p)
elif action == "add-file":
    put(args[0])
elif action == "library":
    put(args[0])
    m["library"] = args[0]
elif action == "drop-file":
    m["files"] = [f for f in m["files"] if f["path"] != args[0]]
elif action == "drop-files":
    del m["files"]
elif action == "schema":
    m["schema"] = args[0]
elif action == "raw":
    open(path, "w").write(args[0])
    sys.exit(0)
open(path, "w").write(json.dumps(m, indent=2) + "\n")
