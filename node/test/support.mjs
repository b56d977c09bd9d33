// Shared helpers of the Node.js package's tests (node --test, run by ctest).
import { mkdtempSync, writeFileSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";

export const packageDir = fileURLToPath(new URL("..", import.meta.url));
export const checkout = path.dirname(packageDir);
export const loomBin = path.join(process.env.LOOM_TEST_BIN_DIR ?? path.join(checkout, "build/release"), "loom");

export function tempDir() { return mkdtempSync(path.join(tmpdir(), "loom-node-")); }

/** The real `loom` binary on the same home. */
export function loomJson(home, ...args) {
  const out = spawnSync(loomBin, ["--home", home, ...args], { encoding: "utf8" });
  if (out.status !== 0 && out.status !== 1) throw new Error(out.stderr);
  return JSON.parse(out.stdout);
}

export function writeModule(dir, name, source) {
  const file = path.join(dir, name);
  writeFileSync(file, source.replaceAll("@PACKAGE@", path.join(packageDir, "index.mjs")));
  return file;
}

export function runNode(dir, args, options = {}) {
  return spawnSync(process.execPath, args, { cwd: dir, encoding: "utf8", timeout: 120_000, ...options });
}

export function witnessLines(file) {
  return existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
}
