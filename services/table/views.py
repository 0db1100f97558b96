"""What each viewer of a table may see, and its encoding on the wire.

:class:`Views` builds a viewer's ``TableView`` from the folded :class:`~chieu.tablelog.fold.Table`
and keeps the encodings of the table's current version (one per viewer; spectators share one),
so however many watch streams carry a view it is encoded once. A new version clears them.
"""

from __future__ import annotations

from typing import Any

from chieu.table.v1 import table_service_pb2
from chieu.tablelog import codec
from chieu.tablelog.fold import Table

_TABLE_FIELD = b"\x0a"
"""The key of field 1 (``table``), length-delimited: the start of a ``WatchResponse`` / ``ActResponse``."""
_VERSION = b"\x18"
"""The key of ``TableView.version`` (3, varint)."""
_YOUR_SEAT = b"\x48"
"""The key of ``TableView.your_seat`` (9, varint)."""
_GAME_VIEW = b"\x62"
"""The key of ``TableView.game_view`` (12, length-delimited)."""
_HAND_SEAT = b"\x80\x01"
"""The key of ``TableView.hand_seat`` (16, varint)."""


def _varint(n: int) -> bytes:
    """``n`` (≥ 0) as a protobuf varint."""
    out = bytearray()
    while n > 0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def viewer(table: Table, player: str | None) -> str | None:
    """Whose view ``player`` sees: their own if seated or playing, else a spectator's (``None``)."""
    if player is not None and player not in table.seats and player not in table.hand_players:
        return None
    return player


class Views:
    """The views of one table's current version, by viewer, each built once: the part every
    viewer shares, and each viewer's own part (seats and game view). A ``TableView`` is the two
    merged; its wire encoding is their two serializations concatenated."""

    def __init__(self) -> None:
        self.version = -1
        self.of: Table | None = None
        """The table (the object) the views are of."""
        self.base: table_service_pb2.TableView | None = None
        self.unversioned = b""
        """The shared part serialized without its version."""
        self.base_bytes = b""
        self.personal: dict[str | None, table_service_pb2.TableView] = {}
        self.views: dict[str | None, table_service_pb2.TableView] = {}
        self.wires: dict[str | None, bytes] = {}
        self.packed: dict[Any, Any] = {}
        """Game views of this version already packed (seats that see the same share one)."""
        self.packed_bytes: dict[Any, bytes] = {}
        """The same, serialized."""

    def _new_version(self, table: Table) -> None:
        self.version, self.of = table.version, table
        self.personal, self.views, self.wires, self.packed, self.packed_bytes = {}, {}, {}, {}, {}

    def _shared(self, table: Table) -> table_service_pb2.TableView:
        if table.version != self.version or self.base is None or table is not self.of:
            self._new_version(table)
            self.base = base = base_view(table)
            base.version = 0  # (proto3 writes no zero)
            self.unversioned = base.SerializeToString()
            base.version = table.version
            self.base_bytes = self.unversioned + _VERSION + _varint(table.version)
        return self.base

    def advance(self, table: Table) -> None:
        """``table`` has just folded a record of game events only, onto the version these views
        were built for: what every viewer shares changed in its version alone (a game event
        changes the game state, which is each viewer's own part), so it is not built again."""
        if self.base is None or table is not self.of or table.version != self.version + 1:
            return
        self._new_version(table)
        self.base.version = table.version
        self.base_bytes = self.unversioned + _VERSION + _varint(table.version)

    def _own(self, table: Table, who: str | None) -> table_service_pb2.TableView:
        own = self.personal.get(who)
        if own is None:
            own = self.personal[who] = self._personal(table, who)
        return own

    def view(self, table: Table, player: str | None) -> table_service_pb2.TableView:
        """The table as ``player`` may see it (``None``: a spectator)."""
        base = self._shared(table)
        who = viewer(table, player)
        cached = self.views.get(who)
        if cached is None:
            cached = self.views[who] = table_service_pb2.TableView()
            cached.CopyFrom(base)
            cached.MergeFrom(self._own(table, who))
        return cached

    def wire(self, table: Table, player: str | None) -> bytes:
        """The serialized ``WatchResponse`` of ``player``'s view.

        Built by concatenation, which protobuf parsers read as a merge: the shared part of the
        view is serialized once per version, and only each viewer's own fields once per viewer.
        """
        if table.version != self.version or self.base is None or table is not self.of:
            self._shared(table)
        who = viewer(table, player)
        cached = self.wires.get(who)
        if cached is None:
            body = self.base_bytes + self._own_bytes(table, who)
            cached = self.wires[who] = _TABLE_FIELD + _varint(len(body)) + body
        return cached

    def _seats(self, table: Table, player: str | None) -> tuple[int | None, int | None]:
        """``player``'s table seat and hand seat (None: none)."""
        if player is None:
            return None, None
        seat = table.hand_players.index(player) if player in table.hand_players else None
        return table.table_seat_of(player), seat

    def _game_view(self, table: Table, seat: int | None) -> tuple[Any, bytes]:
        """The game view of hand seat ``seat`` packed, as a message and serialized; seats that
        see the same game view share one encoding of it."""
        game_view = table.game.view(table.game_state, seat)
        try:
            packed = self.packed.get(game_view)
            if packed is None:
                packed = self.packed[game_view] = codec.pack(game_view, table.game_key)
                self.packed_bytes[game_view] = packed.SerializeToString()
            return packed, self.packed_bytes[game_view]
        except TypeError:  # a view that cannot be hashed is packed every time
            packed = codec.pack(game_view, table.game_key)
            return packed, packed.SerializeToString()

    def _own_bytes(self, table: Table, player: str | None) -> bytes:
        """``_personal(table, player)`` serialized, written field by field (the same bytes): no
        message built and no copy of the packed game view."""
        ts, seat = self._seats(table, player)
        out = b"" if ts is None else _YOUR_SEAT + _varint(ts)
        if table.game_state is not None:
            packed = self._game_view(table, seat)[1]
            out += _GAME_VIEW + _varint(len(packed)) + packed
        return out if seat is None else out + _HAND_SEAT + _varint(seat)

    def _personal(self, table: Table, player: str | None) -> table_service_pb2.TableView:
        """What only ``player`` sees: their seats and their game view (the rest is the base)."""
        ts, seat = self._seats(table, player)
        out = table_service_pb2.TableView()
        if ts is not None:
            out.your_seat = ts
        if seat is not None:
            out.hand_seat = seat
        if table.game_state is not None:
            out.game_view.CopyFrom(self._game_view(table, seat)[0])
        return out


def presence(table: Table, player: str) -> tuple[table_service_pb2.SeatPresence.ValueType, int]:
    """Where a seat's player is, as the log has it, and until when a reconnecting player has."""
    if player not in table.seats:
        return table_service_pb2.SEAT_PRESENCE_LEFT, 0
    if player in table.auto:
        return table_service_pb2.SEAT_PRESENCE_AUTO_PLAYED, 0
    if player in table.lost:
        return table_service_pb2.SEAT_PRESENCE_RECONNECTING, table.lost[player]
    return table_service_pb2.SEAT_PRESENCE_HERE, 0


def _seat(table: Table, seat: int, player: str) -> table_service_pb2.SeatInfo:
    """A seat with its player's name and avatar as they sat down, and their presence."""
    name, avatar = table.profiles.get(player, ("", ""))
    where, until = presence(table, player)
    return table_service_pb2.SeatInfo(seat=seat, player_id=player, name=name, avatar=avatar, presence=where,
                                      until_ms=until)


def base_view(table: Table) -> table_service_pb2.TableView:
    """What every viewer of the table's current version sees alike."""
    status = table_service_pb2.TABLE_STATUS_PLAYING if table.playing else table_service_pb2.TABLE_STATUS_WAITING
    base = table_service_pb2.TableView(
        table_id=table.table_id, game=table.game_key, version=table.version, host=table.host, status=status,
        options=table.options_msg,
        seats=[_seat(table, i, p) for i, p in enumerate(table.seats) if p],
        hand_seats=[_seat(table, i, p) for i, p in enumerate(table.hand_players)],
        max_seats=table.max_seats, hand_no=table.hand_no, seed_commitment=table.commitment,
        next_seed_commitment=table.next_seed.commitment if table.next_seed is not None else "",
        last_server_seed=table.last_server_seed, hand_players=table.hand_players,
        stake=table.stake, currency=table.currency,
        ready=sorted(table.ready), require_ready=table.require_ready,
        reconnect_grace_s=table.reconnect_grace_s, auto_played=sorted(table.auto),
        reconnect_deadlines=table.lost, pot=table.pot, ladder_level=table.ladder_level,
        min_reputation=table.min_reputation, round_hand_no=table.hand_no + 1,
        committed=sorted(p for p in table.commitments if p in table.seats), reveal_players=table.round_players,
        revealed=sorted(table.revealed), reveal_deadline_ms=table.round_deadline_ms,
    )
    if table.last_outcome is not None:
        base.last_outcome.CopyFrom(codec.outcome_message(table.last_outcome))
    return base


def view(table: Table, player: str | None) -> table_service_pb2.TableView:
    """``player``'s view of the table, built afresh (for a one-off read; a served table keeps
    its :class:`Views`)."""
    return Views().view(table, player)
