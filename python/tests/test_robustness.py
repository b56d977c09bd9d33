"""What an adversarial review found, kept as tests: the worker's teardown and reports, objects
kept past their call, interrupts, values the journal could not read back, duplicate ids."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import threading
import time

import pytest

import loom
from conftest import run_python, write_module


def test_leaving_a_worker_whose_run_is_in_python_code_returns(home, tmp_path):
    write_module(tmp_path, "slow_worker", f"""
        import loom, time
        app = loom.App(home={home!r})

        @app.workflow("slow")
        def slow(ctx, input):
            ctx.step("a", lambda: time.sleep(3) or 1)
            return 2

        app.submit("slow")
        with app.worker(poll_ms=50, drain_seconds=0.2):
            time.sleep(0.5)
        print("left the worker", flush=True)
    """)
    out = run_python(tmp_path, "slow_worker.py", timeout=60)
    assert out.returncode == 0 and "left the worker" in out.stdout, out.stderr


def test_on_run_may_read_the_worker_and_the_worker_may_be_polled(home):
    app = loom.App(home=home)

    @app.workflow("wf")
    def wf(ctx, input):
        return ctx.step("a", lambda: 1)

    for _ in range(20):
        app.submit("wf")
    seen = []
    holder = {}
    worker = app.worker(poll_ms=20, on_run=lambda r: seen.append(holder["w"].active))
    holder["w"] = worker
    worker.start()
    deadline = time.monotonic() + 20
    while len(seen) < 20 and time.monotonic() < deadline:
        worker.active  # polled while reports are delivered
    worker.stop(1)
    assert len(seen) == 20
    with pytest.raises(loom.FailedPreconditionError, match="runs once"):
        worker.start()


class KeepsNext:
    name = "keeps"

    def __init__(self):
        self.kept = None

    def invoke(self, ctx, input, next):
        self.kept = next
        return next(input)


def test_a_middlewares_next_called_after_invoke_is_refused(home):
    keeps = KeepsNext()
    app = loom.App({"execution": {"effectMiddleware": [keeps]}}, home=home)

    @app.workflow("wf")
    def wf(ctx, input):
        return ctx.step("a", lambda: 1)

    app.run("wf")
    with pytest.raises(loom.FailedPreconditionError, match="after its invoke returned"):
        keeps.kept({"x": 1})


def test_a_context_used_from_a_thread_that_outlives_the_workflow_is_safe(home):
    app = loom.App(home=home)
    results = []

    @app.workflow("wf")
    def wf(ctx, input):
        def late():
            time.sleep(0.2)
            try:
                results.append(ctx.step("late", lambda: 1))
            except loom.FailedPreconditionError as e:
                results.append(str(e))
        threading.Thread(target=late).start()
        return "returned"

    assert app.run("wf").output == "returned"
    time.sleep(0.5)
    assert results and "belongs to a run that has returned" in results[0]


def test_a_value_nested_deeper_than_the_journal_reads_is_refused_and_the_run_stays_readable(home):
    app = loom.App(home=home)

    @app.workflow("deep")
    def deep(ctx, input):
        value = []
        for _ in range(40):
            value = [value]
        return ctx.step("deep", lambda: value)

    run = app.run("deep")
    assert run.status == "failed" and "nested deeper than 32" in run.error["message"]
    assert app.log(run.id)  # still readable
    with pytest.raises(loom.InvalidArgumentError, match="deeper"):
        app.run("deep", {"x": json.loads("[" * 40 + "]" * 40)})


def test_ctrl_c_in_a_step_stops_the_run_resumably_and_reaches_the_program(tmp_path):
    write_module(tmp_path, "interrupted", """
        import loom, os, signal, sys, threading, time
        app = loom.App(home="home")

        @app.workflow("wf")
        def wf(ctx, input):
            return ctx.step("slow", lambda: time.sleep(2) or "ok")

        if sys.argv[1] == "run":
            threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
            try:
                app.run("wf", id="r1")
                print("returned")
            except KeyboardInterrupt:
                print("interrupted")
        else:
            print(app.resume("r1").output)
    """)
    first = run_python(tmp_path, "interrupted.py", "run")
    assert first.stdout.strip() == "interrupted", first.stdout + first.stderr
    second = run_python(tmp_path, "interrupted.py", "resume")
    assert second.stdout.strip() == "ok", second.stdout + second.stderr


def test_two_models_with_one_id_are_refused_and_one_model_may_serve_two_agents(home):
    app = loom.App(home=home)
    shared = loom.ScriptedModel({"turns": [{"answer": "one"}]})
    app.agent("a", model=shared)
    app.agent("b", model=shared)
    with pytest.raises(loom.AlreadyExistsError, match="id of its own"):
        app.agent("c", model=loom.ScriptedModel({"turns": [{"answer": "two"}]}))

    class Mine:
        def complete(self, request):
            return {"role": "assistant", "content": "mine"}

    mine = Mine()
    app.agent("d", model=mine)
    app.agent("e", model=mine)
    assert app.run("e", "x").output["answer"] == "mine"


class LoopBound:
    """An async model that keeps an asyncio object between calls (as a client would)."""

    id = "loop-bound"

    def __init__(self):
        self.queue = None

    async def complete(self, request):
        if self.queue is None:
            self.queue = asyncio.Queue()
        await self.queue.put(1)
        await self.queue.get()
        turns = sum(1 for m in request["messages"] if m["role"] == "assistant")
        if turns < 2:
            return {"role": "assistant", "toolCalls": [
                {"id": f"c{turns}", "name": "noop", "arguments": {}}]}
        return {"role": "assistant", "content": "kept its loop"}


def test_an_async_model_keeps_its_event_loop_between_turns(home):
    app = loom.App(home=home)

    @app.tool()
    def noop():
        return "ok"

    app.agent("a", model=LoopBound(), tools=[noop])
    run = app.run("a", "go")
    assert run.status == "completed", run.error


def test_suspended_caught_by_the_workflow_still_parks_the_run(home):
    app = loom.App(home=home)

    @app.workflow("sneaky")
    def sneaky(ctx, input):
        try:
            ctx.wait_for_signal("go")
        except BaseException:
            pass
        return "finished without the signal"

    run = app.run("sneaky")
    assert (run.status, run.waiting_for) == ("parked", "go")
    assert app.signal(run.id, "go", 1).output == "finished without the signal"


def test_a_model_changing_its_messages_does_not_change_the_next_turns(home):
    app = loom.App(home=home)
    seen = []

    @app.tool()
    def noop():
        return "ok"

    class Scribbler:
        id = "scribbler"

        def complete(self, request):
            seen.append(request["messages"][1]["content"])
            for m in request["messages"]:
                m["content"] = "scribbled"
            if len(seen) < 3:
                return {"role": "assistant", "toolCalls": [
                    {"id": f"c{len(seen)}", "name": "noop", "arguments": {}}]}
            return {"role": "assistant", "content": "done"}

    app.agent("a", model=Scribbler(), tools=[noop], system="sys")
    app.run("a", "the prompt")
    assert seen == ["the prompt"] * 3


class Py:
    def invoke(self, ctx, input, next):
        return next(input)


def test_a_config_problem_is_named_at_the_entrys_place_in_the_list():
    with pytest.raises(loom.ConfigValidationError) as e:
        loom.define_config({"execution": {"effectMiddleware": [
            {"kind": "retry", "attempts": 2}, Py(), {"kind": "timeout", "millis": 1}]}})
    assert any(i.path.startswith("execution.effectMiddleware[2]") for i in e.value.issues), \
        e.value.issues


def test_an_input_beyond_64_bits_is_refused_not_rounded(home):
    app = loom.App(home=home)

    @app.workflow("echo")
    def echo(ctx, input):
        return input

    with pytest.raises(loom.InvalidArgumentError, match="out of range"):
        app.run("echo", 2 ** 70)
    assert app.run("echo", 2 ** 62).output == 2 ** 62


def test_operations_from_other_threads_are_not_held_up_by_a_running_run(home):
    app = loom.App(home=home)
    release = threading.Event()

    @app.workflow("holds")
    def holds(ctx, input):
        return ctx.step("wait", lambda: release.wait(10))

    @app.workflow("quick")
    def quick(ctx, input):
        return 1

    runner = threading.Thread(target=lambda: app.run("holds"))
    runner.start()
    time.sleep(0.2)
    started = time.monotonic()
    assert app.run("quick").output == 1
    assert [r["workflow"] for r in app.runs(status="running")] == ["holds"]
    assert time.monotonic() - started < 2
    release.set()
    runner.join()


def test_bad_agent_options_are_refused_naming_them(home):
    app = loom.App(home=home)
    model = loom.ScriptedModel({"turns": [{"answer": "x"}]})
    with pytest.raises(loom.InvalidArgumentError, match="trigger_byte"):
        app.agent("a", model=model, compaction={"trigger_byte": 10})
    with pytest.raises(loom.InvalidArgumentError, match="on_approval_timeout"):
        app.tool(on_approval_timeout="explode")(lambda: 1)


def test_optional_parameters_written_with_a_bar_are_typed():
    from loom.tools import infer_parameters

    def f(city: str, days: "int | None" = None):
        return {}

    assert infer_parameters(f)["properties"]["days"] == {"type": "integer"}


def test_the_context_used_inside_a_steps_function_is_refused(home):
    app = loom.App(home=home)

    @app.workflow("nested")
    def nested(ctx, input):
        return ctx.step("outer", lambda: ctx.step("inner", lambda: 1))

    run = app.run("nested")
    assert run.status == "failed"
    assert "the context was used inside step 'outer'" in run.error["message"]
