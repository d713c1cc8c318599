"""linnet._core (linnet.Model): the runtime binding itself."""
import os

import numpy as np
import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LLAMA = os.path.join(ROOT, "examples", "llama.ln")


def test_call_matches_numpy(mlp):
    art, w, weights = mlp
    m = linnet.Model(art, w)
    x = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    (y,) = m.call("forward", [x])
    want = np.maximum(x @ weights["fc1.weight"].T, 0) @ weights["fc2.weight"].T
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
    assert y.dtype == np.float32 and y.flags["C_CONTIGUOUS"]
    # A non-contiguous input is copied, not misread.
    xt = np.asfortranarray(x)
    np.testing.assert_allclose(m.call("forward", [xt])[0], y)
    (entry,) = m.entries()
    assert entry["name"] == "forward" and entry["inputs"][0]["shape"] == ["B", 3]
    paths = {t["path"]: t for t in m.tensors()}
    assert paths["fc1.weight"]["shape"] == [5, 3] and paths["fc1.bias"]["present"] is False


def test_errors(mlp, tmp_path):
    art, w, _ = mlp
    m = linnet.Model(art, w)
    with pytest.raises(TypeError, match="input 'x': expected dtype f32, found f64"):
        m.call("forward", [np.zeros((2, 3))])
    with pytest.raises(ValueError, match=r"input 'x': expected shape \[B, 3\], found \[2, 4\]"):
        m.call("forward", [np.zeros((2, 4), dtype=np.float32)])
    with pytest.raises(TypeError, match="entry 'forward' takes 1 inputs, given 2"):
        m.call("forward", [np.zeros((2, 3), dtype=np.float32)] * 2)
    with pytest.raises(ValueError, match="no entry 'backward' \\(entries: forward\\)"):
        m.call("backward", [])
    with pytest.raises(ValueError, match="give a weights file"):
        linnet.Model(art)
    bad = str(tmp_path / "bad.safetensors")
    linnet._core.write_safetensors(bad, {"fc1.weight": np.zeros((3, 5), np.float32),
                                         "fc2.weight": np.zeros((2, 5), np.float32)})
    with pytest.raises(ValueError, match=r"tensor 'fc1.weight': wrong shape: expected \[5, 3\], found \[3, 5\]"):
        linnet.Model(art, bad)
    with pytest.raises(TypeError, match="unsupported dtype"):
        linnet._core.write_safetensors(str(tmp_path / "c.safetensors"),
                                       {"a": np.zeros(2, dtype=np.complex64)})


def test_state_persists():
    dims = {"Vocab": 16, "Hidden": 8, "Inter": 8, "Layers": 1, "Heads": 2, "KvHeads": 1,
            "MaxSeq": 8}
    art = _compiler.build_file(LLAMA, root="Llama", dims=dims)
    m = linnet.LinnetModule(art)
    m.prefill(np.array([1, 2, 3]))
    k = m.state_tensor("model.layers.0.self_attn.k_cache")  # [Slots, KvHeads, MaxSeq, Head]
    assert k is not None and tuple(k.shape) == (1, 1, 8, 4)
    assert (k[:, :, :3] != 0).any() and (k[:, :, 3:] == 0).all()


def test_eval_dim_is_the_compilers_arithmetic():
    import json as _json
    n = {"sym": "n", "name": "N"}
    assert linnet._core.eval_dim(_json.dumps({"op": "add", "args": [n, 2, 3]}), {"n": 7}) == 12
    assert linnet._core.eval_dim(_json.dumps({"op": "floordiv", "args": [n, 2]}), {"n": -7}) == -4
    assert linnet._core.eval_dim(_json.dumps({"op": "mod", "args": [n, 2]}), {"n": -7}) == 1
    assert linnet._core.eval_dim(_json.dumps(n), {}) is None
    with pytest.raises(ValueError, match="divides by zero"):
        linnet._core.eval_dim(_json.dumps({"op": "mod", "args": [n, 0]}), {"n": 3})
    with pytest.raises(ValueError, match="overflows 64-bit integers"):
        linnet._core.eval_dim(_json.dumps({"op": "mul", "args": [n, 2**62]}), {"n": 4})
    with pytest.raises(ValueError, match="not a JSON dim"):
        linnet._core.eval_dim("{", {})
