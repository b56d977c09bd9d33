// The Model and Tool conformance suites of tests/conformance, unchanged, for a model and a tool
// written in JavaScript (node/test/native/conformance_addon.cc runs them through the addon's
// code while this event loop answers the calls).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import * as loom from "../index.mjs";

const require = createRequire(import.meta.url);

test("the Model and Tool conformance suites pass for JavaScript", async () => {
  const addon = require(process.env.LOOM_NODE_CONFORMANCE_ADDON);
  const code = await addon.run({
    // turns[i - 1] = {answer, tool, arguments}: turn i (from the step id) answers or calls.
    makeModel: (turns) => ({
      async complete(request, ctx) {
        const turn = Number(ctx.stepId.split(":")[1]);
        const { answer, tool, arguments: args } = turns[turn - 1];
        if (tool) return { role: "assistant", content: null, toolCalls: [{ id: `call_${turn}`, name: tool, arguments: args }] };
        return { role: "assistant", content: answer };
      },
    }),
    makeOverloaded: () => ({ async complete() { throw new loom.UnavailableError("the model server is overloaded"); } }),
    makeMalformed: () => ({ complete: () => ({ role: "assistant", toolCalls: "not a list" }) }),
    echo: async ({ text }) => ({ echoed: text }),
    fails: async () => { throw new RangeError("the probe failed"); },
  });
  assert.equal(code, 0, "a conformance test failed: see its output above");
});
