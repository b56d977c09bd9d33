// App: workflows, tools, models and agents written in JavaScript, run durably by the core in
// this process, on a home the `loom` command line reads too (docs/typescript.md). Every
// operation returns a promise: the core runs off the JavaScript thread.
import { native } from "./native.mjs";
import { Config, defineConfig } from "./config.mjs";
import { Context } from "./context.mjs";
import { contentStoreOf } from "./content.mjs";

/** Where a run stands after an operation (`loom run --json`'s fields). */
export class Run {
  constructor(raw) {
    this.id = raw.id;
    this.status = raw.status; // completed, failed, parked, cancelled, running or submitted
    this.output = raw.output ?? null;
    this.error = raw.error ?? null;
    this.waitingFor = raw.waitingFor ?? null;
    this.parkReason = raw.parkReason ?? null;
    this.replayedSteps = raw.replayedSteps ?? 0;
    this.effectsRun = raw.effectsRun ?? 0;
    this.replayContentStoreCalls = raw.replayContentStoreCalls ?? null;
    this.usage = raw.usage ?? null; // model tokens and cost so far (`loom run --json`'s "usage")
    Object.defineProperty(this, "raw", { value: raw });
  }
}

/** A model the core knows: ScriptedModel, OpenAIModel, or your object's wrapper. */
export class Model {
  constructor(handle, id) {
    this.handle = handle;
    this.id = id;
  }
}

/** The deterministic scripted model (docs/providers.md). */
export function ScriptedModel(script, { id = "scripted" } = {}) {
  const handle = native.scriptedModel(id, script, "the model script");
  return new Model(handle, native.modelId(handle));
}

/** An OpenAI-compatible chat completions server. The key is read from apiKeyEnv. */
export function OpenAIModel({ baseUrl, model, id = "", apiKeyEnv = "OPENAI_API_KEY", timeoutMs, maxRetries, extraBody } = {}) {
  const handle = native.openaiModel({ baseUrl, model, id, apiKeyEnv, timeoutMs, maxRetries, extraBody });
  return new Model(handle, native.modelId(handle));
}

// JSON text by the addon's rules (what a step's output must be), so an input arrives in the
// workflow exactly as given; undefined is null.
function jsonText(value, what) {
  return native.jsonText(value === undefined ? null : value, what);
}

export class Worker {
  #native;
  constructor(nativeWorker, drainSeconds) {
    this.#native = nativeWorker;
    this.drainSeconds = drainSeconds;
  }
  /** Starts claiming what nobody runs; the process stays alive until stop(). */
  start() { this.#native.start(); return this; }
  /** Stops claiming; runs in flight get drainSeconds, then are released (resumable at once). */
  stop(drainSeconds = this.drainSeconds) { return this.#native.stop(drainSeconds); }
  /** Runs what is runnable now; resolves when nothing is runnable or running. */
  runUntilIdle() { return this.#native.runUntilIdle(); }
  /** Runs in flight now. */
  get active() { return this.#native.active; }
  async [Symbol.asyncDispose]() { await this.stop(); }
}

// App's `version` option: execution.codeVersion in a plain config object.
function withVersion(config, version) {
  if (typeof version !== "string") throw new TypeError(`version must be a string, not ${typeof version}`);
  if (config instanceof Config || typeof config === "string" || config === null || typeof config !== "object") {
    throw new TypeError("new App(config, { version }) takes a plain config object; for a Config or a loom.toml, declare execution.codeVersion in it instead");
  }
  const execution = config.execution ?? {};
  if (typeof execution !== "object" || Array.isArray(execution)) {
    throw new TypeError("config.execution must be an object");
  }
  if (execution.codeVersion !== undefined && execution.codeVersion !== version) {
    throw new TypeError(`new App(config, { version: ${JSON.stringify(version)} }) and execution.codeVersion = ${JSON.stringify(execution.codeVersion)} disagree; declare the version once`);
  }
  return { ...config, execution: { ...execution, codeVersion: version } };
}

export class App {
  #native;
  #models = new Map();
  #contentStore;
  /**
   * @param config what defineConfig takes (an object of groups, a loom.toml path, a Config)
   * @param options.home overrides storage.home (default ".loom")
   */
  constructor(config = {}, { home, version } = {}) {
    if (version !== undefined) config = withVersion(config, version);
    this.config = config instanceof Config ? config : defineConfig(config);
    this.home = home ?? this.config.home;
    this.#native = new native.App(this.config.handle, home ?? "");
  }
  /** @internal */ get native() { return this.#native; }

  /** Registers `fn(ctx, input)` (async) as workflow `name`. */
  workflow(name, fn) {
    this.#native.workflow(name, (ctx, input) => fn(new Context(ctx), input));
    return fn;
  }

  /**
   * Registers a tool agents can call: `fn(args, ctx)` (async). Options: description, parameters
   * (JSON Schema), requiresApproval, untrusted (results recorded tainted), returnsMedia.
   */
  tool(name, options, fn) {
    if (typeof options === "function") [options, fn] = [{}, options];
    this.#native.tool(name, options ?? {}, fn);
    return fn;
  }

  /**
   * Starts an MCP server over stdio (as [[tools.mcp]] in a loom.toml) and registers every tool
   * it lists; returns their names, to offer to an agent. Results are tainted "mcp:<name>".
   * Blocks while the server starts (a registration, before any run).
   */
  mcpServer(name, command, args = [], { env, inheritEnv, workingDirectory, timeoutMs } = {}) {
    return this.#native.mcpServer({ name, command, args, env, inheritEnv, workingDirectory, timeoutMs });
  }

  /** Registers a model (a Model, or your object with complete(request, ctx)); returns its id. */
  model(model, { id } = {}) {
    if (model instanceof Model) return this.#native.model(model.handle);
    if (typeof model?.complete !== "function") {
      throw new TypeError("a model needs a complete(request, ctx) method");
    }
    const known = this.#models.get(model);
    if (known) return known;
    const handle = id ?? model.id ?? model.constructor?.name ?? "model";
    this.#models.set(model, handle);
    return this.#native.model(handle, model);
  }

  /**
   * The record's agent loop as workflow `name`: input {prompt} or a string; output {outcome,
   * answer, turns}. Options: model, tools (names or registered functions' names), system,
   * maxTurns, parallelToolCalls, budget ({maxTokens, maxCostUsd, maxToolCalls, onExceeded}).
   */
  agent(name, { model, tools = [], system, maxTurns, parallelToolCalls, budget } = {}) {
    const modelId = this.model(model);
    this.#native.agent(name, { model: modelId, tools, system, maxTurns, parallelToolCalls, budget });
  }

  async #json(...args) {
    const [, out] = await this.#native.invoke(args);
    return out.trim() ? JSON.parse(out) : null;
  }

  #startArgs(workflow, input, { id, subject } = {}, extra = []) {
    const args = ["run", "--json", ...extra, "--input", jsonText(input, "the run's input")];
    if (id !== undefined) args.push("--id", id);
    if (subject !== undefined) args.push("--subject", subject);
    return [...args, "--", workflow];
  }

  /** Starts `workflow` and runs it until it ends or parks. */
  async run(workflow, input, options) { return new Run(await this.#json(...this.#startArgs(workflow, input, options))); }
  /** Records the run without running it: a worker runs it. */
  async submit(workflow, input, options) { return new Run(await this.#json(...this.#startArgs(workflow, input, options, ["--submit"]))); }
  /** Continues a run from its log. */
  async resume(id) { return new Run(await this.#json("resume", "--json", "--", id)); }
  /** Records signal `name` and resumes the run if it is parked. */
  async signal(id, name, payload = null) {
    return new Run(await this.#json("signal", "--json", "--", id, name, jsonText(payload, "the signal's payload")));
  }
  async retry(id) { return new Run(await this.#json("retry", "--json", "--", id)); }
  /** A new run from run `id`'s log up to step `at` (a step id, run again; or a seq), continued here on this code (`loom fork`). */
  async fork(id, at, { input, id: newId } = {}) {
    const args = ["fork", "--json", "--at", String(at)];
    if (input !== undefined) args.push("--input", jsonText(input, "the fork's input"));
    if (newId !== undefined) args.push("--id", newId);
    return new Run(await this.#json(...args, "--", id));
  }
  /** Failed run `id` again from its failed step, as a new run on this code (`loom rerun`). */
  async rerun(id, { id: newId } = {}) {
    return new Run(await this.#json("rerun", "--json", ...(newId !== undefined ? ["--id", newId] : []), "--", id));
  }
  async cancel(id, reason) {
    return new Run(await this.#json("cancel", "--json", ...(reason ? ["--reason", reason] : []), "--", id));
  }
  /**
   * Moves run `id` (not ended) to this app's code version when its log replays on this code
   * (`loom upgrade ID --to-current`): {id, outcome: "upgraded" | "current", from, to, replayedSteps}.
   * Rejects with FailedPreconditionError naming the step when it does not replay here.
   */
  async upgrade(id) { return (await this.#json("upgrade", "--to-current", "--json", "--", id)).runs[0]; }
  /** The model tokens and cost the home's runs recorded, added up by "subject", "workflow" or "model" (`loom usage --json`). */
  usage({ by = "workflow", since } = {}) {
    return this.#json("usage", "--json", "--by", by, ...(since !== undefined ? ["--since", since] : []));
  }
  /** The home's recorded runs replayed against this app's code, in memory (`loom replay-check --json`). */
  replayCheck({ workflow, since, last } = {}) {
    const args = ["replay-check", "--json"];
    if (workflow !== undefined) args.push("--workflow", workflow);
    if (since !== undefined) args.push("--since", since);
    if (last !== undefined) args.push("--last", String(last));
    return this.#json(...args);
  }
  /** For node:test: replayCheck, throwing an Error that names each run that diverged or could not be checked. */
  async assertReplays(filters = {}) {
    const report = await this.replayCheck(filters);
    const bad = report.runs.filter((r) => r.outcome !== "matched");
    if (bad.length > 0) {
      const lines = bad.map((r) => r.outcome === "diverged"
        ? `${r.id}: diverged at ${r.stepId}: the log recorded ${r.recorded}; the code ${r.asked}`
        : `${r.id}: unchecked: ${r.why}`);
      throw new Error(`${bad.length} of ${report.checked} recorded run(s) do not replay on this code:\n${lines.join("\n")}`);
    }
    return report;
  }
  /** The run's folded state (`loom state --json`). */
  state(id) { return this.#json("state", "--json", "--", id); }
  /** The run's events (`loom log --json`). */
  log(id) { return this.#json("log", "--json", "--", id); }
  /** Every run of the home (`loom ls --json`), optionally of one status or workflow. */
  async runs({ status, workflow } = {}) {
    const rows = (await this.#json("ls", "--json")) ?? [];
    return rows.filter((r) => (status === undefined || r.status === status) && (workflow === undefined || r.workflow === workflow));
  }
  /** The Executor in this process: claims and runs what nobody runs. */
  worker({ concurrency = 16, pollMs = 500, drainSeconds = 30 } = {}) {
    return new Worker(new native.Worker(this.#native, { concurrency, pollMs }), drainSeconds);
  }
  /** sweepUnpinnedContent over the app's content store (`loom sweep --json`'s report). */
  sweep({ dryRun = false, ttlDays, graceHours } = {}) {
    const args = ["sweep", "--json", ...(dryRun ? ["--dry-run"] : [])];
    if (ttlDays !== undefined) args.push("--ttl-days", String(ttlDays));
    if (graceHours !== undefined) args.push("--grace-hours", String(graceHours));
    return this.#json(...args);
  }
  /** eraseSubject: crypto-shreds the subject and deletes their blobs. */
  erase(subject) { return this.#json("erase", "--json", "--", subject); }
  /** exportSubject: everything held on the subject. */
  export(subject) { return this.#json("export", "--", subject); }
  /**
   * The original value behind a claim-check envelope (a tool result the journal holds as an
   * envelope), read from the app's content store; null once the sweep reclaimed it or an
   * erasure deleted it. `subject`: the run's data subject, for a sealed store.
   */
  resolveClaimCheck(envelope, options) { return this.contentStore.resolveClaimCheck(envelope, options); }
  /** The app's content store (an EncryptingContentStore when storage.contentStore.sealed). */
  get contentStore() {
    this.#contentStore ??= contentStoreOf(this.#native, this.config);
    return this.#contentStore;
  }
  /** The whole `loom` command line for this app (`node app.mjs <subcommand>`). */
  main(argv = process.argv.slice(2)) { return this.#native.main(["loom", ...argv]); }
}

/** resolveClaimCheck(app, envelope, options): the record's name for app.resolveClaimCheck(). */
export const resolveClaimCheck = (app, envelope, options) => app.resolveClaimCheck(envelope, options);

/** sweepUnpinnedContent(app, options): the record's name for app.sweep(). */
export const sweepUnpinnedContent = (app, options) => app.sweep(options);
/** eraseSubject(app, subject): the record's name for app.erase(). */
export const eraseSubject = (app, subject) => app.erase(subject);
/** exportSubject(app, subject): the record's name for app.export(). */
export const exportSubject = (app, subject) => app.export(subject);
