"""The Python writers go through linnet's one output guard (AtomicFile.h),
and weights read into memory (mmap=False) survive a file changed under a
run (docs/security.md, "Outputs" and "Weights that change under a run")."""
import os
import signal
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MLP = os.path.join(ROOT, "examples", "mlp.ln")


@pytest.fixture(scope="module")
def mlp(tmp_path_factory):
    art = _compiler.build_file(MLP, root="MLP", dims={"In": 3, "Hidden": 5, "Out": 2})
    rng = np.random.default_rng(0)
    weights = {"fc1.weight": rng.standard_normal((5, 3)).astype(np.float32),
               "fc2.weight": rng.standard_normal((2, 5)).astype(np.float32)}
    return art, weights


def forward(weights, x):
    return np.maximum(x @ weights["fc1.weight"].T, 0) @ weights["fc2.weight"].T


def test_writer_refuses_a_planted_link(mlp, tmp_path):
    # The link was replaced by the new file (its target kept, the link lost);
    # now it is refused and both stay as they were.
    _, weights = mlp
    target = tmp_path / "mine.txt"
    target.write_text("mine\n")
    link = tmp_path / "w.safetensors"
    link.symlink_to("mine.txt")
    with pytest.raises(ValueError, match=r"the output '.*w.safetensors' is a symbolic link \(to 'mine.txt'\): "
                                         r"refusing to write through it or replace it"):
        linnet._core.write_safetensors(str(link), weights)
    assert link.is_symlink() and target.read_text() == "mine\n"


def test_writer_refuses_a_live_models_input(mlp, tmp_path):
    # The weights a loaded model reads are an input of what runs in this
    # process: writing over them was silently accepted.
    art, weights = mlp
    w = str(tmp_path / "w.safetensors")
    linnet._core.write_safetensors(w, weights)
    before = open(w, "rb").read()
    m = linnet.Model(art, w)
    zeros = {k: np.zeros_like(v) for k, v in weights.items()}
    with pytest.raises(ValueError, match=r"the output '.*w.safetensors' is the input '.*w.safetensors': "
                                         r"refusing to overwrite it"):
        linnet._core.write_safetensors(w, zeros)
    # ... nor a file of the artifact it was loaded from.
    with pytest.raises(ValueError, match=r"is the input '.*runtime.json'"):
        linnet._core.write_safetensors(os.path.join(art, "runtime.json"), zeros)
    assert open(w, "rb").read() == before
    x = np.ones((2, 3), np.float32)
    np.testing.assert_allclose(m.call("forward", [x])[0], forward(weights, x), rtol=1e-5)
    del m  # the model is gone: the file is no one's input any more
    linnet._core.write_safetensors(w, zeros)
    assert open(w, "rb").read() != before


def test_check_output_directories(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "manifest.json").write_text('{"name": "my app"}')
    (site / "index.html").write_text("<html>")
    with pytest.raises(ValueError, match="holds a manifest.json that is not a linnet artifact's"):
        linnet._core.check_output(str(site), "artifact")
    linnet._core.check_output(str(site), "directory")  # files are added by name, none removed
    linnet._core.check_output(str(tmp_path / "new"), "artifact")
    with pytest.raises(ValueError, match="kind: expected 'file', 'directory' or 'artifact'"):
        linnet._core.check_output(str(site), "folder")


def test_module_rewrites_its_own_weights(mlp):
    # A LinnetModule rewrites its private weights file after a change while
    # its previous model still held it: it lets that model go first.
    art, weights = mlp
    m = linnet.load(art, weights={k: v.copy() for k, v in weights.items()}, mmap=False)
    x = np.ones((2, 3), np.float32)
    import torch
    np.testing.assert_allclose(m.forward(torch.from_numpy(x)).numpy(), forward(weights, x), rtol=1e-5)
    with torch.no_grad():
        m.fc2.weight.mul_(2)
    want = forward({"fc1.weight": weights["fc1.weight"], "fc2.weight": 2 * weights["fc2.weight"]}, x)
    np.testing.assert_allclose(m.forward(torch.from_numpy(x)).numpy(), want, rtol=1e-5)


TRUNCATED_RUN = textwrap.dedent("""
    import os, sys
    import numpy as np
    import linnet
    art, w, mmap = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
    m = linnet.Model(art, w, mmap=mmap)
    x = np.ones((2, 3), np.float32)
    before = m.call("forward", [x])[0]
    os.truncate(w, 0)  # another process truncates the weights during the run
    after = m.call("forward", [x])[0]
    print("same" if np.array_equal(before, after) else "different")
""")


@pytest.mark.parametrize("mmap", [False, True])
def test_weights_truncated_during_a_run(mlp, tmp_path, mmap):
    art, weights = mlp
    w = str(tmp_path / "w.safetensors")
    linnet._core.write_safetensors(w, weights)
    proc = subprocess.run([sys.executable, "-c", TRUNCATED_RUN, art, w, "1" if mmap else "0"],
                          capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    if mmap:
        # The documented contract: a mapped file must not change during a run.
        assert proc.returncode == -signal.SIGBUS, (proc.returncode, proc.stderr)
    else:
        assert proc.returncode == 0 and proc.stdout.strip() == "same", proc.stderr
