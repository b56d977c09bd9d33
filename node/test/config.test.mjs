// defineConfig: the record's grouped names, checked by the same option table as loom.toml.
import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import path from "node:path";
import * as loom from "../index.mjs";
import { tempDir } from "./support.mjs";

test("the grouped config with the record's names is accepted", () => {
  const config = loom.defineConfig({
    execution: { claimCheck: { toolIds: ["search"], inlineCapBytes: 2048, preview: 128, reclaimable: ["search"] } },
    storage: { home: "somewhere" },
  });
  assert.match(config.describe(), /execution\.claimCheck\.toolIds = \["search"\]/);
  assert.match(config.describe(), /execution\.claimCheck\.inlineCapBytes = 2048/);
  assert.equal(config.home, "somewhere");
});

test("every problem is named by its option path; a flat spelling is refused", () => {
  assert.throws(() => loom.defineConfig({ execution: { retry: { bogus: 1 }, claimCheck: { inlineCapBytes: "big" } } }), (e) => {
    assert.ok(e instanceof loom.ConfigValidationError && e instanceof loom.LoomError);
    assert.equal(e.code, "config");
    const paths = e.issues.map((i) => i.path);
    assert.ok(paths.includes("execution.retry.bogus") && paths.includes("execution.claimCheck.inlineCapBytes"), paths.join());
    return true;
  });
  assert.throws(() => loom.defineConfig({ claimCheck: { toolIds: ["x"] } }), (e) => {
    assert.equal(e.issues[0].path, "claimCheck");
    assert.match(e.issues[0].message, /execution\.claimCheck/);
    return true;
  });
});

test("null, undefined-only and values JSON cannot hold are refused naming where", () => {
  assert.throws(() => loom.defineConfig({ storage: { home: null } }), (e) => e.issues[0].path === "storage.home");
  assert.throws(() => loom.defineConfig({ storage: { home: 10n } }), (e) => e instanceof loom.InvalidArgumentError && /\$\.storage\.home/.test(e.message));
  assert.throws(() => loom.defineConfig([]), TypeError);
});

test("a loom.toml file gives the same config", () => {
  const file = path.join(tempDir(), "loom.toml");
  writeFileSync(file, '[execution.claimCheck]\ntoolIds = ["search"]\n');
  assert.match(loom.defineConfig(file).describe(), /toolIds = \["search"\]/);
});

test("D1: without execution.claimCheck the chain has no claim-check layer", () => {
  const chain = (config) => config.describe().split("\n").find((l) => l.startsWith("chain"));
  assert.equal(chain(loom.defineConfig({})), "chain, outermost first: killSwitch -> effect");
  assert.equal(chain(loom.defineConfig({ execution: { claimCheck: { toolIds: ["t"] } } })),
    "chain, outermost first: killSwitch -> claimCheck -> effect");
});

test("D2: toolIds is required and may not be empty", () => {
  for (const claimCheck of [{}, { toolIds: [] }]) {
    assert.throws(() => loom.defineConfig({ execution: { claimCheck } }),
      (e) => e.issues.some((i) => i.path === "execution.claimCheck.toolIds"));
  }
});

test("the record's defaults are exported", () => {
  assert.equal(loom.DEFAULT_CLAIM_CHECK_CAP_BYTES, 1024);
  assert.equal(loom.DEFAULT_CLAIM_CHECK_PREVIEW_CHARS, 256);
});
