"""The Python package builds through the compiler's one artifact cache
(linnet build --cached, linnet/Compiler/ArtifactCache.h): the entries
`linnet run MODEL.ln` uses, the same refusals, the same repairs."""
import os
import shutil
import stat
import subprocess

import numpy as np
import pytest
import torch

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
INPUTS = os.path.join(ROOT, "test", "Runtime", "Inputs", "cache")


@pytest.fixture
def model(tmp_path, monkeypatch):
    """model.ln and the helper.ln it imports, in a folder of their own, and
    a private cache."""
    d = tmp_path / "m"
    d.mkdir()
    for f in ("model.ln", "helper.ln"):
        shutil.copy(os.path.join(INPUTS, f), d / f)
    monkeypatch.setenv("LINNET_CACHE_DIR", str(tmp_path / "cache"))
    return d / "model.ln"


def linnet_run(path, *args):
    # No --target: run's default (cpu-native) is the target Python builds.
    return subprocess.run([_compiler.linnet_bin(), "run", str(path), "--root", "M", "-D", "N=3",
                           "--entry", "main"] + list(args),
                          capture_output=True, text=True)


def test_python_and_linnet_share_entries(model, tmp_path):
    art = _compiler.build_file(str(model), root="M", dims={"N": 3})
    assert os.path.dirname(art) == str(tmp_path / "cache")
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    # The same key: linnet run finds Python's entry and builds nothing.
    r = linnet_run(model, "--input", f"x={tmp_path / 'x.npy'}")
    assert r.returncode == 0, r.stderr
    assert "building" not in r.stderr
    assert os.listdir(tmp_path / "cache") == [os.path.basename(art)]


def test_an_import_change_is_another_entry(model):
    x = torch.arange(3.0)
    torch.testing.assert_close(linnet.compile(str(model), root="M", dims={"N": 3}).main(x),
                               torch.tensor([0.0, 2.0, 4.0]))
    helper = model.parent / "helper.ln"
    helper.write_text(helper.read_text().replace("2.0", "3.0"))
    # Python used to key on the model's text alone and ran the stale entry.
    torch.testing.assert_close(linnet.compile(str(model), root="M", dims={"N": 3}).main(x),
                               torch.tensor([0.0, 3.0, 6.0]))


def test_a_damaged_entry_is_rebuilt(model):
    art = _compiler.build_file(str(model), root="M", dims={"N": 3})
    with open(os.path.join(art, "model.so"), "r+b") as f:
        f.truncate(1000)
    # Rebuilt in place (it was an error until the entry was deleted by hand).
    assert _compiler.build_file(str(model), root="M", dims={"N": 3}) == art
    torch.testing.assert_close(linnet.load(art).main(torch.arange(3.0)), torch.tensor([0.0, 2.0, 4.0]))


def test_a_cache_others_can_write_is_refused(model, tmp_path):
    cache = tmp_path / "cache"
    cache.mkdir()
    os.chmod(cache, 0o777)
    with pytest.raises(_compiler.CompileError, match=r"writable by others \(mode 0777\): refusing"):
        _compiler.build_file(str(model), root="M", dims={"N": 3})
    assert os.listdir(cache) == []


def test_traced_sources_are_kept_and_found_again(model, tmp_path):
    text = (model.parent / "model.ln").read_text().replace("import helper.{scale}", "") \
        .replace("scale(x[i])", "x[i] + 1.0")
    a = _compiler.build_source(text, name="traced", root="M", dims={"N": 3})
    assert _compiler.build_source(text, name="traced", root="M", dims={"N": 3}) == a
    cache = tmp_path / "cache"
    for d in [cache] + [cache / n for n in os.listdir(cache)]:
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700, d
    # The text is kept in the cache; linnet run of it finds the same entry.
    (src,) = [os.path.join(r, f) for r, _, fs in os.walk(cache / "sources") for f in fs]
    assert open(src).read() == text
    np.save(tmp_path / "x.npy", np.arange(3, dtype=np.float32))
    r = linnet_run(src, "--input", f"x={tmp_path / 'x.npy'}")
    assert r.returncode == 0, r.stderr
    assert "building" not in r.stderr
