"""``loom.App``: workflows, tools, models and agents written in Python, run durably by the core
in this process, on a home that the ``loom`` command line reads too (docs/python.md)."""

from __future__ import annotations

import atexit
from builtins import id as builtins_id
import json
import os
import threading
import weakref
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from . import _native
from .config import Config, ConfigInput, define_config
from .context import Context
from .models import Model, model as as_model
from .tools import description_of, infer_parameters


@dataclass
class Run:
    """Where a run stands after an operation (``loom run --json``'s fields)."""

    id: str
    status: str  #: completed, failed, parked, cancelled, running or submitted
    output: Any = None
    error: Optional[Dict[str, Any]] = None  #: failed/cancelled: {"code", "message"}
    waiting_for: Optional[str] = None  #: parked: the signal it awaits
    park_reason: Optional[str] = None
    replayed_steps: int = 0  #: recorded steps this call returned from the log
    effects_run: int = 0  #: steps this call ran
    replay_content_store_calls: Optional[int] = None  #: content-store calls while replaying
    #: the run's model tokens and cost so far: {"inputTokens", "outputTokens",
    #: "cachedInputTokens", "tokens", "costUsd", "modelTurns"}; None before any model step
    usage: Optional[Dict[str, Any]] = None
    raw: Dict[str, Any] = field(default_factory=dict, repr=False)

    @classmethod
    def _of(cls, d: Dict[str, Any]) -> "Run":
        return cls(id=d.get("id", ""), status=d.get("status", ""), output=d.get("output"),
                   error=d.get("error"), waiting_for=d.get("waitingFor"),
                   park_reason=d.get("parkReason"), replayed_steps=d.get("replayedSteps", 0),
                   effects_run=d.get("effectsRun", 0),
                   replay_content_store_calls=d.get("replayContentStoreCalls"),
                   usage=d.get("usage"), raw=d)


def _json_text(value: Any, what: str) -> str:
    """JSON text by the binding's rules (what a step's output must be: no NaN, no int beyond
    64 bits, at most 32 levels), so an input arrives in the workflow exactly as given."""
    return _native.json_text(value, what)


_UNSET: Any = object()  # an argument not given (None is a JSON value)

_workers: "weakref.WeakSet[Worker]" = weakref.WeakSet()


@atexit.register
def _stop_workers() -> None:  # before the interpreter goes: no run may call into it after
    for w in list(_workers):
        w.stop(drain_seconds=0)


class Worker:
    """The Executor in this process (``app.worker()``): claims and runs what nobody runs.

    As a context manager it starts on entry and stops on exit (draining for
    ``drain_seconds``); or call :meth:`start`/:meth:`stop`, or :meth:`run_until_idle`."""

    def __init__(self, native: Any, drain_seconds: float) -> None:
        self._native = native
        self._drain = drain_seconds
        _workers.add(self)

    def start(self) -> "Worker":
        self._native.start()
        return self

    def stop(self, drain_seconds: Optional[float] = None) -> None:
        """Stops claiming; runs in flight get ``drain_seconds`` to end, then are released
        (resumable at once by the next worker)."""
        self._native.stop(self._drain if drain_seconds is None else drain_seconds)

    def run_until_idle(self) -> Dict[str, Any]:
        """Runs what is runnable now and returns when nothing is runnable or running:
        ``{"runs", "start_failed", "store_failed"}``."""
        return self._native.run_until_idle()

    @property
    def active(self) -> int:
        """Runs in flight now."""
        return self._native.active

    def __enter__(self) -> "Worker":
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()


def _with_version(config: ConfigInput, version: str) -> ConfigInput:
    if not isinstance(version, str):
        raise TypeError(f"version must be a string, not {type(version).__name__}")
    if config is None:
        config = {}
    if not isinstance(config, Mapping):
        raise TypeError("App(version=) takes a dict config; for a Config or a loom.toml, "
                        "declare execution.codeVersion in it instead")
    merged = dict(config)
    execution = merged.get("execution") or {}
    if not isinstance(execution, Mapping):
        raise TypeError(f"config['execution'] must be a dict, not {type(execution).__name__}")
    declared = execution.get("codeVersion")
    if declared is not None and declared != version:
        raise ValueError(f"App(version={version!r}) and execution.codeVersion = {declared!r} "
                         f"disagree; declare the version once")
    execution = dict(execution)
    execution["codeVersion"] = version
    merged["execution"] = execution
    return merged


class App:
    """A Loom app: register workflows, tools, models and agents, then run them.

    ``config`` is what :func:`loom.define_config` takes (a dict of groups, a loom.toml path or
    a Config); ``home`` overrides ``storage.home`` (default ``.loom``). ``version`` declares
    the code version (``execution.codeVersion``): each run records it and continues only on an
    App of the same version; unset, the build of Loom's native module. Register everything
    before the first run, worker or operation. Thread-safe after that.
    """

    def __init__(self, config: ConfigInput = None, *, home: Optional[Union[str, os.PathLike]] = None,
                 version: Optional[str] = None):
        if version is not None:
            config = _with_version(config, version)
        self.config: Config = define_config(config)
        self.home = os.fspath(home) if home is not None else self.config.home
        self._native = _native.App(self.config._native, os.fspath(home) if home else "")
        self._models: Dict[int, Any] = {}  # id(object) -> (object, Model): one per object

    def _model_of(self, model: Any, id: Optional[str] = None) -> Model:
        if isinstance(model, Model):
            return model
        kept = self._models.get(builtins_id(model))
        if kept is None:
            kept = (model, as_model(model, id))
            self._models[builtins_id(model)] = kept
        return kept[1]

    # -- registration ---------------------------------------------------------------------
    def workflow(self, name: Optional[str] = None, *, description: str = "") -> Callable:
        """Decorator: ``@app.workflow("name")`` on ``def wf(ctx, input)``."""
        def register(fn: Callable[[Context, Any], Any]) -> Callable[[Context, Any], Any]:
            def trampoline(native_ctx: Any, input: Any) -> Any:
                return fn(Context(native_ctx, input), input)
            _native.add_workflow(self._native, name or fn.__name__,
                                 description_of(fn, description or None), trampoline)
            return fn
        return register

    def tool(self, name: Optional[str] = None, *, description: Optional[str] = None,
             parameters: Optional[Mapping[str, Any]] = None, requires_approval: bool = False,
             approval_timeout_ms: int = 0, on_approval_timeout: str = "deny",
             untrusted: bool = False, returns_media: bool = False) -> Callable:
        """Decorator: a tool agents can call, with its arguments as keyword arguments.

        ``parameters`` is its JSON Schema (default: inferred from the type hints);
        ``description`` defaults to the docstring's first paragraph. ``untrusted`` records
        its results tainted; ``requires_approval`` parks each call until a person decides."""
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            tool_name = name or fn.__name__
            schema = dict(parameters) if parameters is not None else infer_parameters(fn)
            _native.add_tool(self._native, tool_name, description_of(fn, description), schema,
                             requires_approval, approval_timeout_ms, on_approval_timeout,
                             untrusted, returns_media, fn)
            fn.loom_tool_name = tool_name  # type: ignore[attr-defined]
            return fn
        return register

    def agent(self, name: str, *, model: Any, tools: Sequence[Union[str, Callable]] = (),
              system: str = "", max_turns: int = 50, parallel_tool_calls: int = 4,
              compaction: Optional[Mapping[str, Any]] = None,
              warn_transcript_bytes: int = 0,
              budget: Optional[Mapping[str, Any]] = None) -> None:
        """Registers the record's agent loop as workflow ``name``: input ``{"prompt": ...}``
        or a string; output ``{"outcome", "answer", "turns"}``. ``model`` is a
        :class:`loom.Model` or your own model object; ``tools`` are tool names or functions
        registered with :meth:`tool`. ``compaction``: ``{"trigger_bytes", "keep_last_turns",
        "model"}``. ``budget``: ``{"maxTokens", "maxCostUsd", "maxToolCalls", "onExceeded"}``
        (docs/observability.md, "Budgets")."""
        m = self._model_of(model)
        _native.add_model(self._native, m._native)
        names = [t if isinstance(t, str) else getattr(t, "loom_tool_name", t.__name__)
                 for t in tools]
        _native.add_agent(self._native, name, m.id, names, system, max_turns,
                          parallel_tool_calls, dict(compaction) if compaction else None,
                          warn_transcript_bytes, dict(budget) if budget else None)

    def mcp_server(self, name: str, command: str, args: Sequence[str] = (), *,
                   env: Optional[Mapping[str, str]] = None, inherit_env: bool = True,
                   working_directory: str = "", timeout_ms: int = 30_000) -> List[str]:
        """Starts an MCP server over stdio (as ``[[tools.mcp]]`` in a loom.toml) and registers
        every tool it lists; returns their names, to offer to an agent. Its results are
        recorded tainted (``mcp:<name>``). The server stops when the app goes."""
        return _native.add_mcp_server(self._native, name, command, list(args), dict(env or {}),
                                      inherit_env, working_directory, timeout_ms)

    def model(self, model: Any, id: Optional[str] = None) -> Model:
        """Registers a model (to call from workflows with ``ctx.effect``); returns it."""
        m = self._model_of(model, id)
        _native.add_model(self._native, m._native)
        return m

    # -- runs ---------------------------------------------------------------------------
    def _json(self, *args: str) -> Any:
        code, out = self._native.invoke(list(args))
        return json.loads(out) if out.strip() else None

    def _start_args(self, workflow: str, input: Any, id: Optional[str],
                    subject: Optional[str]) -> List[str]:
        args = ["run", "--json", "--input", _json_text(input, "the run's input")]
        if id is not None:
            args += ["--id", id]
        if subject is not None:
            args += ["--subject", subject]
        return args + ["--", workflow]

    def run(self, workflow: str, input: Any = None, *, id: Optional[str] = None,
            subject: Optional[str] = None) -> Run:
        """Starts ``workflow`` and runs it here until it ends or parks."""
        return Run._of(self._json(*self._start_args(workflow, input, id, subject)))

    def submit(self, workflow: str, input: Any = None, *, id: Optional[str] = None,
               subject: Optional[str] = None) -> Run:
        """Records the run without running it: a worker runs it."""
        args = self._start_args(workflow, input, id, subject)
        return Run._of(self._json(args[0], "--submit", *args[1:]))

    def resume(self, id: str) -> Run:
        """Continues a run from its log: recorded steps replay, the rest runs."""
        return Run._of(self._json("resume", "--json", "--", id))

    def signal(self, id: str, name: str, payload: Any = None, *, force: bool = False) -> Run:
        """Records signal ``name`` for the run and resumes it if it is parked."""
        args = ["signal", "--json", *(["--force"] if force else []), "--", id, name,
                _json_text(payload, "the signal's payload")]
        return Run._of(self._json(*args))

    def retry(self, id: str) -> Run:
        """Runs a retrying run's failed step now, not at its next attempt time."""
        return Run._of(self._json("retry", "--json", "--", id))

    def fork(self, id: str, at: Union[str, int], *, input: Any = _UNSET,
             new_id: Optional[str] = None) -> Run:
        """Starts a new run whose log is run ``id``'s up to step ``at`` (a step id, which the
        fork runs again; or a seq) and continues it here on this code (``loom fork``). The
        source is left as it was; ``input`` replaces the recorded input."""
        args = ["fork", "--json", "--at", str(at)]
        if input is not _UNSET:
            args += ["--input", _json_text(input, "the fork's input")]
        if new_id is not None:
            args += ["--id", new_id]
        return Run._of(self._json(*args, "--", id))

    def rerun(self, id: str, *, new_id: Optional[str] = None) -> Run:
        """Runs failed run ``id`` again from its failed step, as a new run on this code
        (``loom rerun``); the failed run stays failed."""
        return Run._of(self._json("rerun", "--json", *(["--id", new_id] if new_id else []),
                                  "--", id))

    def upgrade(self, id: str) -> Dict[str, Any]:
        """Moves run ``id`` (not ended) to this app's code version when its log replays on
        this code (``loom upgrade ID --to-current``): ``{"id", "outcome": "upgraded" or
        "current", "from", "to", "replayedSteps"}``. Nothing runs; a worker of this version
        continues it. Raises FailedPreconditionError naming the step when the log does not
        replay here (fork it instead), and when the run has ended; LeaseHeldError when another
        process runs it; NotFoundError for an unknown id."""
        return self._json("upgrade", "--to-current", "--json", "--", id)["runs"][0]

    def usage(self, *, by: str = "workflow", since: Optional[str] = None) -> Dict[str, Any]:
        """The model tokens and cost the home's runs recorded, added up by "subject",
        "workflow" or "model" (``loom usage --json``): ``{"by", "groups": [{"key", "runs",
        "inputTokens", "outputTokens", "cachedInputTokens", "tokens", "costUsd",
        "modelTurns"}], "total"}``. ``since``: an RFC 3339 time or a duration ("24h")."""
        args = ["usage", "--json", "--by", by]
        if since is not None:
            args += ["--since", since]
        return self._json(*args)

    def replay_check(self, *, workflow: Optional[str] = None, since: Optional[str] = None,
                     last: Optional[int] = None) -> Dict[str, Any]:
        """Replays the home's recorded runs against this app's code, in memory (``loom
        replay-check --json``): ``{"checked", "matched", "diverged", "unchecked", "runs"}``.
        Nothing runs and no log is written."""
        args = ["replay-check", "--json"]
        if workflow is not None:
            args += ["--workflow", workflow]
        if since is not None:
            args += ["--since", since]
        if last is not None:
            args += ["--last", str(last)]
        return self._json(*args)

    def assert_replays(self, **filters: Any) -> Dict[str, Any]:
        """For pytest: :meth:`replay_check`, raising AssertionError that names each run that
        diverged (step, what the log recorded, what the code did) or could not be checked."""
        report = self.replay_check(**filters)
        bad = [r for r in report["runs"] if r["outcome"] != "matched"]
        if bad:
            lines = [f"{r['id']}: diverged at {r['stepId']}: the log recorded {r['recorded']}; "
                     f"the code {r['asked']}" if r["outcome"] == "diverged"
                     else f"{r['id']}: unchecked: {r['why']}" for r in bad]
            raise AssertionError(f"{len(bad)} of {report['checked']} recorded run(s) do not "
                                 "replay on this code:\n" + "\n".join(lines))
        return report

    def cancel(self, id: str, reason: str = "") -> Run:
        """Cancels a run: at once when nobody runs it, else at its runner's next step."""
        return Run._of(self._json("cancel", "--json", *(["--reason", reason] if reason else []),
                                  "--", id))

    def state(self, id: str) -> Dict[str, Any]:
        """The run's folded state (``loom state --json``)."""
        return self._json("state", "--json", "--", id)

    def log(self, id: str) -> List[Dict[str, Any]]:
        """The run's events, as stored (``loom log --json``)."""
        return self._json("log", "--json", "--", id)

    def runs(self, *, status: Optional[str] = None,
             workflow: Optional[str] = None) -> List[Dict[str, Any]]:
        """Every run of the home (``loom ls --json``), optionally of one status or workflow."""
        rows = self._json("ls", "--json") or []
        return [r for r in rows if (status is None or r.get("status") == status)
                and (workflow is None or r.get("workflow") == workflow)]

    def worker(self, *, concurrency: int = 16, poll_ms: int = 500,
               workflow_limits: Optional[Mapping[str, int]] = None,
               on_run: Optional[Callable[[Dict[str, Any]], None]] = None,
               drain_seconds: float = 30.0) -> Worker:
        """The Executor in this process: up to ``concurrency`` runs at once, each on a thread
        of its own (Python code takes the GIL only while it runs). ``on_run`` is told
        ``{"id", "workflow", "outcome", "start_failed"}`` as each run stops."""
        native = _native.Worker(self._native, concurrency, poll_ms,
                                dict(workflow_limits or {}), on_run)
        return Worker(native, drain_seconds)

    # -- content and compliance -----------------------------------------------------------
    def sweep(self, *, dry_run: bool = False, ttl_days: Optional[int] = None,
              grace_hours: Optional[int] = None) -> Dict[str, Any]:
        """Reclaims content nothing needs (``loom sweep --json``'s report)."""
        args = ["sweep", "--json"] + (["--dry-run"] if dry_run else [])
        if ttl_days is not None:
            args += ["--ttl-days", str(ttl_days)]
        if grace_hours is not None:
            args += ["--grace-hours", str(grace_hours)]
        return self._json(*args)

    def erase(self, subject: str) -> Dict[str, Any]:
        """Crypto-shreds a data subject and deletes their blobs (compliance.erase). Raises
        :class:`loom.ContentCopiesRemainError` when a copy could not be deleted."""
        return self._json("erase", "--json", "--", subject)

    def export(self, subject: str) -> Dict[str, Any]:
        """Everything held on a data subject (``loom export``)."""
        return self._json("export", "--", subject)

    def resolve_claim_check(self, envelope: Any, *, subject: Optional[str] = None) -> Any:
        """The original value behind a claim-check envelope (a tool result the journal holds
        as an envelope), read from the app's content store; None once the sweep reclaimed it
        or an erasure deleted it. Raises InvalidArgumentError for a value that is not one."""
        return self._native.resolve_claim_check(envelope, subject)

    def doctor(self) -> Dict[str, Any]:
        """The home's health (``loom doctor --json``)."""
        return self._json("doctor", "--json")

    def cli(self, *args: str) -> str:
        """Any ``loom`` subcommand in this process, with this app's workflows; its output."""
        return self._native.invoke(list(args))[1]

    def main(self, argv: Optional[Sequence[str]] = None) -> int:
        """The whole ``loom`` command line for this app (``python -m loom --app``)."""
        import sys
        return self._native.main(["loom", *(sys.argv[1:] if argv is None else argv)])


def new_master_key() -> str:
    """A fresh master key for security.keys (``loom keys new-master``)."""
    code, out = App(home=os.devnull)._native.invoke(["keys", "new-master"])
    return out.strip()


# The decision record's names (ADR 0140, "Consequences"), in Python's spelling.
def sweep_unpinned_content(app: App, **options: Any) -> Dict[str, Any]:
    """sweepUnpinnedContent: app.sweep(**options)."""
    return app.sweep(**options)


def erase_subject(app: App, subject: str) -> Dict[str, Any]:
    """eraseSubject: app.erase(subject)."""
    return app.erase(subject)


def export_subject(app: App, subject: str) -> Dict[str, Any]:
    """exportSubject: app.export(subject)."""
    return app.export(subject)


def resolve_claim_check(app: App, envelope: Any, *, subject: Optional[str] = None) -> Any:
    """resolveClaimCheck: app.resolve_claim_check(envelope, subject=...)."""
    return app.resolve_claim_check(envelope, subject=subject)


def preview_digest(max_chars: int = 256) -> Callable[[Any, Optional[str]], Any]:
    """previewDigest: the agent opt-in's default digest (D3) as a function
    ``(result, text) -> {"preview", "truncated"}``, for a ``digests`` entry."""
    def digest(result: Any, text: Optional[str] = None) -> Any:
        return _native.preview_digest(max_chars, result,
                                      text if text is not None else json.dumps(result, separators=(",", ":")))
    return digest
