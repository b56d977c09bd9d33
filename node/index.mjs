// @loomwork/loom: Loom's durable execution for agents and workflows, on the native core, in
// process (docs/typescript.md).
export { App, Run, Worker, Model, ScriptedModel, OpenAIModel, sweepUnpinnedContent, eraseSubject, exportSubject, resolveClaimCheck } from "./lib/app.mjs";
export { ClaimCheckMiddleware, claimCheckMiddleware, previewDigest, visitCitedAddresses, retainRootsOf } from "./lib/claim_check.mjs";
export { ContentStore, EncryptingContentStore } from "./lib/content.mjs";
export { Config, defineConfig } from "./lib/config.mjs";
export { Context, agentLoop$ } from "./lib/context.mjs";
export * from "./lib/errors.mjs";
import { native } from "./lib/native.mjs";
export const version = native.version;
/** ADR 0140's defaults (execution.claimCheck.inlineCapBytes and preview). */
export const DEFAULT_CLAIM_CHECK_CAP_BYTES = 1024;
export const DEFAULT_CLAIM_CHECK_PREVIEW_CHARS = 256;
