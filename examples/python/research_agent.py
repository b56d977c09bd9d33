"""The demo's research agent, in Python: two Python tools (search, fetch_report), the
claim-check on fetch_report (its 1.5-4 kB pages are offloaded; the transcript keeps a
preview), and the scripted model of examples/agents/scripts/research.json, or an
OpenAI-compatible server when LOOM_OPENAI_BASE_URL and LOOM_OPENAI_MODEL are set.

    python examples/python/research_agent.py            # run it, print the answer
    python -m loom --app research_agent:app ls          # the same home from a shell
    python -m loom --app research_agent:app resume ID   # continue a run that was killed

LOOM_TOOL_WITNESS=FILE appends one line per tool call that really ran (as the demo's
subprocess tools do), so a crash test can count them.
"""

from __future__ import annotations

import os
import random
import sys
import time
from pathlib import Path

import loom

HERE = Path(__file__).resolve().parent
WORDS = ("revenue margin growth quarter region forecast customer churn pipeline cost segment "
         "outlook price volume channel backlog").split()

app = loom.App({
    "execution": {"claimCheck": {"toolIds": ["fetch_report"], "preview": 256}},
    "storage": {"home": os.environ.get("LOOM_HOME", ".loom")},
})


def witness(line: str) -> None:
    path = os.environ.get("LOOM_TOOL_WITNESS")
    if path:
        with open(path, "a") as f:
            f.write(line + "\n")


@app.tool()
def search(query: str) -> dict:
    """Searches the quarterly reports; returns the matching pages with snippets."""
    witness(f"search query={query}")
    rng = random.Random(query)
    hits = [{"page": rng.randint(1, 10), "title": f"Quarterly report, page {p}",
             "snippet": " ".join(rng.choice(WORDS) for _ in range(30))} for p in range(1, 6)]
    return {"query": query, "total": len(hits), "hits": hits}


@app.tool()
def fetch_report(page: int) -> dict:
    """Fetches one page of the quarterly report."""
    time.sleep(float(os.environ.get("LOOM_FETCH_DELAY", "0.15")))  # a slow source
    witness(f"fetch_report page={page}")
    rng = random.Random(page * 7919)
    body = " ".join(rng.choice(WORDS) for _ in range(rng.randint(250, 600)))
    return {"id": f"r-{page}", "title": f"Quarterly report, page {page}", "page": page,
            "body": body}


def the_model() -> loom.Model:
    base_url = os.environ.get("LOOM_OPENAI_BASE_URL")
    if base_url:
        return loom.OpenAIModel(base_url, os.environ["LOOM_OPENAI_MODEL"],
                                api_key_env=os.environ.get("LOOM_OPENAI_KEY_ENV", "OPENAI_API_KEY"))
    return loom.ScriptedModel(HERE.parent / "agents" / "scripts" / "research.json")


app.agent("research", model=the_model(), tools=[search, fetch_report],
          system="You are a research analyst. Use the tools; cite report pages.", max_turns=20)

PROMPT = "Summarize this quarter's revenue by region and what drives churn."

if __name__ == "__main__":
    run = app.run("research", {"prompt": PROMPT}, id=sys.argv[1] if len(sys.argv) > 1 else None)
    print(f"run {run.id}: {run.status}")
    print(run.output["answer"] if run.status == "completed" else run.error or run.waiting_for)
