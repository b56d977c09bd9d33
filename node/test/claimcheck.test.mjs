// ADR 0140 from TypeScript where the API reaches it: D4 the 1024-byte boundary, D6 no
// content-store call on replay, D8 erasure and export (D1 and D2: config.test.mjs).
import { test } from "node:test";
import assert from "node:assert/strict";
import path from "node:path";
import * as loom from "../index.mjs";
import { tempDir } from "./support.mjs";

process.env.LOOM_TEST_MASTER_KEY = "5a".repeat(32);

function readerApp(home, calls, result) {
  const app = new loom.App({
    execution: { claimCheck: { toolIds: ["fetch"] } },
    security: { keys: { env: "LOOM_TEST_MASTER_KEY" } },
    compliance: { erase: {} },
  }, { home });
  app.tool("fetch", {}, async ({ page }) => { calls.push(page); return result(page); });
  app.tool("publish", { requiresApproval: true }, async () => "published");
  app.agent("reader", { model: loom.ScriptedModel({ turns: [
    { toolCalls: [{ name: "fetch", arguments: { page: 1 } }] },
    { toolCalls: [{ name: "publish", arguments: {} }] },
    { answer: "Published." }] }), tools: ["fetch", "publish"] });
  return app;
}

async function toolOutput(app, id) {
  return (await app.log(id)).find((e) => e.stepId === "reader#turn:1:tool:0" && e.type === "STEP_COMPLETED").output;
}

test("D4: a result of 1024 bytes stays inline; 1025 is offloaded with a 256-character preview", async () => {
  // A string result's JSON text is its length + 2 (the quotes).
  const inline = readerApp(path.join(tempDir(), "home"), [], () => "x".repeat(1022));
  const a = await inline.run("reader", "go");
  assert.equal(await toolOutput(inline, a.id), "x".repeat(1022));
  const over = readerApp(path.join(tempDir(), "home"), [], () => "x".repeat(1023));
  const b = await over.run("reader", "go");
  const envelope = await toolOutput(over, b.id);
  assert.equal(envelope.__loomClaimCheck, 1);
  assert.equal(envelope.size, 1025);
  assert.equal(envelope.retain, true);
  assert.equal(envelope.digest.preview.length, loom.DEFAULT_CLAIM_CHECK_PREVIEW_CHARS);
});

test("D6: a replay makes no content-store call and runs no recorded tool", async () => {
  const home = path.join(tempDir(), "home");
  const calls = [];
  const body = (page) => ({ page, body: "report text ".repeat(400) });
  const run = await readerApp(home, calls, body).run("reader", "go", { subject: "alice" });
  assert.equal(run.parkReason, "approval");
  const done = await readerApp(home, calls, body).signal(run.id, run.waitingFor, { approved: true });
  assert.equal(done.status, "completed");
  assert.equal(done.replayContentStoreCalls, 0);
  assert.deepEqual(calls, [1]);
});

test("D8: eraseSubject shreds the subject and deletes their blobs; exportSubject shows them", async () => {
  const home = path.join(tempDir(), "home");
  const app = readerApp(home, [], (page) => ({ page, body: "report text ".repeat(400) }));
  const run = await app.run("reader", "go", { subject: "alice" });
  const exported = await loom.exportSubject(app, "alice");
  assert.deepEqual(exported.executions.map((e) => e.id), [run.id]);
  const erased = await loom.eraseSubject(app, "alice");
  assert.equal(erased.shredded, true);
  assert.equal(erased.contentDeleted.deleted, 1);
  const events = await app.log(run.id);
  assert.ok(events.every((e) => e.erased?.subject === "alice"));
  assert.doesNotMatch(JSON.stringify(events), /report text/);
  const report = await loom.sweepUnpinnedContent(app, { dryRun: true, graceHours: 0 });
  assert.equal(report.dryRun, true);
});

test("resolveClaimCheck reads the original behind an envelope; previewDigest is the D3 digest", async () => {
  const home = path.join(tempDir(), "home");
  const body = (page) => ({ page, body: "report text ".repeat(400) });
  const app = readerApp(home, [], body);
  const run = await app.run("reader", "go", { subject: "alice" });
  const envelope = await toolOutput(app, run.id);
  assert.deepEqual(await loom.resolveClaimCheck(app, envelope, { subject: "alice" }), body(1));
  const digest = loom.previewDigest(256)(body(1));
  assert.deepEqual(digest, envelope.digest);
  await loom.eraseSubject(app, "alice");
  await assert.rejects(loom.resolveClaimCheck(app, { not: "an envelope" }), loom.InvalidArgumentError);
});
