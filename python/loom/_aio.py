"""Runs the coroutines of ``async def`` steps, tools, models, middleware and workflows.

Each core thread that calls one gets an event loop of its own, kept for the thread's later
calls, so a run awaiting its I/O never holds up another run. A coroutine reached while that
loop is already running (an ``async def`` step of an ``async def`` workflow, whose context
calls are synchronous) runs to completion on a helper thread's loop while this one waits.
"""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Awaitable, Dict, List

# By the OS thread: a core thread's Python thread state (and any threading.local) is made
# afresh for each call, so a thread-local loop would not outlive the call.
_loops: Dict[int, asyncio.AbstractEventLoop] = {}
_loops_lock = threading.Lock()


def wait(awaitable: Awaitable[Any]) -> Any:
    """The result of ``awaitable``, run to completion (see above)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _loop().run_until_complete(_as_coroutine(awaitable))
    return _on_helper_thread(awaitable)


def _loop() -> asyncio.AbstractEventLoop:
    key = threading.get_ident()
    with _loops_lock:
        loop = _loops.get(key)
        if loop is None or loop.is_closed():
            loop = asyncio.new_event_loop()
            _loops[key] = loop
    return loop


def _on_helper_thread(awaitable: Awaitable[Any]) -> Any:
    result: List[Any] = []
    failure: List[BaseException] = []

    def run() -> None:
        try:
            result.append(_loop().run_until_complete(_as_coroutine(awaitable)))
        except BaseException as e:  # handed to the waiting thread as it is
            failure.append(e)

    helper = threading.Thread(target=run, name="loom-await")
    helper.start()
    helper.join()
    if failure:
        raise failure[0]
    return result[0]


async def _as_coroutine(awaitable: Awaitable[Any]) -> Any:
    return await awaitable
