"""app.worker(): the Executor in a Python process; and `python -m loom --app` for a shell."""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import loom
from conftest import loom_json, run_python, write_module


def test_two_hundred_concurrent_runs_with_python_tools_all_complete_none_twice(home):
    witness = collections.Counter()
    lock = threading.Lock()
    app = loom.App(home=home)

    @app.tool()
    def fetch(run: str, page: int):
        time.sleep(0.005)
        with lock:
            witness[(run, page)] += 1
        return {"page": page}

    class PerRun:
        id = "per-run"

        def complete(self, request):
            prompt = request["messages"][0]["content"]
            done = sum(1 for m in request["messages"] if m["role"] == "tool")
            if done == 3:
                return {"role": "assistant", "content": "read " + prompt}
            return {"role": "assistant", "toolCalls": [
                {"id": f"c{done}", "name": "fetch", "arguments": {"run": prompt, "page": done}}]}

    app.agent("reader", model=PerRun(), tools=[fetch])
    ids = [app.submit("reader", f"run-{i}").id for i in range(200)]
    reports = []
    with app.worker(concurrency=200, poll_ms=50, on_run=reports.append) as worker:
        deadline = time.monotonic() + 120
        while len(app.runs(status="completed")) < 200 and time.monotonic() < deadline:
            time.sleep(0.1)
    rows = {r["id"]: r["status"] for r in app.runs()}
    assert [rows[i] for i in ids] == ["completed"] * 200
    assert len(witness) == 600 and set(witness.values()) == {1}
    assert len(reports) == 200 and {r["outcome"] for r in reports} == {"completed"}


def test_a_stopped_worker_leaves_its_unfinished_runs_resumable(home):
    app = loom.App(home=home)
    release = threading.Event()

    @app.workflow("slow")
    def slow(ctx, input):
        ctx.step("first", lambda: 1)
        ctx.step("wait", lambda: release.wait(5) and 2)
        return ctx.step("last", lambda: 3)

    run = app.submit("slow")
    worker = app.worker(poll_ms=20, drain_seconds=0.2).start()
    deadline = time.monotonic() + 10
    while worker.active == 0 and time.monotonic() < deadline:
        time.sleep(0.01)
    worker.stop()  # drains 0.2 s, then releases the run; its next append is refused
    release.set()
    time.sleep(0.2)
    assert app.resume(run.id).output == 3


def test_run_until_idle_runs_what_is_runnable_and_returns(home):
    app = loom.App(home=home)

    @app.workflow("quick")
    def quick(ctx, input):
        return ctx.step("s", lambda: input * 2)

    for i in range(5):
        app.submit("quick", i)
    tally = app.worker(concurrency=2).run_until_idle()
    assert tally == {"runs": 5, "start_failed": 0, "store_failed": False}
    assert sorted(r["status"] for r in app.runs()) == ["completed"] * 5


APP_MODULE = """
    import loom
    app = loom.App(home="home")

    @app.workflow("double")
    def double(ctx, input):
        value = ctx.step("double", lambda: input * 2)
        plus = ctx.wait_for_signal("plus")
        return ctx.step("again", lambda: value + plus)
"""


def test_python_dash_m_loom_gives_the_whole_command_line_for_the_apps_workflows(tmp_path,
                                                                                 loom_bin):
    write_module(tmp_path, "doubling", APP_MODULE)
    started = run_python(tmp_path, "-m", "loom", "--app", "doubling:app", "run", "double",
                         "--input", "21", "--json")
    assert started.returncode == 0, started.stderr
    run = json.loads(started.stdout)
    assert (run["status"], run["waitingFor"]) == ("parked", "plus")
    done = run_python(tmp_path, "-m", "loom", "--app", "doubling:app", "signal", run["id"],
                      "plus", "1", "--json")
    assert json.loads(done.stdout)["output"] == 43, done.stderr
    rows = loom_json(loom_bin, str(tmp_path / "home"), "ls", "--json")
    assert [r["status"] for r in rows] == ["completed"]
    submitted = run_python(tmp_path, "-m", "loom", "--app", "doubling:app", "run", "double",
                           "--input", "1", "--submit", "--json")
    worker = run_python(tmp_path, "-m", "loom", "--app", "doubling:app", "worker", "--once")
    assert worker.returncode == 0 and "parked" in worker.stdout, worker.stdout + worker.stderr
    assert json.loads(submitted.stdout)["id"] in worker.stdout


def test_python_dash_m_loom_names_a_bad_app(tmp_path):
    out = run_python(tmp_path, "-m", "loom", "--app", "nosuchmodule:app", "ls")
    assert out.returncode != 0 and "cannot import nosuchmodule" in out.stderr
    write_module(tmp_path, "notanapp", "app = 3\n")
    out = run_python(tmp_path, "-m", "loom", "--app", "notanapp:app", "ls")
    assert "notanapp.app is not a loom.App" in out.stderr
    out = run_python(tmp_path, "-m", "loom", "--app", "notanapp:app", "bogus")
    assert out.returncode != 0


def test_the_command_lines_home_wins_over_the_apps(tmp_path, loom_bin):
    write_module(tmp_path, "doubling", APP_MODULE)
    other = tmp_path / "other-home"
    out = run_python(tmp_path, "-m", "loom", "--app", "doubling:app", "--home", str(other),
                     "run", "double", "--input", "1", "--json")
    assert out.returncode == 0, out.stderr
    assert [r["workflow"] for r in loom_json(loom_bin, str(other), "ls", "--json")] == ["double"]
    assert not (tmp_path / "home").exists()


def _python_env(folder: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(folder), *[os.path.abspath(p) for p in
                                         env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    return env


_VERSIONED_WORKER = """
    import sys, time
    import loom

    version, home, url, schema = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    config = {"storage": {"url": url, "schema": schema}} if url else None
    app = loom.App(config, home=home, version=version)

    @app.workflow("job")
    def job(ctx, input):
        return ctx.step("work", lambda: {"ranOn": version, "recorded": input})

    for i in range(15):
        app.submit("job", version, id=f"{version}-{i}")
    deadline = time.time() + 90
    with app.worker(concurrency=4):
        while time.time() < deadline:
            runs = app.runs()
            if len(runs) == 30 and all(r["status"] == "completed" for r in runs):
                break
            time.sleep(0.1)
    print("done")
"""


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_two_workers_of_two_versions_share_a_home_and_each_runs_only_its_own(
        backend, home, tmp_path, loom_bin):
    url, schema = "", ""
    if backend == "postgres":
        url = os.environ.get("LOOM_TEST_POSTGRES_URL", "")
        if not url:
            if os.environ.get("LOOM_TEST_POSTGRES_REQUIRED") == "1":
                pytest.fail("LOOM_TEST_POSTGRES_URL is not set")
            pytest.skip("no PostgreSQL test server (LOOM_TEST_POSTGRES_URL)")
        schema = "py_versions_" + str(os.getpid())
        migrated = subprocess.run([loom_bin, "db", "migrate", "--url", url, "--schema", schema],
                                  capture_output=True, text=True)
        assert migrated.returncode == 0, migrated.stderr
    write_module(tmp_path, "versioned_worker", _VERSIONED_WORKER)
    procs = [subprocess.Popen([sys.executable, "versioned_worker.py", v, home, url, schema],
                              cwd=tmp_path, env=_python_env(tmp_path), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for v in ("v1", "v2")]
    for p in procs:
        out, err = p.communicate(timeout=150)
        assert p.returncode == 0 and "done" in out, err
    app = loom.App({"storage": {"url": url, "schema": schema}} if url else None, home=home,
                   version="v3")
    runs = app.runs()
    assert len(runs) == 30 and {r["status"] for r in runs} == {"completed"}
    for r in runs:
        output = app.state(r["id"])["result"]
        assert output["ranOn"] == output["recorded"] == r["codeVersion"], (r["id"], output)
