import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = os.path.join(os.path.dirname(HERE), "examples", "seed_weighted_aggregation.py")


def test_seed_program_runs_unchanged():
    import linnet  # noqa: F401 - the package this run resolves
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
    proc = subprocess.run([sys.executable, SEED], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["output: [23.0, 6.0, 0.0]",
                                        "d(sum(output))/dx: [4.0, 7.0]"]
