// DBOS Transact (the npm package, pinned in package.json) beside Loom on the same PostgreSQL
// server (docs/benchmarks.md, "PostgreSQL"): the durable step of 200-step workflows run one
// after another (Loom: BM_PgRuntimeStep) and 64 workflows of 20 steps at once (Loom:
// BM_PgConcurrentRuns/64). Each step returns a small value, as Loom's bench.steps does.
// LOOM_BENCH_POSTGRES_URL names the server; DBOS keeps its tables in a database of its own
// (dbos_bench, created by DBOS). Prints one JSON line per round; ROUNDS rounds (default 5).
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
await DBOS.launch();
await stepsWorkflow(20);  // warm up: connections, prepared plans

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
