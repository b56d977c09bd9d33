"""The workflow context: what a Python workflow asks its run for.

Replay contract (as in C++): a workflow function is run again from the top on every resume,
and each step it reaches that the log records returns its recorded value without running.
So workflow code must be deterministic given its steps' values: read the clock, random
numbers, files and the network only inside steps.
"""

from __future__ import annotations

import datetime
from typing import Any, Callable, Iterable, List, NamedTuple, Optional, Sequence, Tuple, Union

from .errors import StepFailedError

Seconds = Union[int, float, datetime.timedelta]


class EffectCall(NamedTuple):
    """One call of :meth:`Context.effects`: a journaled call of a registered effect."""

    step_id: str
    effect_id: str
    input: Any = None


class EffectOutcome(NamedTuple):
    """The outcome of one call of :meth:`Context.effects`: its output or its failure."""

    output: Any
    error: Optional[StepFailedError]

    @property
    def ok(self) -> bool:
        return self.error is None


def _millis(duration: Seconds) -> int:
    if isinstance(duration, datetime.timedelta):
        return int(duration.total_seconds() * 1000)
    return int(duration * 1000)


class Context:
    """A run's context. Valid only while its workflow function runs; not thread-safe."""

    __slots__ = ("_native", "input")

    def __init__(self, native: Any, input: Any) -> None:
        self._native = native
        self.input = input  #: the run's input, as recorded

    @property
    def execution_id(self) -> str:
        return self._native.execution_id

    @property
    def subject(self) -> Optional[str]:
        """The data subject the run holds data on (``app.run(..., subject=)``), or None."""
        return self._native.subject

    @property
    def replaying(self) -> bool:
        """True while the run returns recorded values (no unrecorded step reached yet)."""
        return self._native.replaying

    def patched(self, change_id: str) -> bool:
        """Patching code under live runs (Temporal's ``patched()``): True when this run reaches
        this point on code that has change ``change_id``, False when its log already goes past
        this point without it. Journaled the first time, so every replay gets the same answer::

            if ctx.patched("fetch-v2"):
                ctx.step("fetch-v2", fetch_v2)
            else:
                ctx.step("fetch", fetch)
        """
        return self._native.patched(change_id)

    def step(self, step_id: str, fn: Callable[[], Any]) -> Any:
        """A journaled step: runs ``fn()`` (or awaits ``async def``) once, records its JSON
        result, and returns the recorded result on every replay. A step id is used once per
        run. A failed step raises :class:`loom.StepFailedError`, on replay too."""
        return self._native.step(step_id, fn)

    def effect(self, step_id: str, effect_id: str, input: Any = None) -> Any:
        """A journaled call of the registered effect (tool or model) ``effect_id``."""
        return self._native.effect(step_id, effect_id, input)

    def effects(self, calls: Iterable[Union[EffectCall, Tuple[str, str, Any]]],
                max_concurrent: int = 4) -> List[EffectOutcome]:
        """Several journaled effect calls at once, at most ``max_concurrent`` at a time; they
        are journaled in the order given. One outcome per call, in order: its output, or the
        :class:`loom.StepFailedError` it failed with (returned, not raised)."""
        native = [tuple(c) if len(tuple(c)) == 3 else (c[0], c[1], None) for c in calls]
        return [EffectOutcome(o, e) for o, e in self._native.effects(native, max_concurrent)]

    def invoke_transient(self, effect_id: str, input: Any = None) -> Any:
        """Calls the effect through the middleware chain without journaling it: a resume
        runs it again."""
        return self._native.invoke_transient(effect_id, input)

    def wait_for_signal(self, name: str) -> Any:
        """The payload of the next signal ``name`` sent to this run (``app.signal``,
        ``loom signal``). Until one arrives the run parks: :class:`loom.Suspended` unwinds the
        workflow function, and the signal resumes it."""
        return self._native.wait_for_signal(name)

    def wait_for_signal_until(self, name: str, step_id: str, timeout: Seconds,
                              reason: str = "signal") -> Tuple[bool, Any]:
        """Like :meth:`wait_for_signal` with a deadline (recorded by step ``step_id``):
        ``(True, payload)`` when the signal came in time, ``(False, None)`` once the
        deadline passed (a worker resumes the run then)."""
        out = self._native.park_until(reason, step_id, name, step_id, _millis(timeout))
        return (False, None) if out is None else (True, out[0])

    def sleep(self, step_id: str, duration: Seconds) -> None:
        """A durable timer: the run parks until ``duration`` (seconds or a timedelta) has
        passed since the first call (recorded by step ``step_id``); a worker resumes it then."""
        self._native.sleep(step_id, _millis(duration))
