"""A CUDA artifact from Python (linnet.Model, linnet.LinnetModule) through
the real CUDA runtime, on the CUDA driver emulator (docs/cuda-abi.md): no
GPU needed. Each check runs in a fresh interpreter, as the driver is chosen
once per process (LINNET_LIBCUDA)."""
import os
import subprocess
import sys
import textwrap

import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def emulator():
    exe = os.path.realpath(_compiler.linnet_bin())
    return os.path.join(os.path.dirname(os.path.dirname(exe)), "lib", "liblinnet-cuda-emulator.so")


def build(tmp_path, model, dims, name):
    out = str(tmp_path / name)
    args = [_compiler.linnet_bin(), "build", os.path.join(ROOT, "examples", model), "--target", "cuda",
            "--host-kernels", "-o", out]
    for k, v in dims.items():
        args += ["-D", f"{k}={v}"]
    p = subprocess.run(args, capture_output=True, text=True)
    if p.returncode != 0 and "ptxas" in p.stderr:
        pytest.skip("no ptxas")
    assert p.returncode == 0, p.stderr
    return out


def run_python(code, kernels, **env):
    e = dict(os.environ, LINNET_LIBCUDA=emulator(), LINNET_CUDA_EMULATOR_KERNELS=kernels, **env)
    e["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=e)
    assert p.returncode == 0, p.stdout + p.stderr
    return p.stdout


@pytest.fixture(scope="module")
def have_emulator():
    if not os.path.exists(emulator()):
        pytest.skip("the CUDA driver emulator is not built")


def test_model_call(tmp_path, have_emulator):
    art = build(tmp_path, "mlp.ln", {"In": 3, "Hidden": 5, "Out": 2}, "mlp")
    out = run_python(f"""
        import numpy as np, linnet
        rng = np.random.default_rng(0)
        w = {{"fc1.weight": rng.standard_normal((5, 3)).astype(np.float32),
             "fc2.weight": rng.standard_normal((2, 5)).astype(np.float32)}}
        linnet._core.write_safetensors({str(tmp_path / 'w.safetensors')!r}, w)
        m = linnet.Model({art!r}, {str(tmp_path / 'w.safetensors')!r})
        x = rng.standard_normal((4, 3)).astype(np.float32)
        (y,) = m.call("forward", [x])
        want = np.maximum(x @ w["fc1.weight"].T, 0) @ w["fc2.weight"].T
        np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
        # Again: the same launches, now as the entry's CUDA graph.
        for _ in range(3):
            np.testing.assert_allclose(m.call("forward", [x])[0], want, rtol=1e-5, atol=1e-6)
        print("ok", y.shape)
    """, art)
    assert out.strip() == "ok (4, 2)"


def test_state_on_the_device(tmp_path, have_emulator):
    """The KV cache lives on the device between calls; state_tensor brings
    it back; the tokens are those of the CPU build."""
    dims = {"Vocab": 16, "Hidden": 8, "Inter": 8, "Layers": 1, "Heads": 2, "KvHeads": 1, "MaxSeq": 8}
    art = build(tmp_path, "llama.ln", dims, "llama")
    cpu = _compiler.build_file(os.path.join(ROOT, "examples", "llama.ln"), root="Llama", dims=dims)
    code = """
        import numpy as np, torch, linnet
        torch.manual_seed(0)
        m = linnet.LinnetModule({art!r})
        ref = linnet.LinnetModule({cpu!r})
        ref.load_state_dict(m.state_dict())
        a = m.prefill(np.array([1, 2, 3]))
        b = ref.prefill(np.array([1, 2, 3]))
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-4, atol=1e-5)
        for pos in range(3, 6):
            tok = np.array([pos % 16])
            np.testing.assert_allclose(np.asarray(m.decode(tok, pos)), np.asarray(ref.decode(tok, pos)),
                                       rtol=1e-4, atol=1e-5)
        k, kr = m.state_tensor("model.layers.0.self_attn.k_cache"), ref.state_tensor("model.layers.0.self_attn.k_cache")
        np.testing.assert_allclose(np.asarray(k), np.asarray(kr), rtol=1e-4, atol=1e-5)
        print("ok", tuple(k.shape))
    """.format(art=art, cpu=cpu)
    out = run_python(code, art)
    assert out.strip() == "ok (1, 1, 8, 4)"
