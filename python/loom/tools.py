"""Tool definitions: a tool's JSON Schema, given or inferred from the function's type hints."""

from __future__ import annotations

import inspect
import types
import typing
from typing import Any, Callable, Dict, Optional

_UnionType = getattr(types, "UnionType", None)  # `int | None` (Python 3.10+)
_SIMPLE = {str: "string", int: "integer", float: "number", bool: "boolean",
           list: "array", tuple: "array", dict: "object"}


def _schema_of(hint: Any) -> Dict[str, Any]:
    if hint is inspect.Parameter.empty or hint is Any:
        return {}
    origin = typing.get_origin(hint)
    if origin is typing.Union or (_UnionType is not None and origin is _UnionType):
        options = [a for a in typing.get_args(hint) if a is not type(None)]
        return _schema_of(options[0]) if len(options) == 1 else {}
    if origin in (list, tuple):
        args = typing.get_args(hint)
        out: Dict[str, Any] = {"type": "array"}
        if origin is list and args:
            out["items"] = _schema_of(args[0])
        return out
    if origin is dict:
        return {"type": "object"}
    if origin is typing.Literal:
        return {"enum": list(typing.get_args(hint))}
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    return {}


def infer_parameters(fn: Callable[..., Any]) -> Dict[str, Any]:
    """The JSON Schema of ``fn``'s keyword arguments, from its signature and type hints."""
    signature = inspect.signature(fn)
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # a hint that does not resolve: leave that parameter untyped
        hints = {}
    properties: Dict[str, Any] = {}
    required = []
    for name, p in signature.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        properties[name] = _schema_of(hints.get(name, p.annotation))
        if p.default is inspect.Parameter.empty:
            required.append(name)
    schema: Dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        schema["required"] = required
    return schema


def description_of(fn: Callable[..., Any], given: Optional[str]) -> str:
    if given is not None:
        return given
    return inspect.cleandoc(fn.__doc__ or "").split("\n\n")[0]
