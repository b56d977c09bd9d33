"""Loom: durable execution for AI agents and workflows, on the native core, in process.

Every model turn, tool call and step of a run is journaled; a run that stops (a crash, a
park, a deploy) is resumed by replay without re-running anything recorded. See docs/python.md.

    import loom

    app = loom.App({"execution": {"claimCheck": {"toolIds": ["fetch"]}}}, home=".loom")

    @app.workflow("hello")
    def hello(ctx, input):
        name = ctx.step("pick", lambda: input["name"].title())
        return {"greeting": f"Hello, {name}"}

    print(app.run("hello", {"name": "ada"}).output)
"""

from . import _native
from ._native import EffectContext
from .app import (App, Run, Worker, erase_subject, export_subject, new_master_key,
                  preview_digest, resolve_claim_check, sweep_unpinned_content)
from .config import Config, define_config
from .context import Context, EffectCall, EffectOutcome
from .errors import *  # noqa: F401,F403 (the exception classes)
from .errors import __all__ as _errors
from .models import Model, OpenAIModel, ScriptedModel, model

__version__ = _native.VERSION

#: ADR 0140's defaults (execution.claimCheck.inlineCapBytes and preview).
DEFAULT_CLAIM_CHECK_CAP_BYTES = 1024
DEFAULT_CLAIM_CHECK_PREVIEW_CHARS = 256

__all__ = ["App", "Config", "Context", "DEFAULT_CLAIM_CHECK_CAP_BYTES",
           "DEFAULT_CLAIM_CHECK_PREVIEW_CHARS", "EffectCall", "EffectContext", "EffectOutcome", "Model",
           "OpenAIModel", "Run", "ScriptedModel", "Worker", "define_config", "model",
           "new_master_key", "erase_subject", "export_subject", "preview_digest",
           "resolve_claim_check", "sweep_unpinned_content", *_errors]
