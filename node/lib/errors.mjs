// Loom's errors: one class per code of the core, with the same codes and messages
// (ContentCopiesRemainError and the rest are the record's names). Every error the package
// throws or rejects with is a LoomError whose `code` says what to do about it. Throw an
// UnavailableError from a tool or step to mark a failure retryable (execution.retry); any
// other error fails the step with code "internal" and a message naming where it was thrown.

export class LoomError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = new.target.name;
  }
  get isLoomError() { return true; }
}

const codeClass = (name, code, base = LoomError) => {
  const cls = { [name]: class extends base {} }[name];
  Object.defineProperty(cls.prototype, "code", { value: code, writable: true, configurable: true });
  return cls;
};

export const InvalidArgumentError = codeClass("InvalidArgumentError", "invalidArgument");
export const ConfigError = codeClass("ConfigError", "config");
/** A config failed validation; `issues` lists every problem with its option path. */
export class ConfigValidationError extends ConfigError {
  constructor(message, options) {
    super(message, options);
    this.issues = [];
  }
}
export const NotFoundError = codeClass("NotFoundError", "notFound");
export const AlreadyExistsError = codeClass("AlreadyExistsError", "alreadyExists");
export const ConflictError = codeClass("ConflictError", "conflict");
export const FailedPreconditionError = codeClass("FailedPreconditionError", "failedPrecondition");
export const UnavailableError = codeClass("UnavailableError", "unavailable");
export const DeadlineExceededError = codeClass("DeadlineExceededError", "deadlineExceeded");
export const StoppedError = codeClass("StoppedError", "stopped");
export const DataLossError = codeClass("DataLossError", "dataLoss");
export const InternalError = codeClass("InternalError", "internal");
export const StepFailedError = codeClass("StepFailedError", "stepFailed");
export const ContentCopiesRemainError = codeClass("ContentCopiesRemainError", "failedPrecondition", FailedPreconditionError);
export const LeaseHeldError = codeClass("LeaseHeldError", "failedPrecondition", FailedPreconditionError);
export const SealedEventError = codeClass("SealedEventError", "failedPrecondition", FailedPreconditionError);
export const CorruptEventError = codeClass("CorruptEventError", "dataLoss", DataLossError);
export const ContentStoreUnavailableError = codeClass("ContentStoreUnavailableError", "unavailable", UnavailableError);
/**
 * The run stops here: it parks (a signal, a timer, an approval) or is cancelled. The context's
 * promises reject with it; let it propagate (the run's result no longer matters).
 */
export const Suspended = codeClass("Suspended", "stopped");

const classes = {
  InvalidArgumentError, ConfigError, ConfigValidationError, NotFoundError, AlreadyExistsError,
  ConflictError, FailedPreconditionError, UnavailableError, DeadlineExceededError, StoppedError,
  DataLossError, InternalError, StepFailedError, ContentCopiesRemainError, LeaseHeldError,
  SealedEventError, CorruptEventError, ContentStoreUnavailableError, Suspended,
};

/** The addon makes its errors through this (js_bridge.cc errorToJs). */
export function makeError(className, code, message, extra) {
  const cls = classes[className] ?? LoomError;
  const error = new cls(message);
  Object.defineProperty(error, "code", { value: code, enumerable: true, writable: true });
  for (const [key, value] of Object.entries(extra)) {
    Object.defineProperty(error, key, { value, enumerable: key !== "loomNative", writable: true });
  }
  return error;
}
