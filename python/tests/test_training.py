import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "examples"))

import gcn_training  # noqa: E402


def test_gcn_training_matches_pytorch():
    l1, l2, g1, g2 = gcn_training.main(steps=5)
    assert len(l1) == 5 and l1[-1] < l1[0]  # it learns
    for a, b in zip(l1, l2):
        assert abs(a - b) <= 1e-5 * abs(b)
    for step_a, step_b in zip(g1, g2):
        for a, b in zip(step_a, step_b):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-9)


def test_gat_training_matches_pytorch():
    import gat_training
    l1, l2, g1, g2 = gat_training.main(steps=5)
    assert l1[-1] < l1[0]
    for a, b in zip(l1, l2):
        assert abs(a - b) <= 1e-5 * abs(b)
    for step_a, step_b in zip(g1, g2):
        for a, b in zip(step_a, step_b):
            torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-9)
