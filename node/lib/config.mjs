// defineConfig: the grouped configuration, spelled as the decision record spells it
// ({execution: {claimCheck: {toolIds, inlineCapBytes, digests, preview, reclaimable}}, security,
// compliance, storage, observability}). Checked by the same option table, with the same
// messages, as loom.toml and a C++ Config: every problem at once, each named by its option
// path (ConfigValidationError.issues); a flat spelling ({claimCheck: ...}) is refused.
import { native } from "./native.mjs";

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
  return new Config(native.defineConfig(config, origin));
}
