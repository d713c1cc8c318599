"""Writes a damaged copy of a plan for the plan reader's error tests.
Usage: mutate.py PLAN.json CASE  (the result goes to stdout)."""
import json
import sys

plan = json.load(open(sys.argv[1]))
case = sys.argv[2]
fn = next(i for i, f in enumerate(plan["functions"]) if f["body"]["ops"])
body = plan["functions"][fn]["body"]

def find(match, region):
    """The first op `match` accepts in `region`, nested regions included."""
    for op in region["ops"]:
        if match(op):
            return op
        for r in op["regions"]:
            found = find(match, r)
            if found:
                return found
    return None

def first(kind, region=body):
    return find(lambda op: op["kind"] == kind, region)

if case == "unknown-id":
    op = next(o for o in body["ops"] if o["operands"])
    op["operands"][0] = 4242
elif case == "missing-attrs":
    del body["ops"][0]["attrs"]
elif case == "string-id":
    body["ops"][0]["results"][0]["id"] = "%1"
elif case == "bad-kind":
    body["ops"][0]["kind"] = "frobnicate"
elif case in ("arith-op", "unary-op", "cmp-pred"):
    # The first arith op with the operand count the case wants, in any function.
    n = 1 if case == "unary-op" else 2
    is_arith = lambda op: op["kind"] == "arith" and len(op["operands"]) == n
    op = next(o for o in (find(is_arith, f["body"]) for f in plan["functions"]) if o)
    if case == "cmp-pred":
        op["kind"], op["attrs"] = "cmp", {"pred": "approx"}
    else:
        op["attrs"]["op"] = "add" if case == "unary-op" else "frobnicate"
elif case == "callee":
    first("call")["attrs"]["callee"] = "nowhere::f"
elif case == "version":
    plan["version"] = 2
elif case == "extra-key":
    plan["extra"] = 1
elif case == "fn-kind":
    plan["functions"][0]["kind"] = "method"
elif case == "no-yield":
    comp = first("comprehension")
    comp["regions"][0]["ops"].pop()
elif case == "manifest":
    plan["manifest"][0]["kind"] = "weight"
elif case == "version-float":
    plan["version"] = 1.0
elif case == "no-return":
    f = next(f for f in plan["functions"] if f["body"]["ops"] and f["results"])
    f["body"]["ops"].pop()
elif case == "wrong-result":
    f = next(f for f in plan["functions"] if f["body"]["ops"] and f["results"])
    f["results"] = [{"kind": "scalar", "dtype": "bool"}]
elif case == "dup-manifest":
    plan["manifest"].append(dict(plan["manifest"][0]))
elif case == "dup-function":
    plan["functions"].append(json.loads(json.dumps(plan["functions"][0])))
elif case == "many-errors":
    for f in plan["functions"]:
        f["kind"] = "method"
    plan["functions"] = plan["functions"] * 20
elif case == "dup-key":
    text = json.dumps(plan)
    sys.stdout.write('{"module": "x", ' + text[1:])
    sys.exit(0)
elif case == "deep":
    sys.stdout.write('{"version": 1, "root": ' + "[" * 100000 + "]" * 100000 + "}")
    sys.exit(0)
elif case == "truncated":
    sys.stdout.write(json.dumps(plan)[:100])
    sys.exit(0)
json.dump(plan, sys.stdout, indent=2)
