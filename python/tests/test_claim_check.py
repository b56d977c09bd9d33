"""ADR 0140 from Python: the claim-check (D3 preview, D6 no store calls on replay), erasure
reaching the blobs (D8) and export, checked as the C++ tests check them."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import loom

KEY = "5a" * 32


def app_with_claim_check(home, calls, **claim_check):
    os.environ["LOOM_TEST_MASTER_KEY"] = KEY
    config = {"execution": {"claimCheck": {"toolIds": ["fetch"], **claim_check}},
              "security": {"keys": {"env": "LOOM_TEST_MASTER_KEY"}},
              "compliance": {"erase": {}}}
    app = loom.App(config, home=home)

    @app.tool()
    def fetch(page: int):
        calls.append(page)
        return {"page": page, "body": "report text " * 400}

    @app.tool(requires_approval=True)
    def publish():
        return "published"

    app.agent("reader", model=loom.ScriptedModel({"turns": [
        {"toolCalls": [{"name": "fetch", "arguments": {"page": 1}}]},
        {"toolCalls": [{"name": "publish", "arguments": {}}]},
        {"answer": "Published."}]}), tools=[fetch, publish])
    return app


def tool_output(app, run_id, step="reader#turn:1:tool:0"):
    for event in app.log(run_id):
        if event.get("stepId") == step and event["type"] == "STEP_COMPLETED":
            return event["output"]
    raise AssertionError(f"no {step}")


def blob_files(home):
    return [p for p in Path(home, "blobs").rglob("*") if p.is_file()]


def test_d3_an_over_cap_result_is_offloaded_with_a_256_character_preview(home):
    app = app_with_claim_check(home, [])
    run = app.run("reader", "go", subject="alice")
    envelope = tool_output(app, run.id)
    assert envelope["__loomClaimCheck"] == 1 and envelope["size"] > 1024
    assert envelope["retain"] is True
    assert len(envelope["digest"]["preview"]) == loom.DEFAULT_CLAIM_CHECK_PREVIEW_CHARS
    assert envelope["digest"]["truncated"] is True


def test_d3_a_python_digest_replaces_the_preview(home):
    seen = []

    def digest(result, text):
        seen.append(len(text))
        return {"page": result["page"], "words": len(result["body"].split())}

    os.environ["LOOM_TEST_MASTER_KEY"] = KEY
    app = loom.App({"execution": {"claimCheck": {"toolIds": ["fetch"],
                                                 "digests": {"fetch": digest}}}}, home=home)

    @app.tool()
    def fetch(page: int):
        return {"page": page, "body": "word " * 500}

    app.agent("a", model=loom.ScriptedModel({"turns": [
        {"toolCalls": [{"name": "fetch", "arguments": {"page": 3}}]}, {"answer": "ok"}]}),
        tools=[fetch])
    run = app.run("a", "go")
    envelope = tool_output(app, run.id, "a#turn:1:tool:0")
    assert envelope["digest"] == {"page": 3, "words": 500}
    assert seen and seen[0] > 1024


def test_on_offload_is_told_of_each_offload(home):
    told = []
    app = loom.App({"execution": {"claimCheck": {"toolIds": ["fetch"],
                                                 "onOffload": told.append}}}, home=home)

    @app.tool()
    def fetch(page: int):
        return "y" * 3000

    app.agent("a", model=loom.ScriptedModel({"turns": [
        {"toolCalls": [{"name": "fetch", "arguments": {"page": 1}}]}, {"answer": "ok"}]}),
        tools=[fetch])
    app.run("a", "go")
    assert len(told) == 1 and told[0]["effect_id"] == "fetch" and told[0]["size"] > 3000


def test_d6_a_replay_makes_no_content_store_call_and_runs_no_recorded_tool(home):
    calls = []
    app = app_with_claim_check(home, calls)
    run = app.run("reader", "go", subject="alice")
    assert run.park_reason == "approval" and calls == [1]
    fresh = app_with_claim_check(home, calls)
    done = fresh.signal(run.id, run.waiting_for, {"approved": True})
    assert done.status == "completed"
    assert done.replayed_steps >= 1  # from the park's snapshot, or the whole log
    assert done.replay_content_store_calls == 0
    assert calls == [1]


def test_d8_erasure_shreds_the_subject_and_deletes_their_blobs_and_export_shows_them(home):
    app = app_with_claim_check(home, [])
    run = app.run("reader", "go", subject="alice")
    exported = app.export("alice")
    assert exported["subject"] == "alice"
    assert [e["id"] for e in exported["executions"]] == [run.id]
    assert blob_files(home), "the offloaded result is a blob of the home"
    erased = app.erase("alice")
    assert erased["shredded"] is True and erased["contentDeleted"]["deleted"] == 1
    assert not [p for p in blob_files(home) if p.stat().st_size > 1024]
    events = app.log(run.id)  # what is left: the shells of the events, no content
    assert all(e.get("erased") == {"subject": "alice"} for e in events)
    assert "report text" not in json.dumps(events)
    assert [r["erased"] for r in app.runs()] == [True]


def test_the_sweep_keeps_what_a_run_cites(home):
    app = app_with_claim_check(home, [])
    app.run("reader", "go", subject="alice")
    report = app.sweep(dry_run=True, grace_hours=0)
    assert report["dryRun"] is True and report["citedAddresses"] == 1
    assert report["deleted"] == 0


def test_resolve_claim_check_and_preview_digest_by_the_records_names(home):
    app = app_with_claim_check(home, [])
    run = app.run("reader", "go", subject="alice")
    envelope = tool_output(app, run.id)
    original = loom.resolve_claim_check(app, envelope, subject="alice")
    assert original["page"] == 1 and original["body"].startswith("report text")
    assert loom.preview_digest(256)(original) == envelope["digest"]
    assert loom.export_subject(app, "alice")["subject"] == "alice"
    assert loom.erase_subject(app, "alice")["shredded"] is True
    assert loom.sweep_unpinned_content(app, dry_run=True)["dryRun"] is True
    with pytest.raises(loom.InvalidArgumentError):
        app.resolve_claim_check({"not": "an envelope"})
