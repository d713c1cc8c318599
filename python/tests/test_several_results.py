"""Entries with several results (a tuple) from Python: a tuple of tensors,
in the entry's order, each as PyTorch computes it."""
import os

import torch

import linnet

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ENCODER = os.path.join(ROOT, "test", "Numerics", "Inputs", "encoder.ln")


def test_encoder_returns_sequence_and_pooled():
    torch.manual_seed(0)
    w = {"w1": torch.randn(4, 8), "w2": torch.randn(8, 4)}
    m = linnet.compile(ENCODER, root="Encoder", dims={"D": 4, "F": 8}, weights=w)
    x = torch.randn(5, 4)
    keep = torch.tensor([True, False, True, True, False])
    y = x + torch.relu(x @ w["w1"]) @ w["w2"]
    seq, pooled = m.forward(x, keep)
    torch.testing.assert_close(seq, y)
    torch.testing.assert_close(pooled, y[keep].mean(0))
    first, second = m.swapped(x, keep)
    torch.testing.assert_close(first, pooled)
    torch.testing.assert_close(second, seq)
