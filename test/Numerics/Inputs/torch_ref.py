"""PyTorch and numpy references for the Numerics tests (agree.py --ref
imports this module: `__import__("torch_ref")`)."""
import numpy as np
import torch
import torch.nn.functional as F


def t(a):
    return torch.from_numpy(np.ascontiguousarray(a))


def conv1d(x, w, stride, pad):
    return F.conv1d(t(x), t(w["weight"]), t(w["bias"]), stride=stride, padding=pad).numpy()


def windows(x, k, stride, pad):
    """(B, C, Lo, K) windows of x, NaN where a tap falls in the padding."""
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad)), constant_values=np.nan)
    return np.lib.stride_tricks.sliding_window_view(xp, k, axis=2)[:, :, ::stride]


def pool(kind, x, k, stride, pad):
    win = windows(x, k, stride, pad)
    inside = ~np.isnan(win)
    if kind == "max":
        return np.nanmax(win, -1)
    if kind == "min":
        return np.nanmin(win, -1)
    if kind == "mean":
        return np.nanmean(win, -1)
    if kind == "any":
        return (inside & (np.nan_to_num(win) > 0)).any(-1)
    return (~inside | (np.nan_to_num(win) > 0)).all(-1)


def rnn(x, w, h0=None, steps=None):
    """torch.nn.RNN (tanh, one layer, one bias): the last hidden state."""
    m = torch.nn.RNN(x.shape[1], w["weight_hh"].shape[0], bias=True)
    with torch.no_grad():
        m.weight_ih_l0.copy_(t(w["weight_ih"]))
        m.weight_hh_l0.copy_(t(w["weight_hh"]))
        m.bias_ih_l0.copy_(t(w["bias"]))
        m.bias_hh_l0.zero_()
        xs = t(x)[:steps] if steps is not None else t(x)
        h = None if h0 is None else t(h0)[None]
        _, hn = m(xs, h)
    return hn[0].numpy()


def gru(x, h0, w):
    """torch.nn.GRU (one layer): (every step's output, the last hidden state)."""
    m = torch.nn.GRU(x.shape[1], h0.shape[0])
    with torch.no_grad():
        for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
            getattr(m, name + "_l0").copy_(t(w[name]))
        out, hn = m(t(x), t(h0)[None])
    return out.numpy(), hn[0].numpy()


def encoder(x, keep, w):
    """(sequence, pooled over the kept tokens)."""
    y = x + np.maximum(x @ w["w1"], 0) @ w["w2"]
    return y, y[keep].mean(0) if keep.any() else np.zeros(y.shape[1], y.dtype)


def rising(x):
    """1 where a step is above the one before it (none before the first)."""
    up = (x[..., 1:] > x[..., :-1]).astype(np.float32)
    return np.concatenate([np.zeros_like(x[..., :1]), up], -1)
