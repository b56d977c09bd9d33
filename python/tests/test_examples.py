"""examples/python run as their docstrings say."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import run_python

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "python"


def test_the_research_agent_answers_with_fetch_report_claim_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOM_FETCH_DELAY", "0")
    monkeypatch.setenv("LOOM_TOOL_WITNESS", str(tmp_path / "witness.txt"))
    env_home = tmp_path / "home"
    monkeypatch.setenv("LOOM_HOME", str(env_home))
    out = run_python(EXAMPLES, "research_agent.py", "example-1")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("run example-1: completed"), out.stdout
    assert "Revenue grew in every region" in out.stdout
    log = run_python(EXAMPLES, "-m", "loom", "--app", "research_agent:app", "log", "example-1",
                     "--json")
    events = json.loads(log.stdout)
    fetched = [e for e in events if e.get("effectId") == "fetch_report"]
    assert fetched and all(e["output"].get("__loomClaimCheck") == 1 for e in fetched)
    searched = [e for e in events if e.get("effectId") == "search"]
    assert searched and all("__loomClaimCheck" not in e["output"] for e in searched)
    assert len((tmp_path / "witness.txt").read_text().splitlines()) == 12


def test_the_approval_workflow_parks_then_pays_on_a_signal(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOM_HOME", str(tmp_path / "home"))
    started = run_python(EXAMPLES, "approval.py", "250")
    assert ", waiting for 'approval'" in started.stdout, started.stdout + started.stderr
    run_id = started.stdout.split()[1].rstrip(":")
    done = run_python(EXAMPLES, "-m", "loom", "--app", "approval:app", "signal", run_id,
                      "approval", '{"approved": true, "by": "ana"}', "--json")
    output = json.loads(done.stdout)["output"]
    assert output["status"] == "paid" and output["receipt"]["paid"] == 250
    small = run_python(EXAMPLES, "approval.py", "20")
    assert "'status': 'paid'" in small.stdout
