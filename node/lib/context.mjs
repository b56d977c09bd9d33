// The workflow context a JavaScript workflow gets. Replay contract (as in C++): the workflow
// function runs again from the top on every resume, and each step the log records resolves to
// its recorded value without running; so workflow code must be deterministic given its steps'
// values (read the clock, random numbers, files and the network only inside steps).
import { AsyncLocalStorage } from "node:async_hooks";
import { InvalidArgumentError } from "./errors.mjs";

const insideStep = new AsyncLocalStorage();

function outsideSteps(method) {
  const step = insideStep.getStore();
  if (step !== undefined) {
    throw new InvalidArgumentError(`ctx.${method}() was called inside step '${step}': a step's function may not use the context (its run waits for the step); call it from the workflow function`);
  }
}

/** agentLoop$(ctx, name, options, prompt): the record's name for ctx.agentLoop(). */
export const agentLoop$ = (ctx, name, options, prompt) => ctx.agentLoop(name, options, prompt);

export class Context {
  #native;
  constructor(native) { this.#native = native; }
  get executionId() { return this.#native.executionId; }
  get subject() { return this.#native.subject; }
  get input() { return this.#native.input; }
  /** A journaled step: runs fn() once, records its JSON result, resolves to it on every replay. */
  step(stepId, fn) {
    outsideSteps("step");
    return this.#native.step(stepId, () => insideStep.run(stepId, fn));
  }
  /** A journaled call of the registered effect (tool or model) effectId. */
  effect(stepId, effectId, input = null) { outsideSteps("effect"); return this.#native.effect(stepId, effectId, input); }
  /** Several journaled effect calls at once ([{stepId, effectId, input}]); one {output, error} each, in order. */
  effects(calls, maxConcurrent = 4) { outsideSteps("effects"); return this.#native.effects(calls, maxConcurrent); }
  /** A call through the chain that is not journaled (runs again on resume). */
  invokeTransient(effectId, input = null) { outsideSteps("invokeTransient"); return this.#native.invokeTransient(effectId, input); }
  /**
   * Patching code under live runs (Temporal's patched()): resolves to true when this run reaches
   * this point on code that has change `changeId`, false when its log already goes past this
   * point without it; journaled the first time, so every replay gets the same answer.
   *   if (await ctx.patched("fetch-v2")) await ctx.step("fetch-v2", ...); else await ctx.step("fetch", ...);
   */
  patched(changeId) { outsideSteps("patched"); return this.#native.patched(changeId); }
  /** The next signal `name`'s payload; until one comes the run parks (the promise rejects with Suspended). */
  waitForSignal(name) { outsideSteps("waitForSignal"); return this.#native.waitForSignal(name); }
  /**
   * The record's agent loop inside this workflow: `name`'s turns journaled as steps, with the
   * app's registered model (a Model or its id) and tools. Resolves to {outcome, answer, turns}.
   */
  agentLoop(name, { model, tools = [], system, maxTurns, parallelToolCalls, budget } = {}, prompt = null) {
    outsideSteps("agentLoop");
    const modelId = typeof model === "string" ? model : model?.id;
    return this.#native.agentLoop(name, { model: modelId, tools, system, maxTurns, parallelToolCalls, budget }, prompt);
  }
  /** A durable timer of `ms` milliseconds (recorded by step stepId); the run parks until it is due. */
  sleep(stepId, ms) { outsideSteps("sleep"); return this.#native.sleep(stepId, ms); }
}
