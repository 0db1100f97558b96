"""A table command's refusal, as a value: what a decider returns instead of its events.

Pure (no gRPC): :mod:`chieu.table.decide` returns a :class:`Refused`, and only the edge
(:func:`chieu.table.statuses.error`) turns it into the gRPC status a client gets, with the same
stable reason and readable message.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from chieu.games.core import RuleViolation


class Kind(Enum):
    """What kind of refusal; the value names the gRPC status it becomes at the edge."""

    INVALID = "INVALID_ARGUMENT"
    """The request itself is wrong (a bad stake, seat or option): retrying cannot help."""
    PRECONDITION = "FAILED_PRECONDITION"
    """The table is not in a state that allows it (a hand is running, the seat is taken)."""
    DENIED = "PERMISSION_DENIED"
    """Not this player's to do (only the host — chủ bàn — starts a hand)."""
    EXISTS = "ALREADY_EXISTS"
    NOT_FOUND = "NOT_FOUND"
    ABORTED = "ABORTED"
    """The table moved on since the caller looked (a stale ``expected_version``)."""


@dataclass(frozen=True, slots=True)
class Refused:
    """A command refused: nothing happened. ``reason`` is stable (``seat_taken``); ``message``
    is for people."""

    kind: Kind
    reason: str
    message: str


def invalid(reason: str, message: str) -> Refused:
    return Refused(Kind.INVALID, reason, message)


def precondition(reason: str, message: str) -> Refused:
    return Refused(Kind.PRECONDITION, reason, message)


def denied(reason: str, message: str) -> Refused:
    return Refused(Kind.DENIED, reason, message)


_KINDS = {k.value: k for k in Kind}


def of(violation: RuleViolation) -> Refused:
    """The refusal of a command the rules core refused (its ``status`` names the kind)."""
    return Refused(_KINDS.get(violation.status, Kind.PRECONDITION), violation.code, violation.message)
