"""linnet.Model.profile: the profile library (LinnetProfile) from Python."""
import json
import os
import subprocess

import numpy as np
import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(scope="module")
def profiled(tmp_path_factory, mlp):
    _, w, _ = mlp
    art = str(tmp_path_factory.mktemp("prof") / "mlp")
    subprocess.run([_compiler.linnet_bin(), "build", os.path.join(ROOT, "examples", "mlp.ln"),
                    "--root", "MLP", "-D", "In=3", "-D", "Hidden=5", "-D", "Out=2", "--target", "cpu",
                    "--profile", "-o", art], check=True, capture_output=True)
    return art, w


def test_profile_measures_every_command(profiled):
    art, w = profiled
    m = linnet.Model(art, w)
    x = np.ones((4, 3), np.float32)
    r = m.profile("forward", [x], iterations=3, warmup=1)
    assert r["command_timers"] is True and r["dropped_events"] == 0
    obs = json.loads(r["observations"])
    assert obs["source"] == "measured" and obs["subject"]["entry"] == "forward"
    metrics = {(rec["command"], rec["metric"]) for rec in obs["records"]}
    assert ("linnet_entry_forward", "call_ns") in metrics
    assert ("linnet_entry_forward", "attributed_ns") in metrics
    commands = {c for c, metric in metrics if metric == "duration_ns"}
    assert commands and all(c.startswith("cmd.") for c in commands)
    trace = json.loads(r["trace"])
    assert trace["otherData"]["source"] == "measured"
    calls = [e for e in trace["traceEvents"] if e.get("cat") == "entry"]
    timed = [e for e in trace["traceEvents"] if e.get("cat") == "command"]
    assert len(calls) == 3 and len(timed) >= 3 * len(commands)
    assert all(":" in e["args"]["source"] for e in timed)
    # The calls ran: the model still answers as before.
    np.testing.assert_allclose(m.call("forward", [x])[0], linnet.Model(art, w).call("forward", [x])[0])


def test_profile_without_timers_and_errors(mlp):
    art, w, _ = mlp
    m = linnet.Model(art, w)
    r = m.profile("forward", [np.ones((2, 3), np.float32)], iterations=2)
    assert r["command_timers"] is False
    assert [rec["metric"] for rec in json.loads(r["observations"])["records"]] == ["call_ns"]
    with pytest.raises(ValueError, match="iterations must be at least 1"):
        m.profile("forward", [np.ones((2, 3), np.float32)], iterations=0)
    with pytest.raises(TypeError, match="input 'x': expected dtype f32, found f64"):
        m.profile("forward", [np.ones((2, 3))])
