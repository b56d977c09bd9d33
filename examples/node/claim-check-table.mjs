// The measured table of ADR 0140 (agent claim-check opt-in), reproduced in TypeScript/Node.js:
// a defineConfig app whose workflow runs agentLoop$ with a scripted model that calls one tool
// per turn; the tool returns 1.5-4 kB of JSON (uniform sizes from a fixed seed); no
// compaction; model input journaled in full (the record's setting). Each row runs in a fresh
// home with execution.claimCheck off, on (256-character preview) and on with preview: false,
// and reports State (the folded agent state a resume reads, `loom state`) and Log (the log's
// JSON text, `loom ls`), beside the record's own figures. As `loom bench claim-check` does for
// C++ (docs/benchmarks.md). An installed program imports "@loomwork/loom" instead.
//
//   node examples/node/claim-check-table.mjs [--turns 50,200] [--json]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { App, ScriptedModel, agentLoop$, defineConfig } from "../../node/index.mjs";

// ADR 0140 "Measured": [State KB, Log KB] by turns and setting (KB = 1000 bytes).
export const RECORD = {
  50: { off: [297.8, 4043], on: [70.8, 953], "on-no-preview": [43.0, 551] },
  200: { off: [1201.4, 60421], on: [283.4, 13807], "on-no-preview": [172.1, 7787] },
};
const SETTINGS = ["off", "on", "on-no-preview"];
const WORDS = ["revenue", "quarter", "growth", "margin", "region", "north", "south", "customer", "churn",
  "pipeline", "forecast", "cost", "headcount", "product", "launch", "risk", "audit", "report"];

// MT19937 (std::mt19937): the pages are byte for byte those of `loom bench claim-check`.
function mt19937(seed) {
  const mt = new Uint32Array(624);
  let index = 624;
  mt[0] = seed >>> 0;
  for (let i = 1; i < 624; i++) mt[i] = (Math.imul(1812433253, mt[i - 1] ^ (mt[i - 1] >>> 30)) + i) >>> 0;
  const twist = () => {
    for (let i = 0; i < 624; i++) {
      const y = (mt[i] & 0x80000000) | (mt[(i + 1) % 624] & 0x7fffffff);
      mt[i] = (mt[(i + 397) % 624] ^ (y >>> 1) ^ (y & 1 ? 0x9908b0df : 0)) >>> 0;
    }
    index = 0;
  };
  return () => {
    if (index >= 624) twist();
    let y = mt[index++];
    y ^= y >>> 11;
    y ^= (y << 7) & 0x9d2c5680;
    y ^= (y << 15) & 0xefc60000;
    y ^= y >>> 18;
    return y >>> 0;
  };
}

/** Page `page` of the report: 1,500 to 4,000 bytes of JSON text (as C++'s reportFor). */
export function reportFor(page, seed = 140) {
  const next = mt19937(seed * 7919 + page);
  const target = 1500 + (next() % 2501);
  const report = { id: `r-${page}`, title: `Quarterly report, page ${page}`, page };
  const base = JSON.stringify(report).length + 10; // ,"body":""
  let body = "";
  while (body.length + base < target) body += WORDS[next() % WORDS.length] + " ";
  return { ...report, body: body.slice(0, Math.max(0, target - base)) };
}

function configFor(setting, home) {
  const execution = { journal: { modelInput: "full" } };
  if (setting !== "off") {
    execution.claimCheck = { toolIds: ["fetch_report"], ...(setting === "on-no-preview" ? { preview: false } : {}) };
  }
  return defineConfig({ execution, storage: { home } });
}

/** One row: {turns, claimCheck, stateBytes, logBytes, wallSeconds}. */
export async function runRow(turns, setting) {
  const home = mkdtempSync(path.join(tmpdir(), "loom-claim-check-table-"));
  try {
    const app = new App(configFor(setting, home));
    app.tool("fetch_report", { description: "Fetches one page of the quarterly report." },
      async ({ page }) => reportFor(page));
    const model = ScriptedModel({ generate: {
      turns, toolCalls: [{ name: "fetch_report", arguments: { page: "{turn}" } }],
      answer: "The reports are summarized." } });
    app.model(model);
    app.workflow("research", async (ctx, prompt) =>
      agentLoop$(ctx, "research", { model, tools: ["fetch_report"], maxTurns: turns + 1 }, prompt));
    const started = process.hrtime.bigint();
    const run = await app.run("research", "Summarize the quarterly report.", { id: "table" });
    const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
    if (run.status !== "completed") throw new Error(`the ${turns}-turn ${setting} run ended ${run.status}: ${JSON.stringify(run.error)}`);
    const state = await app.state(run.id);
    const [row] = await app.runs();
    return { turns, claimCheck: setting, stateBytes: state.loops[0].stateBytes, logBytes: row.logBytes, wallSeconds };
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

export async function runTable(turnCounts = [50, 200]) {
  const rows = [];
  for (const turns of turnCounts) for (const setting of SETTINGS) rows.push(await runRow(turns, setting));
  return rows;
}

const kb = (bytes, digits) => (bytes / 1000).toFixed(digits);

export function formatTable(rows) {
  let out = "| Turns | claim-check | State KB | Log KB | wall s | record State KB | record Log KB |\n" +
    "|---|---|---|---|---|---|---|\n";
  for (const r of rows) {
    const [recordState, recordLog] = RECORD[r.turns]?.[r.claimCheck] ?? ["", ""];
    out += `| ${r.turns} | ${r.claimCheck} | ${kb(r.stateBytes, 1)} | ${kb(r.logBytes, 0)} | ${r.wallSeconds.toFixed(3)} | ${recordState} | ${recordLog} |\n`;
  }
  for (const turns of new Set(rows.map((r) => r.turns))) {
    const off = rows.find((r) => r.turns === turns && r.claimCheck === "off");
    for (const setting of ["on", "on-no-preview"]) {
      const on = rows.find((r) => r.turns === turns && r.claimCheck === setting);
      if (!off || !on) continue;
      const record = RECORD[turns];
      const recordRatio = record ? ` (record: ${(record.off[0] / record[setting][0]).toFixed(1)}x)` : "";
      out += `\n${turns} turns, ${setting}: ${(off.stateBytes / on.stateBytes).toFixed(1)}x less state${recordRatio}, ` +
        `${(off.logBytes / on.logBytes).toFixed(1)}x less log`;
    }
  }
  return out + "\n";
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const at = args.indexOf("--turns");
  const turns = at >= 0 ? args[at + 1].split(",").map(Number) : [50, 200];
  const rows = await runTable(turns);
  console.log(args.includes("--json") ? JSON.stringify(rows) : formatTable(rows));
}
