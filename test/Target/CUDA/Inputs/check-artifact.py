#!/usr/bin/env python3
"""Checks a CUDA artifact directory is complete and says what it holds.

  check-artifact.py DIR

Every file manifest.json lists exists with its SHA-256 and size; the
runtime description names the CUDA ABI and its device files; kernels.cubin
is an ELF for NVIDIA GPUs (EM_CUDA) and kernels.ptx targets sm_90a; every
kernel of the table has what ptxas reported. Prints a summary, exit 1 with
the first problem.
"""
import hashlib
import json
import os
import re
import struct
import sys

d = sys.argv[1]


def fail(why):
    sys.exit("%s: %s" % (d, why))


man = json.load(open(os.path.join(d, "manifest.json")))
listed = {}
for f in man["files"]:
    data = open(os.path.join(d, f["path"]), "rb").read()
    if hashlib.sha256(data).hexdigest() != f["sha256"] or len(data) != f["bytes"]:
        fail("%s does not match its digest" % f["path"])
    listed[f["path"]] = data
rt = json.loads(listed["runtime.json"])
if rt["abi"] != "linnet-cuda-driver-v1":
    fail("runtime.json abi is %r" % rt["abi"])
dev = rt["device"]
for key in ("kernels", "module", "ptx"):
    if dev[key] not in listed:
        fail("device.%s (%s) is not in the manifest" % (key, dev[key]))
table = json.loads(listed[dev["kernels"]])
ptx = listed[dev["ptx"]].decode()
if not re.search(r"^\.target sm_90a", ptx, re.M):
    fail("the PTX does not target sm_90a")
cubin = listed.get("kernels.cubin")
if cubin is None or dev["module"] != "kernels.cubin":
    fail("no cubin")
if cubin[:4] != b"\x7fELF" or struct.unpack_from("<H", cubin, 18)[0] != 190:
    fail("kernels.cubin is not an ELF for NVIDIA GPUs")
entries = set(re.findall(r"^\.visible \.entry ([\w$]+)\(", ptx, re.M))
regs = []
for k in table["kernels"]:
    if k["name"] not in entries:
        fail("kernel %s is not an entry of the PTX" % k["name"])
    if "ptxas" not in k:
        fail("kernel %s has no ptxas report" % k["name"])
    regs.append(k["ptxas"]["registers"])
    if k["ptxas"]["spill_stores"] or k["ptxas"]["spill_loads"]:
        print("note: kernel %s spills" % k["name"])
sections = {s["name"]: s for s in json.loads(listed["machine.json"])["sections"]} if "machine.json" in listed else {}
print("complete: %d files with digests, abi %s, %d kernels in kernels.cubin (sm_90a ELF) and kernels.ptx, "
      "ptxas registers %d-%d" % (len(listed), rt["abi"], len(table["kernels"]), min(regs), max(regs)))
