// SIGKILL of a Node.js process mid-agent, then resume in a new process: no recorded model turn
// or tool call runs again (a witness file counts every call that really ran).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import path from "node:path";
import { tempDir, writeModule, runNode, loomJson, witnessLines } from "./support.mjs";

const AGENT = `
  import { appendFileSync } from "node:fs";
  import { App } from "@PACKAGE@";
  const witness = (line) => appendFileSync(new URL("./witness.txt", import.meta.url), line + "\\n");
  export const app = new App({}, { home: "home" });
  app.tool("fetch", {}, async ({ page }) => {
    witness("tool " + page);
    await new Promise((r) => setTimeout(r, 150));
    return { page, text: "page text ".repeat(20) };
  });
  class Counting {
    id = "counting";
    async complete(request) {
      const turn = 1 + request.messages.filter((m) => m.role === "assistant").length;
      witness("model " + turn);
      if (turn > 12) return { role: "assistant", content: "read twelve pages" };
      return { role: "assistant", toolCalls: [{ id: "c" + turn, name: "fetch", arguments: { page: turn } }] };
    }
  }
  app.agent("reader", { model: new Counting(), tools: ["fetch"] });
  if (process.argv[1] === new URL(import.meta.url).pathname) process.exitCode = await app.main();
`;

test("SIGKILL mid-agent, then resume in a new process, runs nothing recorded again", async () => {
  const dir = tempDir();
  writeModule(dir, "agent.mjs", AGENT);
  const child = spawn(process.execPath, ["agent.mjs", "run", "reader", "--id", "crash-1", "--input", '"read"', "--json"], { cwd: dir });
  const witness = path.join(dir, "witness.txt");
  const deadline = Date.now() + 60_000;
  while (witnessLines(witness).filter((l) => l.startsWith("tool")).length < 4 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill("SIGKILL");
  await new Promise((r) => child.on("exit", r));
  const home = path.join(dir, "home");
  const recorded = loomJson(home, "log", "crash-1", "--json").filter((e) => e.type === "STEP_COMPLETED").map((e) => e.stepId);
  assert.ok(recorded.length >= 6, recorded.join());
  assert.equal(loomJson(home, "ls", "--json")[0].status, "orphaned");
  const resumed = runNode(dir, ["agent.mjs", "resume", "crash-1", "--json"]);
  assert.equal(resumed.status, 0, resumed.stderr);
  assert.equal(JSON.parse(resumed.stdout).output.answer, "read twelve pages");
  const counts = new Map();
  for (const line of witnessLines(witness)) counts.set(line, (counts.get(line) ?? 0) + 1);
  for (const step of recorded) {
    const turn = step.split(":")[1];
    const line = step.endsWith(":model") ? `model ${turn}` : `tool ${turn}`;
    assert.equal(counts.get(line), 1, `${step} ran ${counts.get(line)} times`);
  }
});
