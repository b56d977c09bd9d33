// DBOS Transact (the npm package, pinned in package.json) beside Loom on the same PostgreSQL
// server (docs/benchmarks.md, "PostgreSQL"): the durable step of 200-step workflows run one
// after another (Loom: BM_PgRuntimeStep) and 64 workflows of 20 steps at once (Loom:
// BM_PgConcurrentRuns/64). Each step returns a small value, as Loom's bench.steps does.
// LOOM_BENCH_POSTGRES_URL names the server; DBOS keeps its tables in a database of its own
// (dbos_bench, created by DBOS). Prints one JSON line per round; ROUNDS rounds (default 5).
// MODE=workers: many workflows at once instead (below).
import { DBOS } from "@dbos-inc/dbos-sdk";

const server = process.env.LOOM_BENCH_POSTGRES_URL;
if (!server) {
  console.error("dbos_bench: set LOOM_BENCH_POSTGRES_URL to a PostgreSQL url");
  process.exit(2);
}
const url = new URL(server);
url.pathname = "/dbos_bench";
const rounds = Number(process.env.ROUNDS ?? 5);

DBOS.setConfig({ name: "loom-bench", applicationVersion: "0.1.0", systemDatabaseUrl: url.toString() });
const stepsWorkflow = DBOS.registerWorkflow(
  async (n) => {
    for (let i = 0; i < n; i++) await DBOS.runStep(async () => ({ i }), { name: `s${i}` });
    return n;
  },
  { name: "steps" },
);
const sleepyWorkflow = DBOS.registerWorkflow(
  async (n, sleepMs) => {
    for (let i = 0; i < n; i++) {
      await DBOS.runStep(async () => {
        await new Promise((resolve) => setTimeout(resolve, sleepMs));
        return { i };
      }, { name: `s${i}` });
    }
    return n;
  },
  { name: "sleepy" },
);
await DBOS.launch();
await stepsWorkflow(20);  // warm up: connections, prepared plans

// MODE=workers: RUNS (default 1000) workflows of 3 steps that each sleep SLEEP_MS (default
// 200) at once, as `loom bench workers --workload steps` runs them on Loom: wall time and this
// process's peak RSS.
if (process.env.MODE === "workers") {
  const runs = Number(process.env.RUNS ?? 1000);
  const sleepMs = Number(process.env.SLEEP_MS ?? 200);
  for (let round = 1; round <= rounds; round++) {
    const t0 = performance.now();
    await Promise.all(Array.from({ length: runs }, () => sleepyWorkflow(3, sleepMs)));
    const wallMs = performance.now() - t0;
    const peakRssBytes = process.resourceUsage().maxRSS * 1024;
    console.log(JSON.stringify({ round, runs, wallMs, idealMs: 3 * sleepMs, peakRssBytes }));
  }
  await DBOS.shutdown();
  process.exit(0);
}

for (let round = 1; round <= rounds; round++) {
  let t0 = performance.now();
  await stepsWorkflow(200);
  const sequentialUsPerStep = ((performance.now() - t0) * 1000) / 200;
  t0 = performance.now();
  await Promise.all(Array.from({ length: 64 }, () => stepsWorkflow(20)));
  const concurrentStepsPerSecond = (64 * 20) / ((performance.now() - t0) / 1000);
  console.log(JSON.stringify({ round, sequentialUsPerStep, concurrentStepsPerSecond }));
}
await DBOS.shutdown();
