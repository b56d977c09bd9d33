// The Node.js package's durable step (docs/benchmarks.md, "TypeScript"), in one process:
//   MODE=steps (default): a 200-step JavaScript workflow against the same steps in C++
//     ("bench.steps", registered on the same App by the addon), on SQLite with durable
//     commits, interleaved rounds: wall per step and the ratio.
//   MODE=postgres: the two figures bench/dbos/dbos_bench.mjs measures for DBOS Transact, on
//     the server LOOM_DATABASE_URL names: the step of a 200-step workflow run alone, and 64
//     workflows of 20 steps at once (submitted, then one in-process worker runs them).
// ROUNDS rounds (default 5); one JSON line per round. DURABILITY (default "full") sets
// storage.eventStore.durability ("normal": no fsync per step, the crossings' cost alone).
//   LOOM_NODE_ADDON=build/release/node/loom.node node bench/node_bench.mjs
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { App } from "../node/index.mjs";
import { native } from "../node/lib/native.mjs";

const rounds = Number(process.env.ROUNDS ?? 5);
const mode = process.env.MODE ?? "steps";

function makeApp() {
  const home = path.join(mkdtempSync(path.join(tmpdir(), "loom-node-bench-")), "home");
  const app = new App({ storage: { eventStore: { durability: process.env.DURABILITY ?? "full" } } }, { home });
  app.workflow("js.steps", async (ctx, input) => {
    for (let i = 0; i < input.steps; i++) await ctx.step(`s${i}`, async () => ({ i }));
    return input.steps;
  });
  native.benchWorkflows(app.native);
  return app;
}

async function perStepMicros(app, workflow, n) {
  let boot = Infinity;  // the operation's own cost: the fastest of three runs of no step
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await app.run(workflow, { steps: 0 });
    boot = Math.min(boot, performance.now() - t);
  }
  let t0 = performance.now();
  await app.run(workflow, { steps: n });
  return ((performance.now() - t0 - boot) * 1000) / n;
}

if (mode === "steps") {
  for (let round = 1; round <= rounds; round++) {
    const app = makeApp();
    await app.run("js.steps", { steps: 1 });  // warm
    const order = round % 2 ? ["js.steps", "bench.steps"] : ["bench.steps", "js.steps"];
    const out = {};
    for (const w of order) out[w] = await perStepMicros(app, w, 200);
    console.log(JSON.stringify({ round, jsUsPerStep: out["js.steps"], cppUsPerStep: out["bench.steps"],
                                 ratio: out["js.steps"] / out["bench.steps"] }));
  }
} else {
  // As bench/dbos/dbos_bench.mjs does: one app in one process, warmed by one 20-step run.
  const app = makeApp();
  await app.run("js.steps", { steps: 20 });
  for (let round = 1; round <= rounds; round++) {
    const sequentialUsPerStep = await perStepMicros(app, "js.steps", 200);
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 64 }, () => app.submit("js.steps", { steps: 20 })));
    const submitted = performance.now();
    const tally = await app.worker({ concurrency: 64, pollMs: 20 }).runUntilIdle();
    const t1 = performance.now();
    if (tally.runs !== 64) throw new Error(`the worker ran ${tally.runs} runs, not 64`);
    console.log(JSON.stringify({ round, sequentialUsPerStep, concurrentStepsPerSecond: (64 * 20) / ((t1 - t0) / 1000),
                                 workerStepsPerSecond: (64 * 20) / ((t1 - submitted) / 1000) }));
  }
}
