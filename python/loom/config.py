"""``define_config``: the grouped configuration, spelled as the decision record spells it.

The groups are ``execution``, ``security``, ``compliance``, ``storage`` and ``observability``
(docs/config.md lists every option). The dict is checked by the same option table, with the
same messages, as ``loom.toml`` and a C++ ``Config``: every problem is reported at once, named
by its option path, and a flat spelling (``{"claimCheck": ...}``) is refused with the grouped
path to use. Python callables are accepted where the record allows code:
``execution.claimCheck.digests[toolId]`` (``fn(result, text) -> preview``),
``execution.claimCheck.onOffload`` (``fn(info)``), ``observability.onWarn`` (``fn(message)``)
and entries of ``execution.effectMiddleware`` (objects with ``invoke(ctx, input, next)``).
"""

from __future__ import annotations

import os
from typing import Any, Callable, Dict, List, Mapping, Optional, Tuple, Union

from . import _native


class Config:
    """A validated, frozen configuration. Build it with :func:`define_config`."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def home(self) -> str:
        """``storage.home``: the folder of the home's database, blobs and archive."""
        return self._native.home

    def describe(self) -> str:
        """Every option as ``path = value`` (defaults filled in), then the middleware chain."""
        return self._native.describe()

    def __repr__(self) -> str:
        return f"<loom.Config home={self.home!r}>"


ConfigInput = Union[Config, Mapping[str, Any], str, "os.PathLike[str]", None]


def define_config(config: ConfigInput = None, *, origin: str = "define_config") -> Config:
    """Validates the grouped config and freezes it.

    ``config`` is a dict of groups, a path to a ``loom.toml`` file, an existing
    :class:`Config`, or None (every default). Raises :class:`loom.ConfigValidationError`
    listing every problem (``issues``: ``(path, message)`` pairs).
    """
    if isinstance(config, Config):
        return config
    if config is None:
        config = {}
    if isinstance(config, (str, os.PathLike)):
        return Config(_native.load_config(os.fspath(config)))
    if not isinstance(config, Mapping):
        raise TypeError(f"define_config takes a dict of groups or a loom.toml path, "
                        f"not {type(config).__name__}")
    groups, digests, on_offload, on_warn, middleware, count = _split_callables(config)
    return Config(_native.define_config(groups, origin, digests, on_offload, on_warn,
                                        middleware, count))


def _split_callables(config: Mapping[str, Any]) -> Tuple[Dict[str, Any], Dict[str, Callable],
                                                        Any, Any, List[Tuple[int, Any]], int]:
    groups: Dict[str, Any] = _copy_tree(dict(config))
    execution = groups.get("execution")
    digests: Dict[str, Callable] = {}
    on_offload = None
    middleware: List[Tuple[int, Any]] = []
    count = 0
    if isinstance(execution, dict):
        claim_check = execution.get("claimCheck")
        if isinstance(claim_check, dict):
            raw = claim_check.get("digests")
            if isinstance(raw, dict):
                for tool in [t for t, d in raw.items() if callable(d)]:
                    digests[tool] = raw.pop(tool)
                if not raw:
                    del claim_check["digests"]
            if callable(claim_check.get("onOffload")):
                on_offload = claim_check.pop("onOffload")
        entries = execution.get("effectMiddleware")
        if isinstance(entries, list):
            count = len(entries)
            middleware = [(i, e) for i, e in enumerate(entries) if hasattr(e, "invoke")]
            kept = [e for e in entries if not hasattr(e, "invoke")]
            if kept:
                execution["effectMiddleware"] = kept
            else:
                del execution["effectMiddleware"]
    on_warn = None
    observability = groups.get("observability")
    if isinstance(observability, dict) and callable(observability.get("onWarn")):
        on_warn = observability.pop("onWarn")
        if not observability:
            del groups["observability"]
    return groups, digests, on_offload, on_warn, middleware, count


def _copy_tree(value: Any) -> Any:
    """A copy of the dicts and lists of ``value``; anything else (callables) is shared."""
    if isinstance(value, Mapping):
        return {k: _copy_tree(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_copy_tree(v) for v in value]
    return value
