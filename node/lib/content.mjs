// The app's content store (ContentStore SPI), as app.contentStore: where claim-checked tool
// results live, the store sweepUnpinnedContent sweeps and eraseSubject deletes from. With
// storage.contentStore.sealed it is an EncryptingContentStore (ADR 0143): each blob sealed
// under its subject's key, so equal bytes of two subjects get two addresses and an erased
// subject's blobs cannot be read. Every call opens the home off the JavaScript thread.
import { native } from "./native.mjs";

export class ContentStore {
  #app;
  /** @internal */ constructor(nativeApp) { this.#app = nativeApp; }
  /** Stores bytes (a string is UTF-8) for `subject`; resolves to the address. */
  async put(bytes, { subject } = {}) { return native.contentOp(this.#app, "put", bytes, subject); }
  /** The bytes at `address` (a Buffer), or null when there are none (or, sealed: not yours, or shredded). */
  async get(address, { subject } = {}) { return native.contentOp(this.#app, "get", String(address), subject); }
  /** Whether a blob is stored at `address`. */
  async has(address) { return native.contentOp(this.#app, "has", String(address)); }
  /** {remove, deleteIfUntouchedSince, touchClock, enumerate, sealsContent}. */
  async capabilities() { return native.contentOp(this.#app, "capabilities"); }
  /** The original value behind a claim-check envelope; null once reclaimed or erased. */
  async resolveClaimCheck(envelope, { subject } = {}) {
    return native.contentOp(this.#app, "resolveClaimCheck", envelope, subject);
  }
  get sealsContent() { return false; }
}

/** The sealing store (storage.contentStore.sealed = true): see ContentStore. */
export class EncryptingContentStore extends ContentStore {
  get sealsContent() { return true; }
}

/** @internal */
export function contentStoreOf(nativeApp, config) {
  return native.contentStoreSealed(config.handle) ? new EncryptingContentStore(nativeApp) : new ContentStore(nativeApp);
}
