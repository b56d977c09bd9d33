// What an adversarial review found, kept as tests: hostile values and errors never crash or
// hang the process, a park settles every pending promise, workers never block the event loop.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as loom from "../index.mjs";
import { tempDir } from "./support.mjs";

const newApp = (config = {}) => new loom.App(config, { home: path.join(tempDir(), "home") });

test("a step whose result's getter throws fails the step, naming it", async () => {
  const app = newApp();
  app.workflow("getter", async (ctx) => ctx.step("g", async () => ({ get x() { throw new Error("boom"); } })));
  const run = await app.run("getter");
  assert.equal(run.status, "failed");
  assert.match(run.error.message, /could not be read: boom/);
});

test("values JSON cannot hold in ctx calls are rejected, not a crash", async () => {
  const app = newApp();
  app.tool("t", {}, async () => "ok");
  app.workflow("bad", async (ctx) => {
    await assert.rejects(async () => ctx.effect("s", "t", { n: 1n }), loom.InvalidArgumentError);
    const outcomes = await ctx.effects([{ stepId: "e", effectId: "t", input: undefined }]);
    return outcomes[0].output;
  });
  assert.equal((await app.run("bad")).output, "ok");
});

test("hostile throws fail the step and never hang", async () => {
  const app = newApp();
  app.workflow("sym", async (ctx) => ctx.step("s", async () => { throw Symbol("x"); }));
  app.workflow("nullproto", async (ctx) => ctx.step("n", async () => { throw Object.create(null); }));
  app.workflow("badmsg", async (ctx) => ctx.step("b", async () => {
    const e = new Error("x");
    Object.defineProperty(e, "message", { get() { throw new Error("no"); } });
    throw e;
  }));
  for (const w of ["sym", "nullproto", "badmsg"]) {
    const run = await app.run(w);
    assert.equal(run.status, "failed", w);
  }
});

test("a park rejects the workflow's other pending calls with Suspended", async () => {
  const app = newApp();
  const seen = [];
  app.workflow("both", async (ctx) => {
    const results = await Promise.allSettled([ctx.waitForSignal("go"), ctx.step("after", async () => 1)]);
    seen.push(results.map((r) => r.status === "rejected" ? r.reason.name : "fulfilled"));
    return "unreachable";
  });
  const run = await app.run("both");
  assert.equal(run.status, "parked");
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(seen, [["Suspended", "Suspended"]]);
});

test("workers: stop twice, two workers, start after stop, runUntilIdle after stop", async () => {
  const app = newApp();
  app.workflow("one", async (ctx) => ctx.step("s", async () => 1));
  const w1 = app.worker({ pollMs: 20 }).start();
  const w2 = app.worker({ pollMs: 20 }).start();
  await w1.stop(1);
  await w1.stop(1);
  assert.throws(() => w1.start(), loom.FailedPreconditionError);
  assert.throws(() => w1.runUntilIdle(), loom.FailedPreconditionError);
  const run = await app.submit("one");
  const deadline = Date.now() + 10_000;
  while ((await app.runs({ status: "completed" })).length === 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  await w2.stop(1);
  assert.equal((await app.resume(run.id)).output, 1);
});

test("one JavaScript model object serves two agents", async () => {
  const app = newApp();
  const model = { id: "mine", complete: async () => ({ role: "assistant", content: "mine" }) };
  app.agent("a", { model });
  app.agent("b", { model });
  assert.equal((await app.run("b", "x")).output.answer, "mine");
});

test("onWarn may return nothing", async () => {
  const warnings = [];
  const app = newApp({ observability: { onWarn: (m) => { warnings.push(m); } } });
  app.tool("big", {}, async () => "z".repeat(3000));
  app.agent("a", { model: loom.ScriptedModel({ turns: [{ toolCalls: [{ name: "big", arguments: {} }] }, { answer: "ok" }] }), tools: ["big"] });
  // a state-growth warning needs the option; a run with none still must not fail on onWarn
  assert.equal((await app.run("a", "go")).status, "completed");
});

test("a __proto__ member stays a member, not the prototype", async () => {
  const app = newApp();
  app.workflow("echo", async (ctx, input) => ({ admin: input.isAdmin ?? null, keys: Object.keys(input) }));
  const run = await app.run("echo", JSON.parse('{"__proto__": {"isAdmin": true}, "user": "u"}'));
  assert.deepEqual(run.output, { admin: null, keys: ["__proto__", "user"] });
});

test("ctx.sleep refuses a duration that is not a finite number of milliseconds", async () => {
  const app = newApp();
  app.workflow("nap", async (ctx, input) => ctx.sleep("nap", input === "inf" ? Infinity : NaN));
  for (const input of ["inf", "nan"]) {
    const run = await app.run("nap", input);
    assert.equal(run.status, "failed");
    assert.match(run.error.message, /ms must be a number of milliseconds/);
  }
});

test("an id that looks like an option is an id, not an option", async () => {
  const app = newApp();
  app.workflow("one", async () => 1);
  await app.run("one");
  await assert.rejects(app.state("--help"), loom.LoomError);
});
