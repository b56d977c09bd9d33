"""The models an agent can use: the shipped ones (scripted, OpenAI-compatible) and your own.

Your own model is any object with ``complete(request) -> message`` (``async def`` too), where
``request`` is ``{"messages": [...], "tools": [...], "purpose": "turn" | "compact"}`` and the
message is ``{"role": "assistant", "content": str | None, "toolCalls": [{"id", "name",
"arguments"}], "usage": {"inputTokens", "outputTokens"}}`` (docs/spec/agent-state.md). Give it
an ``id`` attribute (the effect id it is journaled under), or pass ``id=`` to :func:`model`.
``complete(request, ctx)`` also gets the call's :class:`EffectContext` (its ``step_id`` names
the turn, ``<loop>#turn:<i>:model``; ``execution_id`` and ``attempt`` make idempotency keys).
"""

from __future__ import annotations

import inspect
import os
from typing import Any, Dict, Mapping, Optional, Union

from . import _native


class Model:
    """A model registered with the core. ``id`` is its effect id."""

    def __init__(self, native: Any) -> None:
        self._native = native

    @property
    def id(self) -> str:
        return self._native.id

    def __repr__(self) -> str:
        return f"<loom.Model {self.id!r}>"


def ScriptedModel(script: Union[Mapping[str, Any], str, "os.PathLike[str]"],
                  id: str = "scripted") -> Model:
    """The deterministic scripted model (docs/providers.md): ``script`` is the script as a
    dict, or a .json/.toml file holding one."""
    origin = "the model script"
    if isinstance(script, (str, os.PathLike)):
        origin = os.fspath(script)
        script = _native.load_model_script(origin)
    return Model(_native.scripted_model(id, dict(script), origin))


def OpenAIModel(base_url: str, model: str, *, id: str = "", api_key_env: str = "OPENAI_API_KEY",
                timeout_ms: int = 120_000, max_retries: int = 4,
                headers: Optional[Dict[str, str]] = None,
                extra_body: Optional[Dict[str, Any]] = None) -> Model:
    """An OpenAI-compatible chat completions server (OpenAI, llama.cpp, vLLM, Ollama). The
    API key is read from ``api_key_env`` ("" for a server that needs none) and never
    journaled. Retries 429/5xx with backoff; see docs/providers.md."""
    return Model(_native.openai_model(base_url, model, id, api_key_env, timeout_ms, max_retries,
                                      dict(headers or {}), dict(extra_body or {})))


def model(obj: Any, id: Optional[str] = None) -> Model:
    """Your own model object (``complete(request)``), registered under ``id`` (default: its
    ``id`` attribute, else its class name)."""
    if isinstance(obj, Model):
        return obj
    if not callable(getattr(obj, "complete", None)):
        raise TypeError(f"a model needs a complete(request) method; {type(obj).__name__} "
                        f"has none")
    model_id = id or getattr(obj, "id", None) or type(obj).__name__
    return Model(_native.python_model(str(model_id), obj, _takes_context(obj.complete)))


def _takes_context(complete: Any) -> bool:
    """True when ``complete`` takes ``(request, ctx)``: it is then given the EffectContext
    (execution id, step id ``<loop>#turn:<i>:model``, attempt) of each call."""
    try:
        parameters = inspect.signature(complete).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in parameters)
