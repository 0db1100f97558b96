"""The money of a table's records: what a record pays by the rules and how a hand ends, as the
``Settlement`` and ``HandEnded`` events the log holds. The table decides its records with these
functions (:mod:`chieu.table.decide`) and the auditor proves the logged ones with the same
(:mod:`chieu.audit.proof`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from chieu.games.core import Game, Outcome, Transfer
from chieu.table.v1 import log_pb2
from chieu.tablelog import capped, codec
from chieu.tablelog.fold import Table, pot_coins_of


def rule_money(game: Game[Any, Any, Any, Any], after: Any, game_events: list[Any],
               settled: int) -> tuple[list[Transfer], Outcome | None]:
    """What a record pays by the rules (uncapped, in stake units) and the hand's outcome if the
    record ends it: ``after`` is the game state with the record's ``game_events`` folded,
    ``settled`` how many legs of the hand earlier records paid. The hand's end pays the rest of
    its outcome's transfers; a move before it pays the transfers its events carry. The table
    decides its records with it, and the auditor proves the logged ones with it."""
    outcome = game.outcome(after)
    if outcome is not None:
        return list(outcome.transfers[settled:]), outcome
    return [x for e in game_events for x in getattr(e, "transfers", ())], None


def money_events(t: Table, paid: list[Transfer], outcome: Outcome | None, seed: bytes, players: list[str],
                 hand_no: int, settled: int, reserved: Sequence[int] = (),
                 lost: Sequence[int] = (), pot_coins: int | None = None) -> list[log_pb2.TableEvent]:
    """The ``Settlement`` of ``paid`` (none if nothing is paid) and the ``HandEnded`` of
    ``outcome`` (none while the hand goes on), at the table's stake, currency and ladder level.
    At a coin table whose hand reserved each seat's loss (``reserved``, 金币 per seat; ``lost``:
    what each seat lost in the hand before this record), a settlement some seat cannot pay within
    what is left of its reservation, or whose gà pot pays more than the 金币 it holds
    (``pot_coins``, before this record: ``Table.pot_coins``), carries the capped nets
    (``Settlement.capped``, :func:`chieu.tablelog.capped.within`); its transfers stay the rules'."""
    out: list[log_pb2.TableEvent] = []
    if paid:
        s = log_pb2.Settlement(hand_no=hand_no, first_leg=settled, players=players, stake=t.stake,
                               currency=t.currency, game=t.game_key,
                               transfers=[codec.transfer_message(x) for x in paid])
        if reserved and t.currency == log_pb2.CURRENCY_COINS:
            legs = [(x.from_seat, x.to_seat, x.amount * t.stake) for x in paid]
            cut = capped.within(legs, [r - lo for r, lo in zip(reserved, lost, strict=True)], pot_coins)
            if cut is not None:
                s.capped.extend(cut[0])
                s.capped_pot = cut[1]
        out.append(log_pb2.TableEvent(settlement=s))
    if outcome is not None:
        out.append(log_pb2.TableEvent(hand_ended=log_pb2.HandEnded(
            hand_no=hand_no, outcome=codec.outcome_message(outcome), server_seed=seed, players=players,
            ladder_level=t.ladder_level)))
    return out


ABORTED = "aborted: "
"""How an aborted hand's outcome reason begins (the operator's reason follows)."""


def aborted(players: int, reason: str, pot: int) -> Outcome:
    """The outcome of a hand an operator aborted with ``reason``: no winner, no payment; the gà
    pot keeps what the settlements put in it (``pot``, stake units): the next hand starts with it."""
    return Outcome(winner=None, ranking=(), scores=(0,) * players, transfers=(), reason=ABORTED + reason,
                   pot_balance=pot)


def pot_before(t: Table, logged: Sequence[log_pb2.Settlement]) -> int:
    """The gà pot's 金币 before a record (``Table.pot_coins``), from the fold after it and the
    settlements the record logged: what the auditor caps the record's pot payout with."""
    return t.pot_coins - sum(pot_coins_of(s) for s in logged)


def lost_before(t: Table, logged: Sequence[log_pb2.Settlement]) -> list[int]:
    """Each seat's 金币 lost in the hand before a record, from the fold after it (``t``) and the
    settlements the record logged (what the fold added for them taken off again): what the
    auditor caps the record's settlement with, as the table did with its fold before the record."""
    lost = list(t.hand_lost)
    for s in logged:
        if s.capped:
            lost = [lo + n for lo, n in zip(lost, s.capped, strict=True)]
            continue
        for x in s.transfers:
            if x.HasField("from_seat") and x.from_seat < len(lost):
                lost[x.from_seat] -= x.amount * s.stake
            if x.HasField("to_seat") and x.to_seat < len(lost):
                lost[x.to_seat] += x.amount * s.stake
    return lost
