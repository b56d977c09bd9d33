"""The PEP 517 build backend of the `loom` package: no setuptools, no wheel, no index.

build_wheel builds the native module loom._native with the project's CMake for the
interpreter running this backend (its headers, its extension suffix), then packs it with the
pure-Python files of loom/ into a wheel tagged for that interpreter.

Where it builds:
  - LOOM_BUILD_DIR=<dir>: an existing build of the project (e.g. build/release), whose
    `loom_python` target is built and taken when its extension suffix matches this
    interpreter's; the tests install this way, to reuse the build they just made.
  - otherwise <checkout>/build/python-<tag>, configured here (Release, Ninja when present,
    tests and benchmarks off). The first install builds the whole core: minutes on 2 cores.
"""

from __future__ import annotations

import base64
import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path
from typing import Dict, List, Optional

NAME = "loom"
VERSION = "0.2.0"
HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent


def _tag() -> str:
    interpreter = f"cp{sys.version_info.major}{sys.version_info.minor}"
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{interpreter}-{interpreter}-{platform}"


def _suffix() -> str:
    return sysconfig.get_config_var("EXT_SUFFIX") or ".so"


def _run(command: List[str]) -> None:
    print("loom_build:", " ".join(command), file=sys.stderr, flush=True)
    subprocess.run(command, check=True)


def _native_module() -> Path:
    given = os.environ.get("LOOM_BUILD_DIR")
    build = Path(given).resolve() if given else CHECKOUT / "build" / f"python-{_tag()}"
    if not given and not (build / "CMakeCache.txt").exists():
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        _run(["cmake", "-S", str(CHECKOUT), "-B", str(build), *generator,
              "-DCMAKE_BUILD_TYPE=Release", "-DLOOM_BUILD_TESTS=OFF", "-DLOOM_BUILD_BENCH=OFF",
              "-DLOOM_BUILD_PYTHON=ON", f"-DLOOM_PYTHON={sys.executable}"])
    jobs = os.environ.get("LOOM_BUILD_JOBS", str(os.cpu_count() or 2))
    _run(["cmake", "--build", str(build), "--target", "loom_python", "--parallel", jobs])
    module = build / "python" / "loom" / f"_native{_suffix()}"
    if not module.exists():
        raise RuntimeError(
            f"loom_build: {module} was not built: the build at {build} is for another Python "
            f"(this one is {sys.executable}, extension suffix {_suffix()}); unset "
            f"LOOM_BUILD_DIR to build for this interpreter")
    return module


def _metadata() -> str:
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {VERSION}\n"
            "Summary: Durable execution for AI agents and workflows, on Loom's native core\n"
            "Requires-Python: >=3.9\n")


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def _write_wheel(directory: str, files: Dict[str, bytes]) -> str:
    dist_info = f"{NAME}-{VERSION}.dist-info"
    files[f"{dist_info}/METADATA"] = _metadata().encode()
    files[f"{dist_info}/WHEEL"] = (f"Wheel-Version: 1.0\nGenerator: loom_build\n"
                                   f"Root-Is-Purelib: false\nTag: {_tag()}\n").encode()
    record = [_record_line(p, d) for p, d in files.items()] + [f"{dist_info}/RECORD,,"]
    files[f"{dist_info}/RECORD"] = ("\n".join(record) + "\n").encode()
    name = f"{NAME}-{VERSION}-{_tag()}.whl"
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as wheel:
        for path, data in files.items():
            info = zipfile.ZipInfo(path, date_time=(2026, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if path.endswith(_suffix()) else 0o644) << 16
            wheel.writestr(info, data, zipfile.ZIP_DEFLATED)
    return name


def build_wheel(wheel_directory: str, config_settings: Optional[dict] = None,
                metadata_directory: Optional[str] = None) -> str:
    module = _native_module()
    files: Dict[str, bytes] = {}
    for source in sorted((HERE / NAME).iterdir()):
        if source.is_file() and (source.suffix in (".py", ".pyi") or source.name == "py.typed"):
            files[f"{NAME}/{source.name}"] = source.read_bytes()
    files[f"{NAME}/{module.name}"] = module.read_bytes()
    return _write_wheel(wheel_directory, files)


def get_requires_for_build_wheel(config_settings: Optional[dict] = None) -> List[str]:
    return []


def prepare_metadata_for_build_wheel(metadata_directory: str,
                                     config_settings: Optional[dict] = None) -> str:
    dist_info = Path(metadata_directory) / f"{NAME}-{VERSION}.dist-info"
    dist_info.mkdir(parents=True, exist_ok=True)
    (dist_info / "METADATA").write_text(_metadata())
    (dist_info / "WHEEL").write_text(f"Wheel-Version: 1.0\nGenerator: loom_build\n"
                                     f"Root-Is-Purelib: false\nTag: {_tag()}\n")
    return dist_info.name
