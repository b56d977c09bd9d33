// The record's claim-check names that are not options (ADR 0140): claimCheckMiddleware (the
// classic middleware, ADR 0054, with D3/D6/D9/D11's options) for execution.effectMiddleware,
// previewDigest (D3), and the content walker visitCitedAddresses / retainRootsOf (D6, D11).
// For agent tools, prefer execution.claimCheck: it sets every guard the record asks for.
import { native } from "./native.mjs";

const PREVIEW_CHARS = Symbol.for("loom.previewChars");

/**
 * previewDigest(maxChars): the agent opt-in's default digest (D3), as a digest function
 * ((result, text) => {preview, truncated}) for execution.claimCheck.digests or a
 * claimCheckMiddleware's digests / defaultDigest. The core computes it without calling back.
 */
export function previewDigest(maxChars = 256) {
  if (!Number.isSafeInteger(maxChars) || maxChars < 0) {
    throw new TypeError(`previewDigest: maxChars must be a whole number >= 0, not ${String(maxChars)}`);
  }
  const digest = (result, text) => native.previewDigest(maxChars, result, text ?? JSON.stringify(result));
  Object.defineProperty(digest, PREVIEW_CHARS, { value: maxChars });
  return digest;
}

const OPTIONS = {
  name: "string", store: "store", inlineCapBytes: "count", digests: "digests", defaultDigest: "function",
  retain: "boolean", passThrough: "function", envelopesAreData: "boolean", effectIds: "strings",
  agentToolFramesOnly: "boolean", onOffload: "function", onWarn: "function",
};

function checkOption(key, kind, value) {
  const path = `claimCheckMiddleware: option ${key}`;
  const ok = {
    string: () => typeof value === "string" && value.length > 0,
    store: () => value === "default",
    count: () => Number.isSafeInteger(value) && value >= 0,
    function: () => typeof value === "function",
    boolean: () => typeof value === "boolean",
    strings: () => Array.isArray(value) && value.every((s) => typeof s === "string" && s.length > 0),
    digests: () => value !== null && typeof value === "object" && !Array.isArray(value) &&
      Object.values(value).every((fn) => typeof fn === "function"),
  }[kind]();
  if (ok) return;
  const want = {
    string: "a non-empty string", count: "a whole number >= 0", function: "a function", boolean: "true or false",
    strings: "an array of non-empty strings", digests: "an object of functions by effect id",
    store: `"default" (the app's content store, storage.contentStore: the one the sweep, erasure and export read) or left out`,
  }[kind];
  throw new TypeError(`${path} must be ${want}`);
}

/** A claim-check middleware on the app's content store, for execution.effectMiddleware. */
export class ClaimCheckMiddleware {
  /** @internal */ options;
  constructor(options = {}) {
    if (options === null || typeof options !== "object" || Array.isArray(options)) {
      throw new TypeError("claimCheckMiddleware takes an options object");
    }
    for (const [key, value] of Object.entries(options)) {
      if (!(key in OPTIONS)) {
        throw new TypeError(`claimCheckMiddleware: unknown option ${key} (known: ${Object.keys(OPTIONS).join(", ")})`);
      }
      if (value !== undefined) checkOption(key, OPTIONS[key], value);
    }
    this.options = Object.freeze({ name: "claimCheckMiddleware", ...options });
    Object.freeze(this);
  }
  get name() { return this.options.name; }
}

/**
 * claimCheckMiddleware(options): moves an effect result whose JSON text is over
 * inlineCapBytes (default 16384) into the app's content store and records an envelope
 * {__loomClaimCheck, ref, size, digest?, retain?} instead. Options: name, inlineCapBytes,
 * digests ({effectId: fn(result, text)}), defaultDigest (e.g. previewDigest(256)), retain
 * (envelopes are load-bearing: kept by the sweep while their history lives), passThrough
 * (fn(ctx, result) returning true leaves that result inline), envelopesAreData (a result that
 * looks like an envelope is offloaded like any value), effectIds (only these effects),
 * agentToolFramesOnly, onOffload(info), onWarn(message). It runs on every effect, the model
 * call included, unless effectIds names the ones it may touch.
 */
export function claimCheckMiddleware(options = {}) {
  return new ClaimCheckMiddleware(options);
}

/**
 * visitCitedAddresses(value, visit): calls visit(address, {loadBearing}) once for each
 * content address `value` cites ({"__loomContent": H} anywhere, envelope refs included). For an
 * event as app.log() lists it ({seq, type, at, ...}), loadBearing is true for the ref of a
 * retained envelope at the one trusted position (the whole output of a STEP_COMPLETED, D11);
 * a look-alike anywhere else is not. Returns the number of addresses visited.
 */
export function visitCitedAddresses(value, visit) {
  if (typeof visit !== "function") throw new TypeError("visitCitedAddresses(value, visit): visit must be a function");
  const addresses = [...new Set(native.citedAddresses(value ?? null))];
  const roots = new Set(isEvent(value) ? native.retainRootsOf(value) : []);
  for (const address of addresses) visit(address, { loadBearing: roots.has(address) });
  return addresses.length;
}

/** retainRootsOf(event): the load-bearing addresses an event (as app.log() lists it) makes. */
export function retainRootsOf(event) {
  if (!isEvent(event)) throw new TypeError("retainRootsOf(event): an event as app.log() lists it ({seq, type, at, ...})");
  return native.retainRootsOf(event);
}

function isEvent(value) {
  return value !== null && typeof value === "object" && typeof value.type === "string" &&
    typeof value.seq === "number" && typeof value.at === "string";
}
