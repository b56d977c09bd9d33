// Workflows in JavaScript: steps, effects, timers, signals and the replay contract.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as loom from "../index.mjs";
import { tempDir, loomJson } from "./support.mjs";

const newApp = (config = {}) => {
  const home = path.join(tempDir(), "home");
  return [new loom.App(config, { home }), home];
};

test("a recorded step is not run again on resume", async () => {
  const [app] = newApp();
  const ran = [];
  app.workflow("greet", async (ctx, input) => {
    const name = await ctx.step("pick", async () => { ran.push("pick"); return input.name.toUpperCase(); });
    const payload = await ctx.waitForSignal("go");
    return { greeting: `Hello, ${name}`, payload };
  });
  const first = await app.run("greet", { name: "ada" });
  assert.deepEqual([first.status, first.waitingFor], ["parked", "go"]);
  const done = await app.signal(first.id, "go", { n: 1 });
  assert.deepEqual(done.output, { greeting: "Hello, ADA", payload: { n: 1 } });
  assert.deepEqual(ran, ["pick"]);
  assert.equal(done.replayedSteps, 1);
});

test("a failed step fails the run with its code; a loom error keeps its code", async () => {
  const [app] = newApp();
  app.workflow("fragile", async (ctx) => {
    try {
      await ctx.step("boom", async () => { throw new RangeError("no such page"); });
    } catch (e) {
      assert.ok(e instanceof loom.StepFailedError);
      assert.equal(e.stepId, "boom");
      assert.equal(e.cause, "internal");
      throw e;
    }
  });
  const run = await app.run("fragile");
  assert.equal(run.status, "failed");
  assert.equal(run.error.code, "stepFailed");
  assert.match(run.error.message, /step 'boom' threw RangeError: no such page/);
  app.workflow; // registrations are closed now
  assert.throws(() => app.workflow("late", async () => 1), loom.FailedPreconditionError);
});

test("a step returning what JSON cannot hold fails naming the step and the value", async () => {
  const [app] = newApp();
  const cyclic = {}; cyclic.self = cyclic;
  app.workflow("undef", async (ctx) => ctx.step("u", async () => undefined));
  app.workflow("big", async (ctx) => ctx.step("b", async () => ({ n: 10n })));
  app.workflow("cycle", async (ctx) => ctx.step("c", async () => cyclic));
  const u = await app.run("undef");
  assert.match(u.error.message, /what step 'u' returned is not JSON: undefined at \$/);
  const b = await app.run("big");
  assert.match(b.error.message, /a BigInt at \$\.n/);
  const c = await app.run("cycle");
  assert.match(c.error.message, /nested deeper than 32 levels \(a cycle\?\)/);
});

test("parallel effects run at once and keep their call order", async () => {
  const [app] = newApp();
  app.tool("slow", { parameters: { type: "object" } }, async ({ n }) => {
    await new Promise((r) => setTimeout(r, 200));
    if (n === 3) throw new loom.InvalidArgumentError("three is refused");
    return n * 10;
  });
  app.workflow("fan", async (ctx) => {
    const outcomes = await ctx.effects([1, 2, 3, 4].map((n) => ({ stepId: `call:${n}`, effectId: "slow", input: { n } })), 4);
    return outcomes.map((o) => (o.error ? o.error.code : o.output));
  });
  const started = Date.now();
  const run = await app.run("fan");
  assert.deepEqual(run.output, [10, 20, "stepFailed", 40]);
  assert.ok(Date.now() - started < 700, `took ${Date.now() - started} ms`);
});

test("a durable timer parks and a worker resumes it when due", async () => {
  const [app] = newApp();
  app.workflow("nap", async (ctx) => { await ctx.sleep("nap", 300); return "rested"; });
  const run = await app.run("nap");
  assert.deepEqual([run.status, run.parkReason], ["parked", "timer"]);
  const worker = app.worker({ pollMs: 50 }).start();
  const deadline = Date.now() + 10_000;
  while ((await app.runs({ status: "completed" })).length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  await worker.stop(1);
  assert.equal((await app.resume(run.id)).output, "rested");
});

test("a caught Suspended does not let the run go on", async () => {
  const [app] = newApp();
  app.workflow("sneaky", async (ctx) => {
    try { await ctx.waitForSignal("go"); } catch { /* swallowed */ }
    return "finished without the signal";
  });
  const run = await app.run("sneaky");
  assert.deepEqual([run.status, run.waitingFor], ["parked", "go"]);
});

test("cancel, bad operations and the runs the loom command shows", async () => {
  const [app, home] = newApp();
  app.workflow("waits", async (ctx) => ctx.waitForSignal("never"));
  const run = await app.run("waits", null, { id: "w-1", subject: "user-7" });
  await assert.rejects(app.run("waits", null, { id: "w-1" }), loom.AlreadyExistsError);
  await assert.rejects(app.run("nope"), loom.NotFoundError);
  await assert.rejects(app.run("waits", { n: 10n }), loom.InvalidArgumentError);
  const rows = loomJson(home, "ls", "--json");
  assert.deepEqual(rows.map((r) => [r.id, r.workflow, r.status, r.subject]), [["w-1", "waits", "parked", "user-7"]]);
  assert.equal((await app.cancel(run.id, "not needed")).status, "cancelled");
  await assert.rejects(app.signal(run.id, "never", 1), loom.FailedPreconditionError);
  assert.equal((await app.log(run.id))[0].type, "EXECUTION_STARTED");
});

test("the context used inside a step's function is refused, not a deadlock", async () => {
  const [app] = newApp();
  app.workflow("nested", async (ctx) => ctx.step("outer", async () => ctx.waitForSignal("x")));
  const run = await app.run("nested");
  assert.equal(run.status, "failed");
  assert.match(run.error.message, /ctx\.waitForSignal\(\) was called inside step 'outer'/);
});

test("concurrent branches of a workflow may each await steps", async () => {
  const [app] = newApp();
  app.workflow("branches", async (ctx) => {
    const [a, b] = await Promise.all([
      ctx.step("a", async () => 1),
      (async () => { await new Promise((r) => setTimeout(r, 20)); return ctx.step("b", async () => 2); })(),
    ]);
    return a + b;
  });
  assert.equal((await app.run("branches")).output, 3);
});

test("steps started together run one after another in the order asked, and are journaled in it", async () => {
  const [app] = newApp();
  const trace = [];
  const slow = (name, ms) => async () => {
    trace.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, ms));
    trace.push(`end ${name}`);
    return name;
  };
  app.workflow("together", async (ctx) => Promise.all([
    ctx.step("a", slow("a", 30)), ctx.step("b", () => { trace.push("b"); return "b"; }), ctx.step("c", slow("c", 1))]));
  const run = await app.run("together");
  assert.deepEqual(run.output, ["a", "b", "c"]);
  assert.deepEqual(trace, ["start a", "end a", "b", "start c", "end c"]);
  const completed = (await app.log(run.id)).filter((e) => e.type === "STEP_COMPLETED").map((e) => e.stepId);
  assert.deepEqual(completed, ["a", "b", "c"]);
});

test("a step's function that throws at once, or returns at once, is journaled like an async one", async () => {
  const [app] = newApp();
  let calls = 0;
  app.workflow("sync", async (ctx) => {
    const v = await ctx.step("value", () => { calls++; return { n: 1 }; });
    try {
      await ctx.step("boom", () => { throw new Error("not now"); });
    } catch (e) {
      return { v, code: e.code, message: e.message };
    }
    return "unreachable";
  });
  const run = await app.run("sync");
  assert.equal(run.status, "completed", JSON.stringify(run.error));
  assert.deepEqual(run.output.v, { n: 1 });
  assert.match(run.output.message, /not now/);
  assert.equal(calls, 1);
  const again = await app.resume(run.id);
  assert.deepEqual(again.output, run.output);
  assert.equal(calls, 1, "a recorded step is not run on replay");
});

// Guards against running a step's function ahead of the core (a speed-up tried and withdrawn:
// docs/benchmarks.md, "TypeScript").
test("a step whose failure is recorded is not run again on replay", async () => {
  const [app] = newApp();
  const ran = [];
  app.workflow("w", async (ctx) => {
    try { await ctx.step("boom", async () => { ran.push("boom"); throw new RangeError("x"); }); } catch {}
    await ctx.waitForSignal("go");
    return 1;
  });
  const first = await app.run("w");
  assert.equal(first.status, "parked");
  assert.equal((await app.signal(first.id, "go", {})).status, "completed");
  assert.deepEqual(ran, ["boom"]);
});

test("no step's function runs after the run parked, even when the park was caught", async () => {
  const [app] = newApp();
  const ran = [];
  app.workflow("p", async (ctx) => {
    try { await ctx.waitForSignal("go"); } catch (e) { ran.push(`caught ${e.name}`); }
    try { await ctx.step("after", async () => { ran.push("after ran"); return 1; }); } catch (e) { ran.push(`step rejected ${e.name}`); }
    return 2;
  });
  const run = await app.run("p");
  await new Promise((r) => setTimeout(r, 200));
  assert.equal(run.status, "parked");
  assert.deepEqual(ran, ["caught Suspended", "step rejected Suspended"]);
});

test("a stopped effect (`loom kill`) stops a step before its function runs", async () => {
  const [app, home] = newApp();
  const ran = [];
  app.workflow("k", async (ctx) => ctx.step("s", async () => { ran.push("s"); return 1; }));
  assert.equal((await app.run("k")).status, "completed");
  loomJson(home, "kill", "--all", "--json");
  const stopped = await app.run("k");
  assert.deepEqual([stopped.status, stopped.parkReason], ["parked", "effectStopped"]);
  assert.deepEqual(ran, ["s"]);
  loomJson(home, "unkill", "--all", "--json");
  assert.equal((await app.resume(stopped.id)).output, 1);
  assert.deepEqual(ran, ["s", "s"]);
});

test("ctx.patched keeps the old path for a run recorded past it, and is journaled", async () => {
  const [app] = newApp();
  const code = { new: false };
  const ran = [];
  app.workflow("fetcher", async (ctx) => {
    await ctx.step("a", async () => 1);
    const useNew = code.new && (await ctx.patched("fetch-v2"));
    const step = useNew ? "fetch-v2" : "fetch";
    await ctx.step(step, async () => { ran.push(step); return step; });
    await ctx.waitForSignal("go");
    return step;
  });
  const old = await app.run("fetcher", null); // on the old code: "fetch" recorded, then parked
  code.new = true; // the change is deployed while it is parked
  assert.equal((await app.signal(old.id, "go", 1)).output, "fetch");
  const fresh = await app.run("fetcher", null);
  assert.equal((await app.signal(fresh.id, "go", 1)).output, "fetch-v2");
  assert.deepEqual(ran, ["fetch", "fetch-v2"]);
  const answers = async (id) =>
    (await app.log(id)).filter((e) => e.stepId === "loom:patch:fetch-v2").map((e) => e.output);
  assert.deepEqual(await answers(old.id), [false]);
  assert.deepEqual(await answers(fresh.id), [true]);
  assert.match((await app.state(fresh.id)).codeVersion, /^build:[0-9a-f]+$/);
});

test("a run continues only on an App of its own version", async () => {
  const home = path.join(tempDir(), "home");
  const appOf = (version) => {
    const app = new loom.App({}, { home, version });
    app.workflow("greet", async (ctx) => {
      await ctx.step("pick", async () => "ada");
      return ctx.waitForSignal("go");
    });
    return app;
  };
  const [v1, v2] = [appOf("v1"), appOf("v2")];
  const run = await v1.run("greet", null);
  assert.equal((await v1.state(run.id)).codeVersion, "v1");
  await assert.rejects(v2.signal(run.id, "go", 7), (e) =>
    e instanceof loom.FailedPreconditionError &&
    e.message.includes("started on code version v1 and this code is version v2"));
  assert.equal((await v1.resume(run.id)).output, 7); // the signal was kept for it
  assert.throws(() => new loom.App({}, { home, version: "v\n2" }), /execution\.codeVersion/);
  assert.throws(() => new loom.App(loom.defineConfig({}), { home, version: "v3" }), /declare execution\.codeVersion/);
  assert.throws(() => new loom.App({ execution: { codeVersion: "v1" } }, { home, version: "v3" }), /disagree/);
  assert.throws(() => new loom.App({ execution: "x" }, { home, version: "v3" }), /must be an object/);
});

test("upgrade moves a run to code that replays it and refuses code that does not", async () => {
  const home = path.join(tempDir(), "home");
  const appOf = (version, first = "pick") => {
    const app = new loom.App({}, { home, version });
    app.workflow("greet", async (ctx) => {
      await ctx.step(first, async () => "ada");
      return ctx.waitForSignal("go");
    });
    return app;
  };
  const [v1, v2, renamed] = [appOf("v1"), appOf("v2"), appOf("v3", "choose")];
  const run = await v1.run("greet", null);
  await assert.rejects(renamed.upgrade(run.id), (e) =>
    e instanceof loom.FailedPreconditionError && e.message.includes("at step 'pick'"));
  const up = await v2.upgrade(run.id);
  assert.deepEqual([up.outcome, up.from, up.to, up.replayedSteps], ["upgraded", "v1", "v2", 1]);
  assert.equal((await v2.upgrade(run.id)).outcome, "current");
  await assert.rejects(v1.signal(run.id, "go", 1), (e) =>
    e instanceof loom.FailedPreconditionError && e.message.includes("started on code version v2"));
  assert.equal((await v2.resume(run.id)).output, 1);
  await assert.rejects(v2.upgrade(run.id), (e) => e instanceof loom.FailedPreconditionError && /has ended/.test(e.message));
  await assert.rejects(v2.upgrade("nope"), (e) => e instanceof loom.NotFoundError);
});

test("fork and rerun make new runs on the code at hand", async () => {
  const home = path.join(tempDir(), "home");
  const appOf = (version, broken) => {
    const app = new loom.App({}, { home, version });
    const ran = [];
    app.workflow("pipeline", async (ctx, input) => {
      await ctx.step("a", async () => { ran.push("a"); return 1; });
      const b = await ctx.step("b", async () => {
        ran.push("b");
        if (broken) throw new loom.FailedPreconditionError("the tool is broken");
        return version;
      });
      return { b, input };
    });
    return [app, ran];
  };
  const [v1] = appOf("v1", true);
  assert.equal((await v1.run("pipeline", "in", { id: "p1" })).status, "failed");
  const [v2, ran2] = appOf("v2", false);
  const rerun = await v2.rerun("p1", { id: "p2" });
  assert.deepEqual([rerun.id, rerun.status, rerun.output], ["p2", "completed", { b: "v2", input: "in" }]);
  assert.deepEqual(ran2, ["b"]); // step a replays from p1's log
  assert.equal((await v2.state("p1")).status, "failed");
  const fork = await v2.fork("p2", "b", { input: { other: true } });
  assert.equal(fork.status, "completed");
  assert.deepEqual(fork.output.input, { other: true });
  assert.equal((await v2.state(fork.id)).codeVersion, "v2");
  await assert.rejects(v2.rerun("p2"), (e) => e instanceof loom.FailedPreconditionError && /did not fail/.test(e.message));
  await assert.rejects(v2.fork("p2", "zzz"), (e) => e instanceof loom.NotFoundError);
});

test("replayCheck finds the runs the code no longer replays", async () => {
  const home = path.join(tempDir(), "home");
  const shape = { second: "b" };
  const app = new loom.App({}, { home, version: "v1" });
  app.workflow("pipeline", async (ctx, input) => {
    await ctx.step("a", async () => 1);
    if (input === "branch") await ctx.step(shape.second, async () => 2);
    return input;
  });
  await app.run("pipeline", "branch", { id: "hit" });
  await app.run("pipeline", "plain", { id: "miss" });
  assert.equal((await app.assertReplays()).matched, 2);
  shape.second = "b2"; // the code renames the step the branch takes
  const report = await app.replayCheck();
  assert.deepEqual([report.checked, report.diverged], [2, 1]);
  const hit = report.runs.find((r) => r.id === "hit");
  assert.deepEqual([hit.outcome, hit.stepId], ["diverged", "b"]);
  await assert.rejects(app.assertReplays(), /hit: diverged at b: the log recorded step 'b'/);
  assert.equal((await app.replayCheck({ last: 1 })).checked, 1);
});
