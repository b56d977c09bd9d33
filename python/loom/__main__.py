"""``python -m loom --app module:app <subcommand> ...``: the whole ``loom`` command line for the
Python workflows, tools and agents of ``app`` (an App in an importable module), as
``loom::cli::main`` gives a C++ program: run, resume, signal, worker, serve, ls, log, ...
Without --app, the command line with no Python workflows (agent app files still run)."""

from __future__ import annotations

import importlib
import os
import sys
from typing import List, Optional

from .app import App

USAGE = "usage: python -m loom [--app MODULE:ATTR] <loom subcommand> [options]"


def _load(spec: str) -> App:
    module_name, _, attr = spec.partition(":")
    if not module_name:
        raise SystemExit(f"loom: --app {spec!r}: expected MODULE:ATTR, e.g. agents:app")
    sys.path.insert(0, os.getcwd())
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise SystemExit(f"loom: --app {spec}: cannot import {module_name}: {e}") from None
    app = getattr(module, attr or "app", None)
    if not isinstance(app, App):
        raise SystemExit(f"loom: --app {spec}: {module_name}.{attr or 'app'} is not a loom.App")
    return app


def main(argv: Optional[List[str]] = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    spec = None
    if "--app" in args:
        i = args.index("--app")
        if i + 1 >= len(args):
            raise SystemExit(f"loom: --app needs MODULE:ATTR\n{USAGE}")
        spec = args[i + 1]
        del args[i:i + 2]
    elif any(a.startswith("--app=") for a in args):
        i = next(i for i, a in enumerate(args) if a.startswith("--app="))
        spec = args.pop(i)[len("--app="):]
    app = _load(spec) if spec else App()
    return app.main(args)


if __name__ == "__main__":
    sys.exit(main())
