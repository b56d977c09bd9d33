// Type declarations of @loomwork/loom (docs/typescript.md).

/** `loom replay-check --json`: each run "matched", "diverged" (stepId, recorded, asked) or "unchecked" (why). */
/** Model tokens and their cost (docs/observability.md). */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  tokens: number;
  /** At observability.prices when each step was recorded; 0 without a price. */
  costUsd: number;
  modelTurns: number;
}

/** `app.usage()`: the runs' usage added up by subject, workflow or model. */
export interface UsageReport {
  by: "subject" | "workflow" | "model";
  groups: Array<Usage & { key: string; runs: number }>;
  total: Usage & { runs: number };
}

/** What `app.upgrade` did to one run. */
export interface UpgradeReport {
  id: string;
  outcome: "upgraded" | "current";
  /** The version it ran on; null when it recorded none. */
  from: string | null;
  to: string;
  /** Recorded steps the code asked for as recorded (upgraded only). */
  replayedSteps?: number;
}

export interface ReplayCheckReport {
  checked: number;
  matched: number;
  diverged: number;
  unchecked: number;
  runs: Array<{ id: string; outcome: "matched" | "diverged" | "unchecked"; stepId?: string; recorded?: string; asked?: string; why?: string; replayedSteps?: number }>;
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** The grouped options, spelled as the decision record spells them (docs/config.md). */
/** execution.claimCheck (ADR 0140): the agent claim-check opt-in. */
export interface ClaimCheckConfig {
  toolIds: string[];
  inlineCapBytes?: number;
  preview?: number | false;
  reclaimable?: string[] | true;
  /** Declarative entries, or functions (result, text) => digest (see DigestFn). */
  digests?: Record<string, { pick?: string[]; length?: string; preview?: number } | DigestFn>;
  onOffload?: (info: OffloadInfo) => void | Promise<void>;
  /** "default": the app's content store (storage.contentStore). */
  store?: string;
}

export interface ConfigGroups {
  execution?: {
    claimCheck?: ClaimCheckConfig;
    effectMiddleware?: Array<{ kind: "retry" | "timeout"; [option: string]: Json } | ClaimCheckMiddleware | EffectMiddleware>;
    journal?: { modelInput?: "delta" | "full" };
    retry?: Record<string, Json>;
    leaseTtlMs?: number;
    snapshotEveryEvents?: number;
    /** The code version this program declares; each run continues only on code of the same version. */
    codeVersion?: string;
  };
  security?: Record<string, Json>;
  compliance?: Record<string, Json>;
  storage?: { home?: string; url?: string; schema?: string; [option: string]: Json | undefined };
  observability?: Record<string, Json>;
}

export class Config {
  readonly home: string;
  describe(): string;
}
export function defineConfig(config?: ConfigGroups | string | Config, options?: { origin?: string }): Config;

/** What a middleware, tool or model sees of one call (the record's EffectContext). */
export interface EffectContext {
  executionId: string;
  stepId: string;
  effectId: string;
  taskKind: string;
  subject: string | null;
  attempt: number;
  transient: boolean;
}

export interface EffectCall { stepId: string; effectId: string; input?: Json }
export interface EffectOutcome { output: Json; error?: { code: string; message: string } }

export class Context {
  readonly executionId: string;
  readonly subject: string | null;
  readonly input: Json;
  step<T extends Json>(stepId: string, fn: () => T | Promise<T>): Promise<T>;
  effect(stepId: string, effectId: string, input?: Json): Promise<Json>;
  effects(calls: EffectCall[], maxConcurrent?: number): Promise<EffectOutcome[]>;
  invokeTransient(effectId: string, input?: Json): Promise<Json>;
  /** True when this run reaches this point on code with change `changeId`; false when its log already goes past it (journaled). */
  patched(changeId: string): Promise<boolean>;
  waitForSignal(name: string): Promise<Json>;
  sleep(stepId: string, ms: number): Promise<null>;
  agentLoop(name: string, options: AgentLoopOptions, prompt: Json): Promise<{ outcome: string; answer: Json; turns: number }>;
}
/** agent.budget (docs/observability.md, "Budgets"): over a limit the run parks budgetExceeded, or fails. */
export interface AgentBudget { maxTokens?: number; maxCostUsd?: number; maxToolCalls?: number; onExceeded?: "park" | "fail" }
export interface AgentLoopOptions { model: Model | string; tools?: string[]; system?: string; maxTurns?: number; parallelToolCalls?: number; budget?: AgentBudget }
/** The record's agentLoop$: the agent loop inside a workflow, with the app's registered model and tools. */
export function agentLoop$(ctx: Context, name: string, options: AgentLoopOptions, prompt: Json): Promise<{ outcome: string; answer: Json; turns: number }>;

export interface ModelRequest { messages: Json[]; tools: Json[]; purpose: "turn" | "compact" }
export interface AssistantMessage {
  role: "assistant";
  content?: string | null;
  toolCalls?: Array<{ id: string; name: string; arguments: Record<string, Json> }>;
  usage?: { inputTokens?: number; outputTokens?: number };
  finishReason?: string;
}
export interface ModelObject {
  id?: string;
  complete(request: ModelRequest, ctx: EffectContext): AssistantMessage | Promise<AssistantMessage>;
}
export class Model { readonly id: string }
export function ScriptedModel(script: Json, options?: { id?: string }): Model;
export function OpenAIModel(options: {
  baseUrl: string; model: string; id?: string; apiKeyEnv?: string; timeoutMs?: number;
  maxRetries?: number; extraBody?: Record<string, Json>;
}): Model;

export interface ToolOptions {
  description?: string;
  parameters?: Json;
  requiresApproval?: boolean;
  untrusted?: boolean;
  returnsMedia?: boolean;
}

export class Run {
  readonly id: string;
  readonly status: "completed" | "failed" | "parked" | "cancelled" | "running" | "submitted";
  readonly output: Json;
  readonly error: { code: string; message: string } | null;
  readonly waitingFor: string | null;
  readonly parkReason: string | null;
  readonly replayedSteps: number;
  readonly effectsRun: number;
  readonly replayContentStoreCalls: number | null;
  /** The run's model tokens and cost so far; null before any model step reported usage. */
  readonly usage: Usage | null;
  readonly raw: Record<string, Json>;
}

export class Worker {
  readonly active: number;
  drainSeconds: number;
  start(): this;
  stop(drainSeconds?: number): Promise<void>;
  runUntilIdle(): Promise<{ runs: number; startFailed: number; storeFailed: boolean }>;
  [Symbol.asyncDispose](): Promise<void>;
}

export interface RunOptions { id?: string; subject?: string }

export class App {
  /** `version`: the code version (execution.codeVersion); each run continues only on an App of its own version. */
  constructor(config?: ConfigGroups | string | Config, options?: { home?: string; version?: string });
  readonly config: Config;
  readonly home: string;
  workflow<I extends Json, O extends Json>(name: string, fn: (ctx: Context, input: I) => O | Promise<O>): typeof fn;
  tool(name: string, options: ToolOptions, fn: (args: any, ctx: EffectContext) => Json | Promise<Json>): typeof fn;
  tool(name: string, fn: (args: any, ctx: EffectContext) => Json | Promise<Json>): typeof fn;
  model(model: Model | ModelObject, options?: { id?: string }): string;
  mcpServer(name: string, command: string, args?: string[], options?: { env?: Record<string, string>; inheritEnv?: boolean; workingDirectory?: string; timeoutMs?: number }): string[];
  agent(name: string, options: { model: Model | ModelObject; tools?: string[]; system?: string; maxTurns?: number; parallelToolCalls?: number; budget?: AgentBudget }): void;
  run(workflow: string, input?: Json, options?: RunOptions): Promise<Run>;
  submit(workflow: string, input?: Json, options?: RunOptions): Promise<Run>;
  resume(id: string): Promise<Run>;
  signal(id: string, name: string, payload?: Json): Promise<Run>;
  retry(id: string): Promise<Run>;
  /** A new run from run `id`'s log up to step `at` (a step id, run again; or a seq), on this code (`loom fork`). */
  fork(id: string, at: string | number, options?: { input?: Json; id?: string }): Promise<Run>;
  /** Failed run `id` again from its failed step, as a new run on this code (`loom rerun`). */
  rerun(id: string, options?: { id?: string }): Promise<Run>;
  /**
   * Moves run `id` (not ended) to this app's code version when its log replays on this code
   * (`loom upgrade ID --to-current`); nothing runs. Rejects with FailedPreconditionError naming
   * the step when it does not replay here, LeaseHeldError when another process runs it.
   */
  upgrade(id: string): Promise<UpgradeReport>;
  /** The model tokens and cost the home's runs recorded, added up (`loom usage --json`); `since`: RFC 3339 or "24h". */
  usage(options?: { by?: "subject" | "workflow" | "model"; since?: string }): Promise<UsageReport>;
  cancel(id: string, reason?: string): Promise<Run>;
  /** The home's recorded runs replayed against this app's code, in memory (`loom replay-check --json`). */
  replayCheck(filters?: { workflow?: string; since?: string; last?: number }): Promise<ReplayCheckReport>;
  /** replayCheck, rejecting with an Error naming each run that diverged or could not be checked. */
  assertReplays(filters?: { workflow?: string; since?: string; last?: number }): Promise<ReplayCheckReport>;
  state(id: string): Promise<Json>;
  log(id: string): Promise<Array<Record<string, Json>>>;
  runs(filter?: { status?: string; workflow?: string }): Promise<Array<Record<string, Json>>>;
  worker(options?: { concurrency?: number; pollMs?: number; drainSeconds?: number }): Worker;
  sweep(options?: { dryRun?: boolean; ttlDays?: number; graceHours?: number }): Promise<Record<string, Json>>;
  erase(subject: string): Promise<EraseSubjectResult>;
  export(subject: string): Promise<SubjectExport>;
  main(argv?: string[]): Promise<number>;
  resolveClaimCheck(envelope: Json, options?: { subject?: string }): Promise<Json | null>;
  readonly contentStore: ContentStore;
  mcpServer(name: string, command: string, args?: string[], options?: { env?: Record<string, string>; inheritEnv?: boolean; workingDirectory?: string; timeoutMs?: number }): string[];
}

export function resolveClaimCheck(app: App, envelope: Json, options?: { subject?: string }): Promise<Json | null>;
/** PreviewDigest: the head of a result's JSON text; `truncated` when it is not the whole. */
export interface PreviewDigest { preview: string; truncated?: true }
export type DigestFn = (result: Json, text: string) => Json | Promise<Json>;
export function previewDigest(maxChars?: number): (result: Json, text?: string) => PreviewDigest;

/** A middleware written in JavaScript: invoke(ctx, input, next). */
export interface EffectMiddleware {
  name?: string;
  invoke(ctx: EffectContext, input: Json, next: (input?: Json) => Promise<Json>): Json | Promise<Json>;
}
/** ClaimCheckEnvelope: what the log records in place of an offloaded result. */
export interface ClaimCheckEnvelope {
  __loomClaimCheck: 1;
  ref: { __loomContent: string };
  size: number;
  digest?: Json;
  retain?: true;
}
export interface OffloadInfo { executionId: string; stepId: string; effectId: string; address: string; size: number; envelope: Json }
export interface ClaimCheckOptions {
  name?: string;
  /** "default": the app's content store (storage.contentStore); the only store an app has. */
  store?: "default";
  inlineCapBytes?: number;
  digests?: Record<string, DigestFn>;
  defaultDigest?: DigestFn;
  retain?: boolean;
  passThrough?: (ctx: EffectContext, result: Json) => boolean | Promise<boolean>;
  envelopesAreData?: boolean;
  effectIds?: string[];
  agentToolFramesOnly?: boolean;
  onOffload?: (info: OffloadInfo) => void | Promise<void>;
  onWarn?: (message: string) => void | Promise<void>;
}
export class ClaimCheckMiddleware {
  readonly name: string;
  readonly options: Readonly<ClaimCheckOptions>;
}
export function claimCheckMiddleware(options?: ClaimCheckOptions): ClaimCheckMiddleware;
/** Calls visit once per address cited; for an event of app.log(), loadBearing marks a retained envelope at the trusted position. */
export function visitCitedAddresses(value: Json, visit: (address: string, info: { loadBearing: boolean }) => void): number;
export function retainRootsOf(event: Record<string, Json>): string[];

export class ContentStore {
  readonly sealsContent: boolean;
  put(bytes: string | Uint8Array, options?: { subject?: string }): Promise<string>;
  get(address: string, options?: { subject?: string }): Promise<Buffer | null>;
  has(address: string): Promise<boolean>;
  capabilities(): Promise<{ remove: boolean; deleteIfUntouchedSince: boolean; touchClock: boolean; enumerate: boolean; sealsContent: boolean }>;
  resolveClaimCheck(envelope: Json, options?: { subject?: string }): Promise<Json | null>;
}
/** The app's store when storage.contentStore.sealed: blobs sealed under their subject's key (ADR 0143). */
export class EncryptingContentStore extends ContentStore { readonly sealsContent: true }
export function sweepUnpinnedContent(app: App, options?: { dryRun?: boolean; ttlDays?: number; graceHours?: number }): Promise<Record<string, Json>>;
export function eraseSubject(app: App, subject: string): Promise<EraseSubjectResult>;
export function exportSubject(app: App, subject: string): Promise<SubjectExport>;

/** What eraseSubject did (`loom erase --json`): the shred, then the subject's blobs deleted. */
export interface EraseSubjectResult {
  subject: string;
  shredded: boolean;
  contentDeleted: {
    deleted: number; retained: number; missing: number; datedAhead: number;
    datedAheadUntil: string | null; keptCitedElsewhere: string[];
  };
}
/** One blob the subject's runs offloaded, resolved for an export (ADR 0140 D8). */
export interface ClaimCheckedBlob {
  address: string;
  size?: number;
  digest: Json;
  /** The blob parsed, when its bytes are JSON text. */
  value?: Json;
  /** The bytes (standard base64), when they are not. */
  bytesBase64?: string;
  /** The store has no such blob (reclaimed or erased). */
  missing?: true;
}
/** exportSubject's document (`loom export`): everything held on the subject. */
export interface SubjectExport {
  format: string;
  subject: string;
  exportedAt: string;
  executions: Array<Record<string, Json>>;
  claimChecked: ClaimCheckedBlob[];
}

export const DEFAULT_CLAIM_CHECK_CAP_BYTES: 1024;
export const DEFAULT_CLAIM_CHECK_PREVIEW_CHARS: 256;
export const version: string;

export class LoomError extends Error { readonly code: string; readonly isLoomError: true }
export class InvalidArgumentError extends LoomError {}
export class ConfigError extends LoomError {}
export class ConfigValidationError extends ConfigError { readonly issues: Array<{ path: string; message: string }> }
export class NotFoundError extends LoomError {}
export class AlreadyExistsError extends LoomError {}
export class ConflictError extends LoomError {}
export class FailedPreconditionError extends LoomError {}
export class UnavailableError extends LoomError {}
export class DeadlineExceededError extends LoomError {}
export class StoppedError extends LoomError {}
export class DataLossError extends LoomError {}
export class InternalError extends LoomError {}
export class StepFailedError extends LoomError { readonly stepId: string; readonly cause: string }
export class ContentCopiesRemainError extends FailedPreconditionError {}
export class LeaseHeldError extends FailedPreconditionError {}
export class SealedEventError extends FailedPreconditionError {}
export class CorruptEventError extends DataLossError {}
export class ContentStoreUnavailableError extends UnavailableError {}
export class Suspended extends LoomError {}
