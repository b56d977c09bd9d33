"""A workflow that parks for a person: a refund above a limit waits for an approval signal
(for at most a day), then pays or declines. Nothing runs while it waits; the run survives
restarts, and the approval may come from any process.

    python examples/python/approval.py 250                   # starts a run; it parks
    python -m loom --app approval:app ls                     # parked, waiting for approval
    python -m loom --app approval:app signal ID approval '{"approved": true, "by": "ana"}'
    python -m loom --app approval:app worker                 # declines what times out
"""

from __future__ import annotations

import os
import sys
import uuid

import loom

app = loom.App(home=os.environ.get("LOOM_HOME", ".loom"))
LIMIT = 100


@app.workflow("refund", description="Refunds an order; above the limit, a person approves.")
def refund(ctx: loom.Context, input: dict) -> dict:
    amount = input["amount"]
    # A step: an id chosen once and recorded, so every replay sees the same one.
    refund_id = ctx.step("refund-id", lambda: f"rf-{uuid.uuid4().hex[:8]}")
    if amount > LIMIT:
        came, decision = ctx.wait_for_signal_until("approval", "approval-deadline", 24 * 3600,
                                                   reason="approval")
        if not came or not decision.get("approved"):
            return {"refund": refund_id, "status": "declined",
                    "why": "no approval in time" if not came else f"declined by {decision.get('by')}"}
    receipt = ctx.step("pay", lambda: {"paid": amount, "refund": refund_id})
    return {"refund": refund_id, "status": "paid", "receipt": receipt}


if __name__ == "__main__":
    run = app.run("refund", {"amount": int(sys.argv[1]) if len(sys.argv) > 1 else 250})
    print(f"run {run.id}: {run.status}" + (f", waiting for {run.waiting_for!r}"
                                             if run.status == "parked" else f": {run.output}"))
