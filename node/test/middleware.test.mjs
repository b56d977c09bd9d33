// The record's names beyond the options: claimCheckMiddleware (the classic middleware, with
// defaultDigest, retain, passThrough, envelopesAreData), the content walker
// (visitCitedAddresses, retainRootsOf), and the app's ContentStore / EncryptingContentStore.
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as loom from "../index.mjs";
import { tempDir } from "./support.mjs";

process.env.LOOM_TEST_MASTER_KEY = "5a".repeat(32);

// Workflow "wf" calls effect `effectId` (task "report" unless said) with input {kind}; the tool
// returns what `results[kind]` gives.
function appWith(middleware, results, { effectId = "report" } = {}) {
  const app = new loom.App({ execution: { effectMiddleware: [middleware] } }, { home: path.join(tempDir(), "home") });
  app.tool("report", {}, async ({ kind }) => results[kind]());
  app.tool("other", {}, async ({ kind }) => results[kind]());
  app.workflow("wf", async (ctx, kind) => ctx.effect("call", effectId, { kind }));
  return app;
}

const big = () => ({ rows: "r".repeat(3000) });

test("claimCheckMiddleware offloads an over-cap result to the app's content store, with the record's options", async () => {
  const offloads = [];
  const middleware = loom.claimCheckMiddleware({
    inlineCapBytes: 1024, retain: true, defaultDigest: loom.previewDigest(12),
    onOffload: (info) => { offloads.push(info); },
  });
  const app = appWith(middleware, { big, small: () => ({ rows: "r" }) });
  const small = await app.run("wf", "small");
  assert.deepEqual(small.output, { rows: "r" });

  const run = await app.run("wf", "big");
  const envelope = run.output;
  assert.equal(envelope.__loomClaimCheck, 1);
  assert.equal(envelope.retain, true);
  assert.deepEqual(envelope.digest, { preview: '{"rows":"rrr', truncated: true });
  assert.equal(envelope.size, JSON.stringify(big()).length);
  assert.equal(offloads.length, 1);
  assert.equal(offloads[0].address, envelope.ref.__loomContent);
  assert.equal(await app.contentStore.has(envelope.ref.__loomContent), true);
  assert.deepEqual(await loom.resolveClaimCheck(app, envelope), big());
  // The log records the envelope, never the bytes.
  const log = JSON.stringify(await app.log(run.id));
  assert.ok(!log.includes("r".repeat(100)));
});

test("digests win over defaultDigest; passThrough and effectIds leave results inline", async () => {
  const middleware = loom.claimCheckMiddleware({
    inlineCapBytes: 100, digests: { report: (result) => ({ rows: result.rows.length }) },
    defaultDigest: loom.previewDigest(5), effectIds: ["report"],
    passThrough: (ctx, result) => ctx.effectId === "report" && result.keep === true,
  });
  const app = appWith(middleware, { big, kept: () => ({ keep: true, rows: "k".repeat(500) }) });
  assert.deepEqual((await app.run("wf", "big")).output.digest, { rows: 3000 });
  assert.equal((await app.run("wf", "kept")).output.keep, true);
  const unlisted = appWith(middleware, { big }, { effectId: "other" });
  assert.deepEqual((await unlisted.run("wf", "big")).output, big());
});

test("envelopesAreData: a forged envelope from a tool is offloaded whole, never trusted", async () => {
  const forged = () => ({ __loomClaimCheck: 1, ref: { __loomContent: "a".repeat(64) }, size: 3, retain: true });
  const classic = appWith(loom.claimCheckMiddleware({ inlineCapBytes: 4096 }), { forged });
  const passed = await classic.run("wf", "forged");
  assert.deepEqual(passed.output, { __loomData: forged() }, "a look-alike is inert data");

  const strict = appWith(loom.claimCheckMiddleware({ inlineCapBytes: 4096, envelopesAreData: true }), { forged });
  const run = await strict.run("wf", "forged");
  assert.notEqual(run.output.ref.__loomContent, "a".repeat(64), "the log records the middleware's own envelope");
  const original = await strict.resolveClaimCheck(run.output);
  assert.equal(original.__loomData.ref.__loomContent, "a".repeat(64));
});

test("claimCheckMiddleware refuses bad options with the option's name", () => {
  assert.throws(() => loom.claimCheckMiddleware({ inlineCap: 1 }), (e) => e instanceof TypeError && /unknown option inlineCap/.test(e.message));
  assert.throws(() => loom.claimCheckMiddleware({ inlineCapBytes: -1 }), /option inlineCapBytes must be a whole number/);
  assert.throws(() => loom.claimCheckMiddleware({ store: "s3" }), /option store must be "default"/);
  assert.throws(() => loom.claimCheckMiddleware({ defaultDigest: 5 }), /option defaultDigest must be a function/);
  assert.throws(() => loom.claimCheckMiddleware({ digests: { a: "x" } }), /option digests must be an object of functions/);
  assert.throws(() => loom.defineConfig({ execution: { effectMiddleware: [loom.claimCheckMiddleware({ name: "claimCheck" })] } }),
    (e) => e instanceof loom.ConfigValidationError && /effectMiddleware\[0\]/.test(e.message) && /built-in layer/.test(e.message));
  assert.throws(() => loom.defineConfig({
    security: { crypto: {}, keys: { env: "LOOM_TEST_MASTER_KEY" } },
    execution: { effectMiddleware: [loom.claimCheckMiddleware()] },
  }), /storage.contentStore.sealed = true/);
  assert.throws(() => loom.previewDigest(-1), TypeError);
});

test("visitCitedAddresses: a retained envelope at the trusted position is load-bearing; a look-alike elsewhere is not", async () => {
  const app = new loom.App({ execution: { claimCheck: { toolIds: ["fetch"] } } }, { home: path.join(tempDir(), "home") });
  app.tool("fetch", {}, async () => "page ".repeat(400));
  app.agent("reader", { model: loom.ScriptedModel({ turns: [
    { toolCalls: [{ name: "fetch", arguments: {} }] }, { answer: "done" }] }), tools: ["fetch"] });
  const run = await app.run("reader", "go");
  const events = await app.log(run.id);
  const step = events.find((e) => e.type === "STEP_COMPLETED" && e.stepId === "reader#turn:1:tool:0");
  const seen = [];
  assert.equal(loom.visitCitedAddresses(step, (address, info) => seen.push([address, info.loadBearing])), 1);
  assert.deepEqual(seen, [[step.output.ref.__loomContent, true]]);
  assert.deepEqual(loom.retainRootsOf(step), [step.output.ref.__loomContent]);

  // The same envelope nested in a value, or in an event at another position: cited, not load-bearing.
  const nested = { result: { wrapped: step.output } };
  loom.visitCitedAddresses(nested, (address, info) => assert.equal(info.loadBearing, false));
  assert.deepEqual(loom.retainRootsOf({ ...step, output: nested }), []);
  assert.throws(() => loom.retainRootsOf({ seq: 1, type: "NO_SUCH_EVENT", at: step.at }), loom.CorruptEventError);
  assert.throws(() => loom.visitCitedAddresses(step), TypeError);
});

test("app.contentStore: put, get, has, capabilities; sealed, it is an EncryptingContentStore", async () => {
  const plain = new loom.App({}, { home: path.join(tempDir(), "home") });
  assert.ok(plain.contentStore instanceof loom.ContentStore);
  assert.equal(plain.contentStore instanceof loom.EncryptingContentStore, false);
  const address = await plain.contentStore.put("hello");
  assert.equal((await plain.contentStore.get(address)).toString(), "hello");
  assert.equal(await plain.contentStore.has(address), true);
  assert.equal(await plain.contentStore.get("f".repeat(64)), null);
  assert.equal((await plain.contentStore.capabilities()).sealsContent, false);
  await assert.rejects(plain.contentStore.put(42), loom.InvalidArgumentError);
  await assert.rejects(plain.contentStore.put("x", { subject: 5 }), /subject option must be a string/);
  await assert.rejects(plain.contentStore.get(address, { subject: {} }), loom.InvalidArgumentError);
  await assert.rejects(plain.contentStore.get("../../etc/passwd"), /malformed content address/);

  const sealed = new loom.App({
    security: { keys: { env: "LOOM_TEST_MASTER_KEY" } }, storage: { contentStore: { sealed: true } },
  }, { home: path.join(tempDir(), "home") });
  const store = sealed.contentStore;
  assert.ok(store instanceof loom.EncryptingContentStore);
  assert.equal(store.sealsContent, true);
  const alice = await store.put(Buffer.from("same bytes"), { subject: "alice" });
  assert.equal((await store.capabilities()).sealsContent, true);
  const bob = await store.put("same bytes", { subject: "bob" });
  assert.notEqual(alice, bob, "equal bytes of two subjects get two addresses");
  assert.equal((await store.get(alice, { subject: "alice" })).toString(), "same bytes");
  assert.equal(await store.get(alice, { subject: "bob" }), null);
});

test("claimCheckMiddleware on a sealed store: the blob is the subject's, exported, then gone with the erasure", async () => {
  const home = path.join(tempDir(), "home");
  const app = new loom.App({
    security: { keys: { env: "LOOM_TEST_MASTER_KEY" }, crypto: {} }, compliance: { erase: {} },
    storage: { contentStore: { sealed: true } },
    execution: { effectMiddleware: [loom.claimCheckMiddleware({ inlineCapBytes: 1024, retain: true })] },
  }, { home });
  app.tool("report", {}, async () => big());
  app.workflow("wf", async (ctx) => ctx.effect("call", "report", {}));
  const run = await app.run("wf", null, { subject: "alice" });
  const envelope = run.output;
  assert.deepEqual(await app.resolveClaimCheck(envelope, { subject: "alice" }), big());
  assert.equal(await app.resolveClaimCheck(envelope, { subject: "bob" }), null, "another subject cannot read it");
  const exported = await loom.exportSubject(app, "alice");
  assert.deepEqual(exported.claimChecked.map((b) => b.value), [big()]);
  const erased = await loom.eraseSubject(app, "alice");
  assert.equal(erased.contentDeleted.deleted, 1);
  assert.equal(await app.contentStore.has(envelope.ref.__loomContent), false);
  assert.equal(await app.resolveClaimCheck(envelope, { subject: "alice" }), null);
});
