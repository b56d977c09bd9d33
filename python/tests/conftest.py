"""Shared fixtures of the Python package's tests (run by ctest: python/CMakeLists.txt)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import List

import pytest


@pytest.fixture
def home(tmp_path: Path) -> str:
    return str(tmp_path / "home")


@pytest.fixture
def loom_bin() -> str:
    """The real `loom` binary of this build: what an operator runs on the same home."""
    return os.path.join(os.environ.get("LOOM_TEST_BIN_DIR", "build/release"), "loom")


def loom_json(loom_bin: str, home: str, *args: str) -> object:
    out = subprocess.run([loom_bin, "--home", home, *args], capture_output=True, text=True)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def write_module(folder: Path, name: str, source: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return path


def run_python(folder: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    """`python <args>` in `folder`, by this interpreter, with this test's import path."""
    env = dict(os.environ)
    inherited = [os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *inherited])
    return subprocess.run([sys.executable, *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=timeout)


def witness_lines(path: Path) -> List[str]:
    return path.read_text().splitlines() if path.exists() else []
