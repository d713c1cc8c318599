"""linnet.Model.call_distributed: a distributed artifact from Python, one
process a rank of an MPI job (LinnetDistributed)."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

import linnet
from linnet import _compiler

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURE = os.path.join(ROOT, "test", "Distributed", "Inputs", "fixture.ln")

pytestmark = pytest.mark.skipif(not linnet._core.has_distributed or not shutil.which("mpirun"),
                                reason="needs a linnet built with MPI and OpenMPI's mpirun")

SCRIPT = r"""
import sys
import numpy as np
import linnet
from linnet import _core
n, f = 64, 4
rp = (3 * np.arange(n + 1)).astype(np.int64)
ci = np.stack([(np.arange(n) - 1) % n, (np.arange(n) + 1) % n, (np.arange(n) + 7) % n], 1).reshape(-1).astype(np.int64)
x = (10 * np.arange(n)[:, None] + np.arange(f)[None, :]).astype(np.int64)
m = linnet.Model(sys.argv[1])
rank, size = _core.distributed_rank(), _core.distributed_size()
log = open(f"{sys.argv[2]}/rank{rank}.txt", "w")  # mpirun interleaves the ranks' stdout
def say(line):
    print(line, file=log, flush=True)
out = m.call_distributed("count", [rp, ci, x] if rank == 0 else [])
if rank == 0:
    want = 3 * x[ci].reshape(n, 3, f).sum(1)
    say(f"rank 0 of {size}: {'match' if np.array_equal(out[0], want) else 'differ'}")
else:
    say(f"rank {rank} of {size}: {out}")
# A relation rank 0 refuses: every rank raises, and goes on.
bad = ci.copy()
bad[5] = n + 100
try:
    m.call_distributed("count", [rp, bad, x] if rank == 0 else [])
except ValueError as e:
    say(f"rank {rank}: refused: {e}")
_core.distributed_finalize()
"""


def mpirun(n):
    cmd = ["mpirun", "-n", str(n), "--oversubscribe", "--bind-to", "none"]
    env = dict(os.environ)
    if os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    return cmd + ["-x", "PYTHONPATH"], env


@pytest.fixture(scope="module")
def r2(tmp_path_factory):
    art = str(tmp_path_factory.mktemp("dist") / "r2")
    subprocess.run([_compiler.linnet_bin(), "build", FIXTURE, "--ranks", "2", "-o", art],
                   check=True, capture_output=True)
    return art


def test_two_ranks(r2, tmp_path):
    cmd, env = mpirun(2)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    p = subprocess.run(cmd + [sys.executable, "-c", SCRIPT, r2, str(tmp_path)], capture_output=True, text=True,
                       env=env, timeout=300)
    assert p.returncode == 0, p.stderr
    lines = sorted((tmp_path / "rank0.txt").read_text().splitlines() +
                   (tmp_path / "rank1.txt").read_text().splitlines())
    assert lines[0] == "rank 0 of 2: match"
    assert lines[1].startswith("rank 0: refused: rank 0: ") and "col_idx" in lines[1]
    assert lines[2] == "rank 1 of 2: None"
    assert lines[3] == "rank 1: refused: rank 0 refused the inputs"


def test_one_process_is_refused(r2):
    m = linnet.Model(r2)
    with pytest.raises(ValueError, match="planned for 2 ranks"):
        m.call_distributed("count", [np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros((0, 4), np.int64)])
    with pytest.raises(ValueError, match="timeout must be positive"):
        m.call_distributed("count", [], timeout=0)
