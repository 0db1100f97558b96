"""The deciders return their refusals as values, and only the edge makes them gRPC statuses: the
same code, reason and message a client got when the deciders raised them."""

from __future__ import annotations

import grpc
import pytest

from chieu.games.core import InvalidCommand, RuleViolation
from chieu.kit.errors import ServiceError
from chieu.table import decide, refusals
from chieu.table.refusals import Kind, Refused
from chieu.table.statuses import check_command_id, check_table_id, error
from chieu.table.v1 import log_pb2
from chieu.tablelog.fold import Table


def _fold(t: Table, decision: decide.Decision, actor: str) -> None:
    assert not isinstance(decision, Refused), decision
    t.apply(log_pb2.Record(table_id=t.table_id, version=t.version + 1, actor=actor, game=t.game_key,
                           events=decision), t.version + 1)


def _table(*seated: str) -> Table:
    t = Table("refusals-1")
    _fold(t, decide.create(t, "o_an_quan", {}, seated[0]), seated[0])
    for p in seated[1:]:
        _fold(t, decide.take_seat(t, p, None), p)
    return t


def _playing() -> Table:
    t = _table("ann", "bao")
    _fold(t, decide.start_hand(t, "ann", 1_000, bytes(32)), "ann")
    return t


@pytest.mark.parametrize("kind", list(Kind))
def test_every_kind_is_the_grpc_status_it_names(kind: Kind) -> None:
    err = error(Refused(kind, "some_reason", "a message"))
    assert isinstance(err, ServiceError)
    assert (err.status.name, err.reason, err.message) == (kind.value, "some_reason", "a message")


def test_a_long_message_is_bounded_at_the_edge_as_before() -> None:
    err = error(Refused(Kind.INVALID, "r" * 100, "m" * 1000))
    assert len(err.reason.encode()) == 64 and len(err.message.encode()) == 400 and err.message.endswith("…")


@pytest.mark.parametrize(("decision", "expected"), [
    (lambda: decide.create(_table("ann"), "o_an_quan", {}, "bao"),
     (grpc.StatusCode.ALREADY_EXISTS, "table_exists", "that table exists")),
    (lambda: decide.create(Table("x"), "no_such_game", {}, "ann"),
     (grpc.StatusCode.NOT_FOUND, "unknown_game", None)),
    (lambda: decide.create(Table("x"), "o_an_quan", {}, "ann", stake=0),
     (grpc.StatusCode.INVALID_ARGUMENT, "bad_stake", "the stake must be 1..1000000000")),
    (lambda: decide.create(Table("x"), "o_an_quan", {}, "ann", client_seed=bytes(65)),
     (grpc.StatusCode.INVALID_ARGUMENT, "bad_client_seed", "a client seed has at most 64 bytes")),
    (lambda: decide.take_seat(_table("ann", "bao"), "cam", None),
     (grpc.StatusCode.FAILED_PRECONDITION, "table_full", "every seat is taken")),
    (lambda: decide.take_seat(_table("ann"), "bao", 0),
     (grpc.StatusCode.FAILED_PRECONDITION, "seat_taken", "seat 0 is taken")),
    (lambda: decide.start_hand(_table("ann", "bao"), "bao", 1_000, bytes(32)),
     (grpc.StatusCode.PERMISSION_DENIED, "not_host", "only the host (chủ bàn) starts a hand")),
    (lambda: decide.change_settings(_playing(), "ann", {}, 5, None, None),
     (grpc.StatusCode.FAILED_PRECONDITION, "hand_in_progress", "settings change only between hands")),
    (lambda: decide.change_settings(_table("ann"), "ann", {}, None, None, 601),
     (grpc.StatusCode.INVALID_ARGUMENT, "bad_reconnect_grace", "the reconnect grace is 1..600 seconds")),
    (lambda: decide.act(_playing(), "cam", None, 2_000),
     (grpc.StatusCode.PERMISSION_DENIED, "not_seated", "you are not playing in this hand")),
    (lambda: decide.abort_hand(_playing(), " "),
     (grpc.StatusCode.INVALID_ARGUMENT, "bad_reason", "an abort needs a reason of 1-200 characters")),
    (lambda: decide.stand_down(_playing(), ["bao"], decide.LADDER_TOO_LOW),
     (grpc.StatusCode.FAILED_PRECONDITION, "hand_in_progress", "a hand is being played")),
])
def test_a_decider_returns_its_refusal_and_the_edge_gives_the_same_status(
        decision: object, expected: tuple[grpc.StatusCode, str, str | None]) -> None:
    refused = decision()  # type: ignore[operator]
    assert isinstance(refused, Refused)
    err = error(refused)
    status, reason, message = expected
    assert (err.status, err.reason) == (status, reason)
    assert message is None or err.message == message


def test_a_rules_refusal_comes_back_as_a_value_with_its_status() -> None:
    """A move the rules core refuses (it raises) is the decider's returned refusal, of the kind
    its ``status`` names; the table is unchanged."""
    t = _playing()
    mover = t.hand_players[t.game.view(t.game_state, 0).to_move]
    version = t.version
    refused = decide.act(t, mover, "not a command", 2_000)
    assert isinstance(refused, Refused)
    assert (refused.kind, refused.reason) == (Kind.INVALID, "unknown_command")
    assert t.version == version
    assert refusals.of(RuleViolation("not_your_turn", "wait")) == Refused(Kind.PRECONDITION, "not_your_turn", "wait")
    assert refusals.of(InvalidCommand("bad_square", "no")).kind is Kind.INVALID


def test_the_ids_are_checked_at_the_edge() -> None:
    assert check_table_id("t-1_A") == "t-1_A" and check_command_id("") == ""
    with pytest.raises(ServiceError) as err:
        check_table_id("a/b")
    assert (err.value.status, err.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_table_id")
    with pytest.raises(ServiceError) as err:
        check_command_id("with space")
    assert (err.value.status, err.value.reason) == (grpc.StatusCode.INVALID_ARGUMENT, "bad_command_id")
