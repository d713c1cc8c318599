"""Recurrent models of the zoo (examples/zoo/lstm.ln, gru.ln) against
torch.nn.LSTM / nn.GRU on the same weights and inputs, in the same run:
the best of REPEAT forward calls each, and the largest difference of the
outputs. Their step loop runs over the sequence length at run time (a
`while t < S`), so this is the figure of work inside host control flow.

    PYTHONPATH=build/python /usr/bin/python3 bench/zoo/rnn.py [--seq S] [--batch B] [--input I] [--hidden H]
"""

import argparse
import os
import time

import torch

import linnet

ZOO = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "zoo")


def best(fn, repeat):
    fn()
    t = float("inf")
    for _ in range(repeat):
        s = time.perf_counter()
        fn()
        t = min(t, time.perf_counter() - s)
    return t


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--input", type=int, default=256)
    ap.add_argument("--hidden", type=int, default=512)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    torch.manual_seed(0)
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "2")))
    x = torch.randn(a.seq, a.batch, a.input)
    h0 = torch.randn(a.batch, a.hidden)
    for name, ref in (("lstm", torch.nn.LSTM(a.input, a.hidden)), ("gru", torch.nn.GRU(a.input, a.hidden))):
        weights = {k: v.detach().clone() for k, v in ref.state_dict().items()}
        m = linnet.compile(os.path.join(ZOO, name + ".ln"), dims={"In": a.input, "Hidden": a.hidden},
                           weights=None)
        m.load_state_dict(weights)
        with torch.no_grad():
            if name == "lstm":
                c0 = torch.randn(a.batch, a.hidden)
                ours = lambda: m(x, h0, c0)  # noqa: E731
                theirs = lambda: ref(x, (h0[None], c0[None]))  # noqa: E731
            else:
                xb = x.transpose(0, 1).contiguous()  # zoo/gru.ln is batch first
                ref_b = torch.nn.GRU(a.input, a.hidden, batch_first=True)
                ref_b.load_state_dict(ref.state_dict())
                ours = lambda: m(xb, h0)  # noqa: E731
                theirs = lambda: ref_b(xb, h0[None])  # noqa: E731
            diff = (ours()[0] - theirs()[0]).abs().max().item()
            tl, tt = best(ours, a.repeat), best(theirs, a.repeat)
        print(f"{name}: S={a.seq} B={a.batch} In={a.input} Hidden={a.hidden}: linnet {tl * 1e3:.2f} ms, "
              f"torch {tt * 1e3:.2f} ms ({tt / tl:.2f}x), max |diff| {diff:.2e}")


if __name__ == "__main__":
    main()
