# -*- Python -*-
import os

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "linnet"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".ln", ".mlir", ".test"]
config.excludes = ["Inputs", "unit", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.linnet_obj_root, "test")

llvm_config.use_default_substitutions()
config.substitutions.append(("%linnet_src", config.linnet_src_root))
config.substitutions.append(("%examples", os.path.join(config.linnet_src_root, "examples")))
config.substitutions.append(("%python", config.python_executable))
config.substitutions.append(("%linnet_obj", config.linnet_obj_root))
config.substitutions.append(("%linnet_bin", os.path.join(config.linnet_tools_dir, "linnet")))
# ASan + UBSan builds (scripts/sanitize): a program linked against their
# shared runtime library needs the sanitizer runtime too.
if getattr(config, "linnet_sanitized", False):
    config.available_features.add("sanitized")
# linnet run --ranks N needs OpenMPI's mpirun (test/Distributed).
import shutil
if shutil.which("mpirun"):
    config.available_features.add("mpi")
    # %mpirun: a job of programs other than linnet (the C API, Python), on
    # any machine size, as root too.
    mpirun = "mpirun --oversubscribe --bind-to none"
    if os.geteuid() == 0:
        mpirun += " --allow-run-as-root"
        config.environment["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        config.environment["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    config.substitutions.append(("%mpirun", mpirun))
# The CUDA target writes cubins where ptxas is (CUDA's toolkit; PTX only
# otherwise): test/Target/CUDA pins both.
if shutil.which("ptxas") or os.path.exists("/usr/local/cuda/bin/ptxas") or os.environ.get("LINNET_PTXAS"):
    config.available_features.add("ptxas")

tool_dirs = [config.linnet_tools_dir, config.llvm_tools_dir]
tools = ["linnet", ToolSubst("linnet-opt", unresolved="ignore"),
         ToolSubst("linnet-translate", unresolved="ignore")]
llvm_config.add_tool_substitutions(tools, tool_dirs)
# `linnet run MODEL.ln` builds into the artifact cache, which has no shared
# fallback, and lit passes no HOME: the suite's own cache, in the build tree.
config.environment["LINNET_CACHE_DIR"] = os.path.join(config.linnet_obj_root, "test", "artifact-cache")
llvm_config.with_environment("PATH", config.linnet_tools_dir, append_path=True)
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)
