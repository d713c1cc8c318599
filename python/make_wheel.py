"""make_wheel.py BUILD_DIR OUT_DIR VERSION: the linnet Python package as a
wheel (`cmake --build BUILD_DIR --target linnet_wheel`), installable with
`pip install` and no package index: the staged package of BUILD_DIR/python
(linnet with its _core module, tiga), the `linnet` compiler it drives in
linnet/bin, and the standard library and target files in
linnet/share/linnet, where that compiler looks for them. The zip is
deterministic: sorted entries, fixed times."""
import base64
import hashlib
import os
import sys
import sysconfig
import zipfile

build, out, version = sys.argv[1], sys.argv[2], sys.argv[3]
staged = os.path.join(build, "python")
files = []  # (name in the wheel, bytes, executable)


def add_tree(src, dest, keep):
    for root, dirs, names in os.walk(src):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for n in sorted(names):
            if keep(n):
                path = os.path.join(root, n)
                rel = os.path.relpath(path, src)
                with open(path, "rb") as f:
                    files.append((f"{dest}/{rel}", f.read(), os.access(path, os.X_OK)))


add_tree(os.path.join(staged, "linnet"), "linnet",
         lambda n: (n.endswith(".py") and n != "_config.py") or n.endswith(".so"))
add_tree(os.path.join(staged, "tiga"), "tiga", lambda n: n.endswith(".py"))
add_tree(os.path.join(build, "share", "linnet"), "linnet/share/linnet", lambda n: True)
with open(os.path.join(build, "bin", "linnet"), "rb") as f:
    files.append(("linnet/bin/linnet", f.read(), True))
# The wheel's package finds its compiler beside it (linnet/bin), never a
# build tree.
files.append(("linnet/_config.py", b'# Written by make_wheel.py.\nBUILD_PACKAGE_DIR = ""\n'
              b'BUILD_LINNET_BIN = ""\nINSTALL_LINNET_BIN = ""\n', False))

py = f"cp{sys.version_info.major}{sys.version_info.minor}"
platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
tag = f"{py}-{py}-{platform}"
dist = f"linnet-{version}.dist-info"
files.append((f"{dist}/METADATA", (
    "Metadata-Version: 2.1\nName: linnet\nVersion: %s\n"
    "Summary: An ahead-of-time compiler for neural-network models and graph computations\n"
    "Requires-Python: ==%d.%d.*\nRequires-Dist: numpy\n" % (version, *sys.version_info[:2])).encode(), False))
files.append((f"{dist}/WHEEL", (
    "Wheel-Version: 1.0\nGenerator: linnet make_wheel.py\nRoot-Is-Purelib: false\nTag: %s\n" % tag).encode(),
    False))
files.sort(key=lambda f: f[0])


def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


record = "".join(f"{name},{digest(data)},{len(data)}\n" for name, data, _ in files) + f"{dist}/RECORD,,\n"
files.append((f"{dist}/RECORD", record.encode(), False))

os.makedirs(out, exist_ok=True)
wheel = os.path.join(out, f"linnet-{version}-{tag}.whl")
with zipfile.ZipFile(wheel + ".tmp", "w", zipfile.ZIP_DEFLATED) as z:
    for name, data, executable in files:
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = (0o100755 if executable else 0o100644) << 16
        info.compress_type = zipfile.ZIP_DEFLATED
        z.writestr(info, data)
os.replace(wheel + ".tmp", wheel)
print(wheel)
