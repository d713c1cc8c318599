"""Compiling `.ln` sources into CPU artifacts with the `linnet` executable.

The compiler is the `linnet` command-line tool: the one of the build tree this
package was staged from, or the installed one, or `$LINNET_BIN` when set.
Artifacts are cached by the SHA-256 of everything that decides them (the
source text, the imports' directory contents are not tracked: the standard
library ships with the compiler), the root block, the dims and the compiler
binary itself, under `$LINNET_CACHE_DIR` (default `~/.cache/linnet`).
"""

import hashlib
import os
import shutil
import subprocess
import tempfile

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
    # Installed: <prefix>/lib/python3.X/dist-packages/linnet -> <prefix>/bin/linnet.
    here = os.path.dirname(os.path.abspath(__file__))
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


def cache_dir():
    d = os.environ.get("LINNET_CACHE_DIR") or os.path.join(
        os.path.expanduser("~"), ".cache", "linnet")
    os.makedirs(d, exist_ok=True)
    return d


_bin_digests = {}


def _bin_digest(path):
    st = os.stat(path)
    key = (path, st.st_mtime_ns, st.st_size)
    if key not in _bin_digests:
        h = hashlib.sha256()
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
        _bin_digests[key] = h.hexdigest()
    return _bin_digests[key]


def _run(args):
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise CompileError(
            f"`{' '.join(os.path.basename(a) if i == 0 else a for i, a in enumerate(args))}` "
            f"failed (exit {proc.returncode}):\n{proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def build_source(text, *, name="model", root=None, dims=None, extra_key=""):
    """Compiles `.ln` source text for the CPU; returns the artifact directory
    (cached). `dims` binds the root block's generics (`-D Name=value`)."""
    binary = linnet_bin()
    dims = dict(dims or {})
    for k, v in dims.items():
        if not isinstance(k, str) or not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"dims: expected str -> int, found {k!r}: {v!r}")
    h = hashlib.sha256()
    for part in (text, name, root or "", repr(sorted(dims.items())), extra_key,
                 _bin_digest(binary)):
        h.update(part.encode())
        h.update(b"\0")
    key = h.hexdigest()[:32]
    out = os.path.join(cache_dir(), f"{name}-{key}")
    if os.path.isfile(os.path.join(out, "manifest.json")):
        return out
    with tempfile.TemporaryDirectory(dir=cache_dir(), prefix=".build-") as tmp:
        src = os.path.join(tmp, f"{name}.ln")
        with open(src, "w") as f:
            f.write(text)
        _build_into(tmp, out, [binary, "build", src], root, dims)
    return out


def _build_into(tmp, out, command, root, dims, extra=()):
    """Runs `command` (linnet build SOURCE) into tmp/art with --root and -D,
    then moves the artifact to `out` whole."""
    art = os.path.join(tmp, "art")
    args = list(command) + ["--target", "cpu", "-o", art] + list(extra)
    if root:
        args += ["--root", root]
    for k, v in sorted(dims.items()):
        args += ["-D", f"{k}={v}"]
    _run(args)
    try:
        os.rename(art, out)
    except OSError:
        # Another process built the same artifact first: use theirs.
        if not os.path.isfile(os.path.join(out, "manifest.json")):
            raise


def safetensors_names(path):
    """The tensor names in a .safetensors file's header."""
    import json
    import struct
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise ValueError(f"{path}: not a safetensors file")
        (n,) = struct.unpack("<Q", head)
        if n > os.path.getsize(path) - 8:
            raise ValueError(f"{path}: header size {n} exceeds the file")
        header = json.loads(f.read(n))
    return sorted(k for k in header if k != "__metadata__")


def build_file(path, *, root=None, dims=None, weights=None, binding=None):
    """Compiles a `.ln` file (its imports resolve next to it); cached by its
    text. `weights` (a .safetensors path) decides which optional tensors
    are present; without it they are absent."""
    path = os.path.abspath(path)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"no such .ln file: {path}")
    binary = linnet_bin()
    dims = dict(dims or {})
    with open(path) as f:
        text = f.read()
    names = repr(safetensors_names(weights)) if weights else ""
    if binding:
        with open(binding) as f:
            names += "\0" + f.read()
    h = hashlib.sha256()
    for part in (path, text, root or "", repr(sorted(dims.items())), names, _bin_digest(binary)):
        h.update(part.encode())
        h.update(b"\0")
    base = os.path.splitext(os.path.basename(path))[0]
    out = os.path.join(cache_dir(), f"{base}-{h.hexdigest()[:32]}")
    if os.path.isfile(os.path.join(out, "manifest.json")):
        return out
    extra = []
    if weights:
        extra += ["--weights", os.path.abspath(weights)]
    if weights and binding:
        extra += ["--binding", os.path.abspath(binding)]
    with tempfile.TemporaryDirectory(dir=cache_dir(), prefix=".build-") as tmp:
        _build_into(tmp, out, [binary, "build", path], root, dims, extra)
    return out


def plan_file(path, *, root=None, dims=None):
    """The JSON plan of a `.ln` file (`linnet plan`)."""
    import json
    args = [linnet_bin(), "plan", os.path.abspath(path)]
    if root:
        args += ["--root", root]
    for k, v in sorted(dict(dims or {}).items()):
        args += ["-D", f"{k}={v}"]
    return json.loads(_run(args))
