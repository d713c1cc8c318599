#!/usr/bin/env python3
"""Generates N megabytes of varied, valid linnet source for the parser benchmark.

Usage: gen.py MEGABYTES OUT.ln
Every construct family appears: blocks with all member kinds, generic
functions with comprehensions and reductions, relations, match, while,
structs, enums, reducers and constants.
"""
import sys

TEMPLATE = '''
pub block Layer{i}<Hidden: dim, Heads: dim, T: dtype(float) = f32> where Hidden % Heads == 0 {{
    param weight: Tensor[Hidden, Hidden; T]
    param bias: Tensor[Hidden; T]? = none
    buffer stats: Tensor[Hidden; f32]
    state cache: Tensor[Heads, 64, Hidden / Heads; T]
    sub norm: RMSNorm<Hidden, T>
    sub experts: [Linear<Hidden, Hidden, T>; 4]

    pub fn forward<B: dim>(x: Tensor[B, Hidden; T]) -> Tensor[B, Hidden; T] {{
        let y = [b: B, o: Hidden] sum(i: Hidden) x[b, i] * weight[o, i]
        let z = match bias {{
            some(v) => [b: B, o: Hidden] y[b, o] + v[o],
            none => y,
        }}
        var k = 0
        while k < {i} {{
            k = k + 1
        }}
        cache = [h: Heads, s: 64, d: Hidden / Heads] cache[h, s, d] * 0.5 + 1.0e-3
        let m = [b: B] max(o: Hidden) z[b, o]
        let s = [b: B, o: Hidden] exp(z[b, o] - m[b]) / sum(j: Hidden) exp(z[b, j] - m[b])
        if k > 3 && {i} % 2 == 0 {{
            return experts[0].forward(s)
        }} else {{
            return norm.forward(s[0:B, ...])
        }}
    }}
}}

fn aggregate{i}<N: dim, M: dim, E: dim, F: dim>(g: Csr[N, M, E], x: Tensor[N, F; f32], w: Tensor[E; f32]) -> Tensor[M, F; f32] {{
    return [dst: M, f: F] sum(src, edge: g[dst]) x[src, f] * w[edge] as f32
}}

struct Pair{i}<T: dtype> {{
    a: T
    b: (T, i64)
}}

enum Mode{i} {{
    Fast,
    Slow(i64),
}}

const SCALE{i}: f32 = {i}.25
'''


def main():
    mb = float(sys.argv[1])
    out = sys.argv[2]
    target = int(mb * 1024 * 1024)
    parts = ["module bench.generated\n\nimport std.nn.{Linear, RMSNorm}\n"]
    size = len(parts[0])
    i = 0
    while size < target:
        chunk = TEMPLATE.format(i=i)
        parts.append(chunk)
        size += len(chunk)
        i += 1
    with open(out, "w") as f:
        f.write("".join(parts))
    print(f"{out}: {size} bytes, {i} repetitions of the template")


if __name__ == "__main__":
    main()
