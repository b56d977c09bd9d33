"""The Python package against the core it runs on, in one process (docs/benchmarks.md, "Python").

Each part runs the Python workload and its C++ twin (registered on the same App by
loom._native.add_bench_*: the same steps, the same agent, the same tool output) in interleaved
rounds on fresh homes, and prints medians, ranges and the ratio Python / C++:

  steps    sequential durable steps on SQLite (durability full): wall per step
  memory   steps without an fsync (durability normal): CPU per step, and Python's extra CPU
           per step in µs (an App keeps its runs in loom.db, so the memory log is not offered)
  agent    a 200-turn agent (Python tool + Python model vs C++ tool + C++ model), SQLite
  workers  N concurrent agent runs (3 turns of --latency-ms, 2 tool calls) in one app.worker:
           wall and peak RSS, each side in a fresh process

    PYTHONPATH=build/release/python /usr/bin/python3 bench/python_bench.py [--rounds 5]
        [--parts steps,memory,agent,workers] [--runs 1000] [--latency-ms 200]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import loom
from loom import _native

WORDS = ["revenue", "margin", "growth", "quarter", "region", "forecast", "customer", "churn",
         "pipeline", "cost", "segment", "outlook", "price", "volume", "channel", "backlog"]


def fetch_report(page: int) -> dict:
    """bench/agent_bench.cc's generator, byte for byte (the C++ twin's tool)."""
    seed = (page * 7919 + 104729) % 2147483647 or 1

    def rnd():
        nonlocal seed
        seed = (seed * 16807) % 2147483647
        return seed

    target = 1430 + rnd() % 2470
    body = ""
    while len(body) < target:
        body += ("" if not body else " ") + WORDS[rnd() % 16]
    return {"id": f"r-{page}", "title": f"Quarterly report, page {page}", "page": page,
            "body": body[:target]}


class PagesModel:
    id = "py_pages"

    def __init__(self, pages: int, latency_ms: int = 0):
        self.pages, self.latency = pages, latency_ms / 1000

    def complete(self, request, ctx):
        turn = int(ctx.step_id.split(":")[1])
        if self.latency:
            time.sleep(self.latency)
        if turn > self.pages:
            return {"role": "assistant", "content": "read every page"}
        return {"role": "assistant", "toolCalls": [
            {"id": f"call_{turn}", "name": "py_fetch_report", "arguments": {"page": turn}}]}


def make_app(home: str, memory: bool = False, pages: int = 200, latency_ms: int = 0) -> loom.App:
    storage = {"eventStore": {"durability": "normal" if memory else "full"}}
    app = loom.App({"storage": storage}, home=home)

    @app.workflow("py.steps")
    def steps(ctx, input):
        for i in range(input["steps"]):
            ctx.step(f"s{i}", lambda i=i: {"i": i})
        return input["steps"]

    @app.tool("py_fetch_report")
    def py_fetch_report(page: int):
        return fetch_report(page)

    app.agent("py.agent", model=PagesModel(pages, latency_ms), tools=["py_fetch_report"],
              max_turns=pages + 1)
    _native.add_bench_workflows(app._native)
    _native.add_bench_agent(app._native, "cpp.agent", pages, latency_ms)
    return app


def timed(fn):
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - wall, time.process_time() - cpu


def summary(values):
    return f"{statistics.median(values):.3f} ({min(values):.3f}-{max(values):.3f})"


def part_steps(rounds: int, n: int, memory: bool) -> None:
    python, cpp = [], []
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as home:
            app = make_app(home, memory=memory)
            app.run("py.steps", {"steps": 1})  # warm: boot paths, imports
            order = [("py.steps", python), ("bench.steps", cpp)]
            for name, out in (order if r % 2 == 0 else order[::-1]):
                wall0, cpu0 = timed(lambda: app.run(name, {"steps": 0}))
                wall, cpu = timed(lambda: app.run(name, {"steps": n}))
                out.append(((wall - wall0) / n * 1e6, (cpu - cpu0) / n * 1e6))
    what = "SQLite, no fsync, CPU µs/step" if memory else "SQLite durable, wall µs/step"
    pick = 1 if memory else 0
    py, cc = [v[pick] for v in python], [v[pick] for v in cpp]
    ratio = statistics.median(py) / statistics.median(cc)
    print(f"{what}: Python {summary(py)}  C++ {summary(cc)}  ratio {ratio:.2f}x"
          + (f"  extra {statistics.median(py) - statistics.median(cc):.2f} µs" if memory else ""))


def part_agent(rounds: int, turns: int) -> None:
    python, cpp = [], []
    for r in range(rounds):
        with tempfile.TemporaryDirectory() as home:
            app = make_app(home, pages=turns)
            order = [("py.agent", python), ("cpp.agent", cpp)]
            for name, out in (order if r % 2 == 0 else order[::-1]):
                wall, _ = timed(lambda: app.run(name, {"prompt": "read"}))
                out.append(wall)
    print(f"{turns}-turn agent, SQLite durable, wall s: Python {summary(python)}  "
          f"C++ {summary(cpp)}  ratio {statistics.median(python) / statistics.median(cpp):.2f}x")


def one_worker_run(kind: str, runs: int, latency_ms: int) -> dict:
    with tempfile.TemporaryDirectory() as home:
        app = make_app(home, pages=2, latency_ms=latency_ms)
        name = "py.agent" if kind == "python" else "cpp.agent"
        for i in range(runs):
            app.submit(name, {"prompt": f"run {i}"})
        started = time.perf_counter()
        with app.worker(concurrency=runs, poll_ms=50):
            while len(app.runs(status="completed")) < runs:
                time.sleep(0.05)
        wall = time.perf_counter() - started
    return {"wall": wall, "peakRssMb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def part_workers(rounds: int, runs: int, latency_ms: int) -> None:
    rows = {"python": [], "cpp": []}
    for r in range(rounds):
        for kind in (["python", "cpp"] if r % 2 == 0 else ["cpp", "python"]):
            out = subprocess.run([sys.executable, __file__, "--one-worker-run", kind, "--runs",
                                  str(runs), "--latency-ms", str(latency_ms)],
                                 capture_output=True, text=True, check=True)
            rows[kind].append(json.loads(out.stdout))
    ideal = 3 * latency_ms / 1000
    for kind, label in (("python", "Python tool + model"), ("cpp", "C++ tool + model")):
        walls = [x["wall"] for x in rows[kind]]
        rss = [x["peakRssMb"] for x in rows[kind]]
        print(f"{runs} runs in one app.worker, {label}: wall s {summary(walls)} "
              f"(ideal {ideal:.1f}), peak RSS MB {summary(rss)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--parts", default="steps,memory,agent,workers")
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--memory-steps", type=int, default=5000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--runs", type=int, default=1000)
    parser.add_argument("--latency-ms", type=int, default=200)
    parser.add_argument("--one-worker-run")
    args = parser.parse_args()
    if args.one_worker_run:
        print(json.dumps(one_worker_run(args.one_worker_run, args.runs, args.latency_ms)))
        return
    parts = args.parts.split(",")
    if "steps" in parts:
        part_steps(args.rounds, args.steps, memory=False)
    if "memory" in parts:
        part_steps(args.rounds, args.memory_steps, memory=True)
    if "agent" in parts:
        part_agent(args.rounds, args.turns)
    if "workers" in parts:
        part_workers(max(1, args.rounds // 2), args.runs, args.latency_ms)


if __name__ == "__main__":
    main()
