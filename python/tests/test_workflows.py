"""Workflows in Python: steps, effects, timers, signals, and the replay contract."""

from __future__ import annotations

import asyncio
import time

import pytest

import loom
from conftest import loom_json


def make_app(home, **kw):
    return loom.App(kw.pop("config", None), home=home)


def test_a_recorded_step_is_not_run_again_on_resume(home):
    app = make_app(home)
    ran = []

    @app.workflow("greet")
    def greet(ctx, input):
        name = ctx.step("pick", lambda: ran.append("pick") or input["name"].title())
        payload = ctx.wait_for_signal("go")
        return {"greeting": f"Hello, {name}", "payload": payload}

    first = app.run("greet", {"name": "ada"})
    assert (first.status, first.waiting_for) == ("parked", "go")
    done = app.signal(first.id, "go", {"n": 1})
    assert done.status == "completed"
    assert done.output == {"greeting": "Hello, Ada", "payload": {"n": 1}}
    assert ran == ["pick"] and done.replayed_steps == 1
    again = app.resume(first.id)  # an ended run returns its result and runs nothing
    assert again.output == done.output and ran == ["pick"]


def test_a_failed_step_fails_the_run_with_its_code_and_replays_the_same_error(home):
    app = make_app(home)
    attempts = []

    @app.workflow("fragile")
    def fragile(ctx, input):
        try:
            ctx.step("boom", lambda: attempts.append(1) or (_ for _ in ()).throw(
                ValueError("no such page")))
        except loom.StepFailedError as e:
            assert e.step_id == "boom" and e.cause == "internal"
            ctx.wait_for_signal("after")
            raise
        return "unreachable"

    run = app.run("fragile")
    assert run.status == "parked"
    done = app.signal(run.id, "after")
    assert done.status == "failed"
    assert done.error["code"] == "stepFailed"
    assert "step 'boom' raised ValueError: no such page" in done.error["message"]
    assert attempts == [1]


def test_a_step_returning_what_json_cannot_hold_fails_naming_the_step_and_type(home):
    app = make_app(home)

    @app.workflow("bad")
    def bad(ctx, input):
        return ctx.step("s", lambda: {"when": object()})

    run = app.run("bad")
    assert run.status == "failed"
    assert "the output of step 's' is not JSON" in run.error["message"]
    assert "$.when" in run.error["message"] and "object" in run.error["message"]


def test_a_workflow_that_raises_fails_only_its_own_run(home):
    app = make_app(home)

    @app.workflow("raises")
    def raises(ctx, input):
        raise KeyError("missing")

    @app.workflow("fine")
    def fine(ctx, input):
        return ctx.step("s", lambda: 7)

    failed = app.run("raises")
    assert failed.status == "failed" and "workflow 'raises' raised KeyError" in failed.error["message"]
    assert app.run("fine").output == 7


def test_parallel_effects_run_at_once_and_return_outcomes_in_call_order(home):
    app = make_app(home)

    @app.tool("slow")
    def slow(n: int):
        time.sleep(0.2)
        if n == 3:
            raise loom.InvalidArgumentError("three is refused")
        return n * 10

    @app.workflow("fan")
    def fan(ctx, input):
        outcomes = ctx.effects([(f"call:{n}", "slow", {"n": n}) for n in range(1, 5)],
                               max_concurrent=4)
        return [o.output if o.ok else o.error.cause for o in outcomes]

    started = time.monotonic()
    run = app.run("fan")
    assert run.output == [10, 20, "invalidArgument", 40]
    assert time.monotonic() - started < 0.6  # four 0.2 s calls, not one after another


def test_a_transient_call_runs_again_on_every_resume(home):
    app = make_app(home)
    calls = []

    @app.tool("ping")
    def ping():
        calls.append(1)
        return "pong"

    @app.workflow("transient")
    def transient(ctx, input):
        ctx.invoke_transient("ping", {})
        return ctx.wait_for_signal("go")

    run = app.run("transient")
    app.signal(run.id, "go", 1)
    assert len(calls) == 2


def test_a_durable_timer_parks_and_a_worker_resumes_it_when_due(home):
    app = make_app(home)

    @app.workflow("nap")
    def nap(ctx, input):
        ctx.sleep("nap", 0.3)
        return "rested"

    run = app.run("nap")
    assert (run.status, run.park_reason) == ("parked", "timer")
    with app.worker(poll_ms=50):
        deadline = time.monotonic() + 10
        while app.runs(status="completed") == [] and time.monotonic() < deadline:
            time.sleep(0.05)
    assert app.resume(run.id).output == "rested"


def test_a_signal_with_a_deadline_times_out_durably(home):
    app = make_app(home)

    @app.workflow("approve")
    def approve(ctx, input):
        came, payload = ctx.wait_for_signal_until("ok", "deadline", 0.2, reason="approval")
        return {"came": came, "payload": payload}

    run = app.run("approve")
    assert run.park_reason == "approval"
    time.sleep(0.3)
    assert app.resume(run.id).output == {"came": False, "payload": None}
    with pytest.raises(loom.FailedPreconditionError):  # too late: the run has ended
        app.signal(run.id, "ok", 1)


def test_async_steps_and_workflows_are_awaited(home):
    app = make_app(home)

    async def fetch():
        await asyncio.sleep(0.01)
        return "fetched"

    @app.workflow("async")
    async def wf(ctx, input):
        await asyncio.sleep(0)
        return ctx.step("fetch", fetch)

    assert app.run("async").output == "fetched"


def test_parking_is_not_swallowed_by_except_exception(home):
    app = make_app(home)

    @app.workflow("careless")
    def careless(ctx, input):
        try:
            return ctx.wait_for_signal("go")
        except Exception:  # must not catch the park
            return "swallowed"

    run = app.run("careless")
    assert run.status == "parked"
    assert app.signal(run.id, "go", "yes").output == "yes"


def test_a_context_kept_after_its_run_is_refused(home):
    app = make_app(home)
    kept = []

    @app.workflow("keep")
    def keep(ctx, input):
        kept.append(ctx)
        return 1

    app.run("keep")
    with pytest.raises(loom.FailedPreconditionError, match="belongs to a run that has returned"):
        kept[0].step("late", lambda: 1)


def test_cancel_ends_a_parked_run(home):
    app = make_app(home)

    @app.workflow("waits")
    def waits(ctx, input):
        return ctx.wait_for_signal("never")

    run = app.run("waits")
    cancelled = app.cancel(run.id, "not needed")
    assert cancelled.status == "cancelled"
    with pytest.raises(loom.FailedPreconditionError):
        app.signal(run.id, "never", 1)


def test_registering_after_the_first_run_is_refused(home):
    app = make_app(home)

    @app.workflow("one")
    def one(ctx, input):
        return 1

    app.run("one")
    with pytest.raises(loom.FailedPreconditionError, match="before the first run"):
        app.workflow("two")(lambda ctx, input: 2)


def test_bad_operations_raise_typed_errors_with_the_clis_messages(home):
    app = make_app(home)

    @app.workflow("one")
    def one(ctx, input):
        return 1

    with pytest.raises(loom.NotFoundError):
        app.run("nope")
    run = app.run("one", id="fixed-id")
    with pytest.raises(loom.AlreadyExistsError, match="loom resume"):
        app.run("one", id="fixed-id")
    with pytest.raises(loom.InvalidArgumentError, match="not JSON"):
        app.run("one", {"x": float("nan")})
    with pytest.raises(loom.NotFoundError):
        app.resume("no-such-run")
    assert run.output == 1


def test_a_run_started_from_python_is_what_the_loom_command_shows(home, loom_bin):
    app = make_app(home)

    @app.workflow("shown")
    def shown(ctx, input):
        return ctx.step("s", lambda: {"ok": True})

    run = app.run("shown", {"a": 1}, subject="user-7")
    rows = loom_json(loom_bin, home, "ls", "--json")
    assert [(r["id"], r["workflow"], r["status"], r["subject"]) for r in rows] == \
        [(run.id, "shown", "completed", "user-7")]
    events = loom_json(loom_bin, home, "log", run.id, "--json")
    assert [e["type"] for e in events][0] == "EXECUTION_STARTED"
    assert app.log(run.id) == events
    assert app.state(run.id)["status"] == "completed"


def test_operations_for_the_operator_answer_from_python(home):
    app = make_app(home)

    @app.workflow("one")
    def one(ctx, input):
        return 1

    app.run("one")
    assert app.doctor()["home"].endswith("home")
    assert "loom run" in app.cli("--help")
    key = loom.new_master_key()
    assert len(key) == 64 and int(key, 16) >= 0


def test_patched_keeps_the_old_path_for_a_run_recorded_past_it_and_is_journaled(home):
    app = make_app(home)
    code = {"new": False}
    ran = []

    @app.workflow("fetcher")
    def fetcher(ctx, input):
        ctx.step("a", lambda: 1)
        use_new = code["new"] and ctx.patched("fetch-v2")
        step = "fetch-v2" if use_new else "fetch"
        ctx.step(step, lambda: ran.append(step) or step)
        ctx.wait_for_signal("go")
        return step

    old = app.run("fetcher", None)  # on the old code: "fetch" recorded, then parked
    code["new"] = True  # the change is deployed while it is parked
    assert app.signal(old.id, "go", 1).output == "fetch"
    fresh = app.run("fetcher", None)
    assert app.signal(fresh.id, "go", 1).output == "fetch-v2"
    assert ran == ["fetch", "fetch-v2"]  # neither step ran twice
    answers = {run.id: [e["output"] for e in app.log(run.id)
                        if e.get("stepId") == "loom:patch:fetch-v2"]
               for run in (old, fresh)}
    assert answers == {old.id: [False], fresh.id: [True]}
    assert app.state(fresh.id)["codeVersion"].startswith("build:")


def test_a_run_continues_only_on_an_app_of_its_own_version(home):
    def app_of(version):
        app = loom.App(home=home, version=version)

        @app.workflow("greet")
        def greet(ctx, input):
            ctx.step("pick", lambda: "ada")
            return ctx.wait_for_signal("go")

        return app

    v1, v2 = app_of("v1"), app_of("v2")
    run = v1.run("greet", None)
    assert v1.state(run.id)["codeVersion"] == "v1"
    with pytest.raises(loom.FailedPreconditionError) as refused:
        v2.signal(run.id, "go", 7)
    assert "started on code version v1 and this code is version v2" in str(refused.value)
    assert v1.resume(run.id).output == 7  # the signal was kept for it
    with pytest.raises(loom.ConfigValidationError, match="execution.codeVersion"):
        loom.App(home=home, version="v\n2")
    with pytest.raises(TypeError, match="declare execution.codeVersion"):
        loom.App(loom.define_config({}), home=home, version="v3")
    with pytest.raises(ValueError, match="disagree"):
        loom.App({"execution": {"codeVersion": "v1"}}, home=home, version="v3")
    with pytest.raises(TypeError, match="must be a dict"):
        loom.App({"execution": "x"}, home=home, version="v3")


def test_upgrade_moves_a_run_to_code_that_replays_it_and_refuses_code_that_does_not(home):
    def app_of(version, first="pick"):
        app = loom.App(home=home, version=version)

        @app.workflow("greet")
        def greet(ctx, input):
            ctx.step(first, lambda: "ada")
            return ctx.wait_for_signal("go")

        return app

    v1, v2, renamed = app_of("v1"), app_of("v2"), app_of("v3", first="choose")
    run = v1.run("greet", None)
    with pytest.raises(loom.FailedPreconditionError, match="at step 'pick'"):
        renamed.upgrade(run.id)
    up = v2.upgrade(run.id)
    assert (up["outcome"], up["from"], up["to"], up["replayedSteps"]) == ("upgraded", "v1", "v2", 1)
    assert v2.upgrade(run.id)["outcome"] == "current"
    assert [e["type"] for e in v2.log(run.id)][-2:] == ["CODE_UPGRADED", "EXECUTION_PARKED"]
    with pytest.raises(loom.FailedPreconditionError, match="started on code version v2"):
        v1.signal(run.id, "go", 1)
    assert v2.resume(run.id).output == 1
    with pytest.raises(loom.FailedPreconditionError, match="has ended"):
        v2.upgrade(run.id)
    with pytest.raises(loom.NotFoundError):
        v2.upgrade("nope")


def test_fork_and_rerun_make_new_runs_on_the_code_at_hand(home):
    def app_of(version, broken):
        app = loom.App(home=home, version=version)
        ran = []

        @app.workflow("pipeline")
        def pipeline(ctx, input):
            ctx.step("a", lambda: ran.append("a") or 1)

            def b():
                ran.append("b")
                if broken:
                    raise loom.FailedPreconditionError("the tool is broken")
                return version
            return {"b": ctx.step("b", b), "input": input}

        return app, ran

    v1, ran1 = app_of("v1", broken=True)
    failed = v1.run("pipeline", "in", id="p1")
    assert failed.status == "failed"
    v2, ran2 = app_of("v2", broken=False)
    rerun = v2.rerun("p1", new_id="p2")
    assert (rerun.id, rerun.status, rerun.output) == ("p2", "completed", {"b": "v2", "input": "in"})
    assert ran2 == ["b"]  # step a replays from p1's log
    assert v2.state("p1")["status"] == "failed"  # the source is left as it was
    fork = v2.fork("p2", "b", input={"other": True})
    assert fork.status == "completed" and fork.output["input"] == {"other": True}
    assert v2.state(fork.id)["codeVersion"] == "v2"
    with pytest.raises(loom.FailedPreconditionError, match="did not fail"):
        v2.rerun("p2")
    with pytest.raises(loom.NotFoundError, match="recorded no step 'zzz'"):
        v2.fork("p2", "zzz")


def test_replay_check_finds_the_runs_the_code_no_longer_replays(home):
    shape = {"second": "b"}

    def app_of():
        app = loom.App(home=home, version="v1")

        @app.workflow("pipeline")
        def pipeline(ctx, input):
            ctx.step("a", lambda: 1)
            if input == "branch":
                ctx.step(shape["second"], lambda: 2)
            return input
        return app

    app = app_of()
    app.run("pipeline", "branch", id="hit")
    app.run("pipeline", "plain", id="miss")
    assert app.assert_replays()["matched"] == 2
    shape["second"] = "b2"  # the code renames the step the branch takes
    report = app.replay_check()
    assert (report["checked"], report["diverged"]) == (2, 1)
    hit = next(r for r in report["runs"] if r["id"] == "hit")
    assert (hit["outcome"], hit["stepId"]) == ("diverged", "b")
    with pytest.raises(AssertionError, match=r"hit: diverged at b: the log recorded step 'b'"):
        app.assert_replays()
    assert app.replay_check(last=1)["checked"] == 1
