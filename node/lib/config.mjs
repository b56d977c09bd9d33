// defineConfig: the grouped configuration, spelled as the decision record spells it
// ({execution: {claimCheck: {toolIds, inlineCapBytes, digests, preview, reclaimable}}, security,
// compliance, storage, observability}). Checked by the same option table, with the same
// messages, as loom.toml and a C++ Config: every problem at once, each named by its option
// path (ConfigValidationError.issues); a flat spelling ({claimCheck: ...}) is refused.
import { native } from "./native.mjs";
import { ClaimCheckMiddleware } from "./claim_check.mjs";

export class Config {
  #handle;
  constructor(handle) { this.#handle = handle; }
  /** @internal */ get handle() { return this.#handle; }
  /** storage.home: the folder of the home's database, blobs and archive. */
  get home() { return native.configHome(this.#handle); }
  /** Every option as `path = value` (defaults filled in), then the middleware chain. */
  describe() { return native.describeConfig(this.#handle); }
}

/**
 * Validates the grouped config and freezes it. `config`: an object of groups, a loom.toml
 * path, a Config, or undefined (every default).
 */
export function defineConfig(config = {}, { origin = "defineConfig" } = {}) {
  if (config instanceof Config) return config;
  if (typeof config === "string") return new Config(native.loadConfig(config));
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    throw new TypeError(`defineConfig takes an object of groups or a loom.toml path, not ${config === null ? "null" : typeof config}`);
  }
  const [groups, callables] = splitCallables(config);
  return new Config(native.defineConfig(groups, origin, callables));
}

// A copy of the groups without the callables, and the callables (js_config.cc sets them).
function splitCallables(config) {
  const groups = structuredCloneWithout(config);
  const callables = { digests: {}, onOffload: undefined, onWarn: undefined, middleware: [], middlewareCount: 0 };
  const claimCheck = groups.execution?.claimCheck;
  if (claimCheck) {
    for (const [tool, digest] of Object.entries(claimCheck.digests ?? {})) {
      if (typeof digest === "function") {
        callables.digests[tool] = digest;
        delete claimCheck.digests[tool];
      }
    }
    if (claimCheck.digests && Object.keys(claimCheck.digests).length === 0) delete claimCheck.digests;
    if (typeof claimCheck.onOffload === "function") {
      callables.onOffload = returnsNothing(claimCheck.onOffload);
      delete claimCheck.onOffload;
    }
  }
  const entries = groups.execution?.effectMiddleware;
  if (Array.isArray(entries)) {
    callables.middlewareCount = entries.length;
    entries.forEach((entry, i) => {
      if (entry instanceof ClaimCheckMiddleware) {
        callables.middleware.push([i, entry.options, entry.name, "claimCheck"]);
      } else if (typeof entry?.invoke === "function") {
        callables.middleware.push([i, entry, entry.name ?? entry.constructor?.name ?? "middleware"]);
      }
    });
    const kept = entries.filter((e) => !(e instanceof ClaimCheckMiddleware) && typeof e?.invoke !== "function");
    if (kept.length > 0) groups.execution.effectMiddleware = kept;
    else delete groups.execution.effectMiddleware;
  }
  if (typeof groups.observability?.onWarn === "function") {
    callables.onWarn = returnsNothing(groups.observability.onWarn);
    delete groups.observability.onWarn;
    if (Object.keys(groups.observability).length === 0) delete groups.observability;
  }
  return [groups, callables];
}

// A callback whose result does not matter (console.log returns undefined): awaited, then null.
function returnsNothing(fn) {
  return async (...args) => { await fn(...args); return null; };
}

// The plain objects and arrays of `value` copied; anything else (functions, middleware
// objects) shared.
function structuredCloneWithout(value) {
  if (Array.isArray(value)) return value.map(structuredCloneWithout);
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, structuredCloneWithout(v)]));
  }
  return value;
}
