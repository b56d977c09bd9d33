// app.worker() in a Node.js process: 200 concurrent runs with async tools, none twice, while
// the event loop stays responsive; and `node app.mjs <subcommand>` / loom-node for a shell.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import v8 from "node:v8";
import vm from "node:vm";
import * as loom from "../index.mjs";
import { tempDir, writeModule, runNode, loomJson, packageDir } from "./support.mjs";

test("200 concurrent runs with async tools complete once each; a timer keeps firing on time", async () => {
  const app = new loom.App({}, { home: path.join(tempDir(), "home") });
  const witness = new Map();
  app.tool("fetch", { parameters: { type: "object" } }, async ({ run, page }) => {
    await new Promise((r) => setTimeout(r, 5));
    const key = `${run}/${page}`;
    witness.set(key, (witness.get(key) ?? 0) + 1);
    return { page };
  });
  class PerRun {
    id = "per-run";
    async complete(request) {
      const prompt = request.messages.find((m) => m.role === "user").content;
      const done = request.messages.filter((m) => m.role === "tool").length;
      if (done === 3) return { role: "assistant", content: `read ${prompt}` };
      return { role: "assistant", toolCalls: [{ id: `c${done}`, name: "fetch", arguments: { run: prompt, page: done } }] };
    }
  }
  app.agent("reader", { model: new PerRun(), tools: ["fetch"] });
  const ids = [];
  for (let i = 0; i < 200; i++) ids.push((await app.submit("reader", `run-${i}`)).id);
  let last = Date.now();
  let worstLag = 0;
  let ticks = 0;
  const timer = setInterval(() => {
    const now = Date.now();
    worstLag = Math.max(worstLag, now - last - 10);
    last = now;
    ticks++;
  }, 10);
  const started = Date.now();
  const worker = app.worker({ concurrency: 200, pollMs: 50 });
  const tally = await worker.runUntilIdle();
  const elapsed = Date.now() - started;
  clearInterval(timer);
  assert.deepEqual(tally, { runs: 200, startFailed: 0, storeFailed: false });
  const rows = new Map((await app.runs()).map((r) => [r.id, r.status]));
  assert.deepEqual(ids.map((id) => rows.get(id)), Array(200).fill("completed"));
  assert.equal(witness.size, 600);
  assert.deepEqual([...new Set(witness.values())], [1]);
  // A loop the runs blocked would fire once, after them; a responsive one fires all along
  // (the bound leaves room for a loaded 2-core machine running other tests).
  assert.ok(worstLag < 1000, `the event loop stalled for ${worstLag} ms`);
  assert.ok(ticks >= (elapsed / 10) * 0.25, `${ticks} timer ticks in ${elapsed} ms`);
});

test("a started worker runs what is submitted and stops on request", async () => {
  const app = new loom.App({}, { home: path.join(tempDir(), "home") });
  app.workflow("double", async (ctx, input) => ctx.step("double", async () => input * 2));
  const worker = app.worker({ pollMs: 20 }).start();
  const run = await app.submit("double", 21);
  const deadline = Date.now() + 10_000;
  while ((await app.runs({ status: "completed" })).length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await worker.stop(1);
  assert.equal((await app.resume(run.id)).output, 42);
  assert.throws(() => worker.start(), loom.FailedPreconditionError);
});

test("a worker nobody keeps a reference to is not collected while it runs", async () => {
  v8.setFlagsFromString("--expose-gc");
  const gc = vm.runInNewContext("gc");
  const app = new loom.App({}, { home: path.join(tempDir(), "home") });
  app.workflow("slow", async (ctx) => {
    for (let i = 0; i < 3; i++) await ctx.step(`s${i}`, () => new Promise((r) => setTimeout(() => r(i), 10)));
    return "done";
  });
  await Promise.all(Array.from({ length: 30 }, () => app.submit("slow")));
  const idle = app.worker({ concurrency: 30 }).runUntilIdle();  // the worker object is dropped at once
  const collect = setInterval(() => gc(), 5);
  try {
    assert.equal((await idle).runs, 30);
  } finally {
    clearInterval(collect);
  }
  const runs = await app.runs();
  assert.deepEqual(runs.map((r) => r.status), Array(30).fill("completed"));
});

test("node app.mjs <subcommand> and loom-node --app give the whole command line", () => {
  const dir = tempDir();
  writeModule(dir, "doubling.mjs", `
    import { App } from "@PACKAGE@";
    export const app = new App({}, { home: "home" });
    app.workflow("double", async (ctx, input) => {
      const value = await ctx.step("double", async () => input * 2);
      const plus = await ctx.waitForSignal("plus");
      return ctx.step("again", async () => value + plus);
    });
    if (process.argv[1] === new URL(import.meta.url).pathname) process.exitCode = await app.main();
  `);
  const started = runNode(dir, ["doubling.mjs", "run", "double", "--input", "21", "--json"]);
  assert.equal(started.status, 0, started.stderr);
  const run = JSON.parse(started.stdout);
  assert.deepEqual([run.status, run.waitingFor], ["parked", "plus"]);
  const done = runNode(dir, [path.join(packageDir, "bin/loom-node.mjs"), "--app", "./doubling.mjs", "signal", run.id, "plus", "1", "--json"]);
  assert.equal(JSON.parse(done.stdout).output, 43, done.stderr);
  assert.deepEqual(loomJson(path.join(dir, "home"), "ls", "--json").map((r) => r.status), ["completed"]);
  const bad = runNode(dir, [path.join(packageDir, "bin/loom-node.mjs"), "--app", "./nope.mjs", "ls"]);
  assert.notEqual(bad.status, 0);
  assert.match(bad.stderr, /cannot import \.\/nope\.mjs/);
});
