"""SIGKILL of a Python process mid-agent, then resume in a new process: no recorded model
turn or tool call runs again (a witness file counts every call that really ran)."""

from __future__ import annotations

import collections
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from conftest import loom_json, run_python, witness_lines, write_module

AGENT = """
    import os, time
    import loom

    WITNESS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "witness.txt")

    def witness(line):
        with open(WITNESS, "a") as f:
            f.write(line + "\\n")
            f.flush()
            os.fsync(f.fileno())

    class Counting:
        id = "counting"

        def complete(self, request):
            turn = 1 + sum(1 for m in request["messages"] if m["role"] == "assistant")
            witness(f"model {turn}")
            if turn > 12:
                return {"role": "assistant", "content": "read twelve pages"}
            return {"role": "assistant",
                    "toolCalls": [{"id": f"c{turn}", "name": "fetch", "arguments": {"page": turn}}]}

    app = loom.App(home="home")

    @app.tool()
    def fetch(page: int):
        witness(f"tool {page}")
        time.sleep(0.15)
        return {"page": page, "text": "page text " * 20}

    app.agent("reader", model=Counting(), tools=[fetch])
"""


def start_and_kill(folder: Path, run_id: str, after_tool_calls: int) -> None:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [str(folder), *[os.path.abspath(p) for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]])
    child = subprocess.Popen([sys.executable, "-m", "loom", "--app", "agent:app", "run", "reader",
                              "--id", run_id, "--input", '"read"', "--json"],
                             cwd=folder, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        tools = [l for l in witness_lines(folder / "witness.txt") if l.startswith("tool")]
        if len(tools) >= after_tool_calls:
            break
        assert child.poll() is None, child.communicate()
        time.sleep(0.01)
    child.send_signal(signal.SIGKILL)
    child.wait()
    assert child.returncode == -signal.SIGKILL


def recorded_steps(loom_bin: str, home: str, run_id: str):
    return [e["stepId"] for e in loom_json(loom_bin, home, "log", run_id, "--json")
            if e["type"] == "STEP_COMPLETED"]


def witness_of_step(step: str) -> str:
    # reader#turn:<i>:model -> "model <i>"; reader#turn:<i>:tool:0 -> "tool <i>"
    turn = int(step.split(":")[1])
    return f"model {turn}" if step.endswith(":model") else f"tool {turn}"


def test_sigkill_mid_agent_then_resume_from_the_command_line_runs_nothing_recorded(tmp_path,
                                                                                    loom_bin):
    write_module(tmp_path, "agent", AGENT)
    start_and_kill(tmp_path, "crash-cli", after_tool_calls=4)
    recorded = recorded_steps(loom_bin, str(tmp_path / "home"), "crash-cli")
    assert len(recorded) >= 6, recorded
    rows = loom_json(loom_bin, str(tmp_path / "home"), "ls", "--json")
    assert rows[0]["status"] == "orphaned"
    resumed = run_python(tmp_path, "-m", "loom", "--app", "agent:app", "resume", "crash-cli",
                         "--json")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["output"]["answer"] == "read twelve pages"
    counts = collections.Counter(witness_lines(tmp_path / "witness.txt"))
    for step in recorded:
        assert counts[witness_of_step(step)] == 1, (step, counts)
    assert all(counts[f"tool {p}"] >= 1 for p in range(1, 13))


def test_sigkill_mid_agent_then_app_resume_in_a_new_process_runs_nothing_recorded(tmp_path,
                                                                                 loom_bin):
    write_module(tmp_path, "agent", AGENT)
    start_and_kill(tmp_path, "crash-api", after_tool_calls=3)
    recorded = recorded_steps(loom_bin, str(tmp_path / "home"), "crash-api")
    write_module(tmp_path, "resume_it", """
        import json
        from agent import app
        run = app.resume("crash-api")
        print(json.dumps({"status": run.status, "output": run.output,
                          "replayed": run.replayed_steps}))
    """)
    out = run_python(tmp_path, "resume_it.py")
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["status"] == "completed" and result["replayed"] == len(recorded)
    counts = collections.Counter(witness_lines(tmp_path / "witness.txt"))
    for step in recorded:
        assert counts[witness_of_step(step)] == 1, (step, counts)
