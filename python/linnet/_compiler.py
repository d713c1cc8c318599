"""Compiling `.ln` sources into CPU artifacts with the `linnet` executable.

The compiler is the `linnet` command-line tool: `$LINNET_BIN` when set, the
one a wheel carries (linnet/bin), the one of the build tree this package was
staged from, or the installed one.
Artifacts come from the compiler's one artifact cache (`linnet build
--cached`, the cache `linnet run MODEL.ln` uses too): it keys them on the
compiler's build id, the host CPU, the source and the files it imports, the
options and the weights' tensor names, keeps them under `$LINNET_CACHE_DIR`
(default `$XDG_CACHE_HOME/linnet` or `~/.cache/linnet`, made 0700; a
directory others can write is refused), and rebuilds a damaged entry.
Nothing here computes keys or lays out entries.
"""

import os
import shutil
import subprocess

from . import _config


class CompileError(RuntimeError):
    """`linnet build` refused a program; the message is its diagnostics."""


def linnet_bin():
    """Path of the `linnet` executable this package drives."""
    env = os.environ.get("LINNET_BIN")
    if env:
        if not os.access(env, os.X_OK):
            raise FileNotFoundError(f"LINNET_BIN={env!r} is not an executable file")
        return env
    # A wheel carries its compiler: linnet/bin/linnet.
    here = os.path.dirname(os.path.abspath(__file__))
    carried = os.path.join(here, "bin", "linnet")
    if os.access(carried, os.X_OK):
        return carried
    # Installed: <prefix>/lib/python3.X/dist-packages/linnet -> <prefix>/bin/linnet.
    beside = os.path.normpath(os.path.join(here, "..", "..", "..", "..", "bin", "linnet"))
    staged = os.path.realpath(here) == os.path.realpath(_config.BUILD_PACKAGE_DIR)
    order = ((_config.BUILD_LINNET_BIN, beside) if staged else (beside, _config.BUILD_LINNET_BIN))
    for candidate in order + (_config.INSTALL_LINNET_BIN,):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    found = shutil.which("linnet")
    if found:
        return found
    raise FileNotFoundError(
        "cannot find the linnet compiler: set LINNET_BIN to build/bin/linnet "
        f"(looked at {_config.BUILD_LINNET_BIN}, {beside}, {_config.INSTALL_LINNET_BIN} and PATH)")


def _run(args, stdin=None):
    proc = subprocess.run(args, input=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        raise CompileError(
            f"`{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(args))}` "
            f"failed (exit {proc.returncode}):\n{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _options(root, dims):
    dims = dict(dims or {})
    for k, v in dims.items():
        if not isinstance(k, str) or not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"dims: expected str -> int, found {k!r}: {v!r}")
    # Built for this machine's CPU: the cache's artifacts run where built.
    args = ["--target", "cpu-native"]
    if root:
        args += ["--root", root]
    for k, v in sorted(dims.items()):
        args += ["-D", f"{k}={v}"]
    return args


def _cached(args, stdin=None):
    """`linnet build --cached ...`: the artifact directory it prints."""
    out = _run([linnet_bin(), "build"] + args + ["--cached"], stdin).strip().splitlines()
    if not out:
        raise CompileError("`linnet build --cached` printed no artifact directory")
    return out[-1]


def build_source(text, *, name="model", root=None, dims=None):
    """Compiles `.ln` source text for the CPU; returns the artifact directory
    (cached; the text is kept in the cache as `name`.ln, its imports resolve
    to the standard library). `dims` binds the root block's generics
    (`-D Name=value`)."""
    return _cached(["-", "--source-name", name] + _options(root, dims), stdin=text)


def build_file(path, *, root=None, dims=None, weights=None, binding=None, numerics=None):
    """Compiles a `.ln` file (its imports resolve next to it); cached.
    `weights` (a .safetensors path) decides which optional tensors are
    present; without it they are absent. `numerics`: "as-written" (the
    default) or "f32-compute" (f16/bf16 computed in f32; language §8.4)."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such .ln file: {path}")
    args = [path] + _options(root, dims)
    if weights:
        args += ["--weights", os.path.abspath(weights)]
    if weights and binding:
        args += ["--binding", os.path.abspath(binding)]
    if numerics:
        if numerics not in ("as-written", "f32-compute"):
            raise ValueError(f"numerics must be 'as-written' or 'f32-compute', not {numerics!r}")
        args += ["--numerics", numerics]
    return _cached(args)


def plan_file(path, *, root=None, dims=None):
    """The JSON plan of a `.ln` file (`linnet plan`)."""
    import json
    args = [linnet_bin(), "plan", os.path.abspath(path)]
    if root:
        args += ["--root", root]
    for k, v in sorted(dict(dims or {}).items()):
        args += ["-D", f"{k}={v}"]
    return json.loads(_run(args))
