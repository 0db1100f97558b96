"""Issue 32, attacks 1 and 2: an option that scales money has a bound, so a coin table cannot be
made to log a settlement the books cannot post (``amounts.wrongAccusation=9e18`` at stake 10),
to move a whole balance in one move (``1e9`` at stake 1), or to answer INTERNAL (``1e19``):
``CreateTable`` and ``ChangeSettings`` refuse them as ``bad_options`` and append nothing. A table
logged before the bounds still folds as played, and starts no hand until its host changes them;
a stake at which one move could overflow the books is refused (``money_overflow``)."""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any

import grpc
import pytest
from google.protobuf import struct_pb2

from chieu.games import registry
from chieu.kit.settings import Settings
from chieu.table import decide
from chieu.table.refusals import Refused
from chieu.table.v1 import log_pb2
from chieu.table.v1 import table_service_pb2 as pb
from chieu.tablelog.fold import Table, options_struct
from tests.table.helpers import client, refused
from tests.table.test_gates import fund

COINS = log_pb2.CURRENCY_COINS
BAD = (grpc.StatusCode.INVALID_ARGUMENT, "bad_options")


def uid(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


@pytest.mark.integration
@pytest.mark.parametrize(("stake", "amount"), [(10, 9e18), (1, 1e9), (1, 1e19)],
                         ids=["poison-9e18-stake-10", "dump-1e9-stake-1", "internal-1e19"])
async def test_a_coin_table_refuses_an_unbounded_amount(settings: Settings, table_server: str, ledger_server: str,
                                                        stake: int, amount: float) -> None:
    host_id = uid("host")
    await fund(settings, ledger_server, host_id, 3000)  # the seat gate: a stake-10 hand at the bound reserves 2,460
    host = client(settings, table_server, host_id)
    try:
        poison = {"amounts": {"wrongAccusation": amount}}
        assert await refused(host.create("phom", poison, stake=stake, currency=COINS)) == BAD
        view = await host.create("phom", {}, stake=stake, currency=COINS)
        patch = struct_pb2.Struct()
        patch.update(poison)
        change = host.stub.ChangeSettings(pb.ChangeSettingsRequest(table_id=view.table_id, options=patch),
                                          metadata=host.metadata)
        assert await refused(change) == BAD
        assert (await host.get(view.table_id)).version == view.version  # nothing appended
        ok = {"amounts": {"wrongAccusation": 100}}  # the bound itself is a table's to choose
        assert (await host.create("phom", ok, stake=stake, currency=COINS)).version == 1
    finally:
        await host.close()


@pytest.mark.integration
async def test_dominoes_pip_stake_is_bounded(settings: Settings, table_server: str) -> None:
    host = client(settings, table_server, uid("host"))
    try:
        assert await refused(host.create("dominoes", {"pipStake": 1e9})) == BAD
        assert await refused(host.create("dominoes", {"pipStake": 11})) == BAD
        assert (await host.create("dominoes", {"pipStake": 10})).version == 1
    finally:
        await host.close()


def _created(game: str, values: dict[str, Any], stake: int = 1) -> Table:
    """A table folded from a TableCreated record as an older table service logged it (no bounds)."""
    t = Table("old")
    record = log_pb2.Record(version=1, events=[log_pb2.TableEvent(table_created=log_pb2.TableCreated(
        table_id="old", game=game, options=options_struct(values), host="h", seats=4, stake=stake,
        currency=COINS)), log_pb2.TableEvent(player_seated=log_pb2.PlayerSeated(player_id="h", seat=0))])
    t.apply(record, 1)
    return t


def test_a_table_logged_before_the_bounds_folds_as_played_and_starts_no_hand() -> None:
    t = _created("phom", {"amounts": {"wrongAccusation": 9e18}}, stake=10)
    assert t.options.amounts.wrong_accusation == 9 * 10**18  # replayed as it was played
    assert "wrongAccusation" in t.options_refused
    t.seats[1] = "x"
    started = decide.start_hand(t, "h", 0, b"\0" * 32)
    assert isinstance(started, Refused) and started.reason == "bad_options"
    fixed = decide.change_settings(t, "h", {"amounts": {"wrongAccusation": 1}}, None, None, None)
    assert not isinstance(fixed, Refused)
    t.apply(log_pb2.Record(version=2, events=fixed), 2)
    assert t.options_refused == ""


def test_a_stake_at_which_one_move_could_overflow_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fit check (stake × the game's ``max_move_units`` ≤ int64), whatever the bounds are."""
    huge = replace(registry.descriptor("phom"), max_move_units=10**11)
    monkeypatch.setattr(registry, "_DESCRIPTORS", {**registry._DESCRIPTORS, "phom": huge})
    t = Table("t")
    made = decide.create(t, "phom", {}, "h", stake=decide.MAX_STAKE)
    assert isinstance(made, Refused) and made.reason == "money_overflow"
    fine = decide.create(t, "phom", {}, "h", stake=1000)
    assert not isinstance(fine, Refused)
    t.apply(log_pb2.Record(version=1, events=fine), 1)
    raised = decide.change_settings(t, "h", {}, decide.MAX_STAKE, None, None)
    assert isinstance(raised, Refused) and raised.reason == "money_overflow"
