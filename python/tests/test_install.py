"""The package installs from the checkout into a virtual environment with no package index,
for Debian's /usr/bin/python3 and for another Python 3 first on PATH (pyenv on the CI
machines), as docs/python.md says: `pip install --no-build-isolation ./python`."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

CHECKOUT = Path(__file__).resolve().parents[2]


def interpreters():
    found = {"/usr/bin/python3": "/usr/bin/python3"}
    on_path = shutil.which("python3", path=os.environ.get("PATH"))
    if on_path and os.path.realpath(on_path) != os.path.realpath("/usr/bin/python3"):
        found["PATH"] = on_path
    return found


@pytest.mark.parametrize("interpreter", list(interpreters().values()), ids=list(interpreters()))
def test_pip_installs_the_package_into_a_venv_with_no_index(tmp_path, interpreter):
    venv = tmp_path / "venv"
    subprocess.run([interpreter, "-m", "venv", str(venv)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["LOOM_BUILD_DIR"] = os.environ.get("LOOM_TEST_BIN_DIR", str(CHECKOUT / "build/release"))
    env["PIP_NO_INDEX"] = "1"
    install = subprocess.run([str(venv / "bin/pip"), "install", "--no-build-isolation",
                              str(CHECKOUT / "python")], env=env, capture_output=True, text=True)
    assert install.returncode == 0, install.stdout + install.stderr
    program = (
        "import loom, os\n"
        "app = loom.App(home='h')\n"
        "@app.workflow('w')\n"
        "def w(ctx, input):\n"
        "    return ctx.step('s', lambda: input + 1)\n"
        "print(app.run('w', 41).output, os.path.dirname(loom.__file__))\n")
    out = subprocess.run([str(venv / "bin/python"), "-c", program], cwd=tmp_path, env=env,
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    answer, where = out.stdout.split()
    assert answer == "42" and where.startswith(str(venv))
    stubs = list((venv / "lib").glob("python3*/site-packages/loom/_native.pyi"))
    assert stubs and list((venv / "lib").glob("python3*/site-packages/loom/py.typed"))
