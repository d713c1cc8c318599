"""Weights files from Python go through linnet's own reader: a sharded
checkpoint's index is a weights file, and what `linnet run --weights`
refuses, Python refuses with the same message."""
import json
import os

import numpy as np
import pytest
import torch

import linnet
from linnet import _compiler
from linnet.module import read_safetensors

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_sharded_checkpoint(tmp_path):
    rng = np.random.default_rng(0)
    w = {"fc1.weight": rng.standard_normal((5, 3)).astype(np.float32),
         "fc2.weight": rng.standard_normal((2, 5)).astype(np.float32)}
    linnet._core.write_safetensors(str(tmp_path / "model-00001-of-00002.safetensors"),
                                   {"fc1.weight": w["fc1.weight"]})
    linnet._core.write_safetensors(str(tmp_path / "model-00002-of-00002.safetensors"),
                                   {"fc2.weight": w["fc2.weight"]})
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"metadata": {"total_size": 100}, "weight_map": {
        "fc1.weight": "model-00001-of-00002.safetensors", "fc2.weight": "model-00002-of-00002.safetensors"}}))
    got = read_safetensors(index)
    assert sorted(got) == ["fc1.weight", "fc2.weight"]
    torch.testing.assert_close(got["fc2.weight"], torch.from_numpy(w["fc2.weight"]))
    art = _compiler.build_file(os.path.join(ROOT, "examples", "mlp.ln"), root="MLP",
                               dims={"In": 3, "Hidden": 5, "Out": 2})
    x = rng.standard_normal((4, 3)).astype(np.float32)
    want = np.maximum(x @ w["fc1.weight"].T, 0) @ w["fc2.weight"].T
    (y,) = linnet.Model(art, str(index)).call("forward", [x])
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    m = linnet.LinnetModule(art, weights=str(index))
    np.testing.assert_allclose(m.forward(torch.from_numpy(x)).detach().numpy(), want, rtol=1e-5, atol=1e-6)


def test_damaged_files_refused_as_the_cli_does(tmp_path):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\x10\x00\x00\x00\x00\x00\x00\x00{}")
    with pytest.raises(ValueError, match="header length 16 runs past the end of the file"):
        read_safetensors(bad)
    index = tmp_path / "model.safetensors.index.json"
    index.write_text(json.dumps({"weight_map": {"a": "/etc/passwd"}}))
    with pytest.raises(ValueError, match="is not a file beside the index"):
        read_safetensors(index)
