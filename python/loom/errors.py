"""Loom's exceptions: one class per error code of the core, with the same codes and messages.

Every exception Loom raises is a :class:`loom.Error` whose ``code`` says what to do about it
(fix the input, retry, fix state first, treat it as data loss), as in C++ (``loom/util/error.h``).
Raise :class:`UnavailableError` from a tool or step to mark a failure as retryable
(``execution.retry``); any other exception fails the step with the code ``internal`` and a
message naming where it was raised, its type and its text.
"""

from __future__ import annotations

from typing import List, NamedTuple


class ConfigIssue(NamedTuple):
    """One problem of a config: its full option path and what is wrong."""

    path: str
    message: str


class Error(Exception):
    """Base of every Loom error. ``code`` is the core's stable code name."""

    code: str = "internal"

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.message = message


class InvalidArgumentError(Error):
    code = "invalidArgument"


class ConfigError(Error):
    code = "config"


class ConfigValidationError(ConfigError):
    """A config failed validation; ``issues`` lists every problem with its option path."""

    issues: List[ConfigIssue]
    origin: str

    def __init__(self, message: str = "") -> None:
        super().__init__(message)
        self.issues = []
        self.origin = ""


class NotFoundError(Error):
    code = "notFound"


class AlreadyExistsError(Error):
    code = "alreadyExists"


class ConflictError(Error):
    code = "conflict"


class FailedPreconditionError(Error):
    code = "failedPrecondition"


class UnavailableError(Error):
    """Transient: retrying may succeed. Raised by a step or tool, it is retried durably."""

    code = "unavailable"


class DeadlineExceededError(Error):
    code = "deadlineExceeded"


class StoppedError(Error):
    """An operator stopped the effect with the kill switch (``loom kill``)."""

    code = "stopped"


class DataLossError(Error):
    code = "dataLoss"


class InternalError(Error):
    code = "internal"


class StepFailedError(Error):
    """A journaled step failed; replays raise the same error from the record."""

    code = "stepFailed"
    step_id: str = ""
    cause: str = ""
    cause_message: str = ""


class ContentCopiesRemainError(FailedPreconditionError):
    """Erasure could not delete every copy of a subject's content (ADR 0140 D8)."""


class LeaseHeldError(FailedPreconditionError):
    """Another runner holds the execution's lease."""


class SealedEventError(FailedPreconditionError):
    """A sealed event cannot be read without the keys (security.keys)."""


class CorruptEventError(DataLossError):
    """A stored event cannot be read."""


class ContentStoreUnavailableError(UnavailableError):
    """A claim-checked result could not be stored; the run parks and is retried."""


class Suspended(BaseException):
    """The run stops here: it parks (a signal, a timer, an approval) or is cancelled.

    Raised through workflow code by the context's methods. It is a BaseException so that
    ``except Exception`` does not swallow it; let it propagate.
    """


__all__ = [
    "AlreadyExistsError", "ConfigError", "ConfigIssue", "ConfigValidationError", "ConflictError",
    "ContentCopiesRemainError", "ContentStoreUnavailableError", "CorruptEventError",
    "DataLossError", "DeadlineExceededError", "Error", "FailedPreconditionError",
    "InternalError", "InvalidArgumentError", "LeaseHeldError", "NotFoundError",
    "SealedEventError", "StepFailedError", "StoppedError", "Suspended", "UnavailableError",
]
