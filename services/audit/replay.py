"""A table's hands move by move as one static HTML page (``chieu replay TABLE --html out.html``):
who did what (the command as sent, or the timeout), the events, the payments, and after each
move the board (Ô ăn quan's ring, the 中国象棋 board) or each seat's own hand (cards, tiles) —
so a dispute is settled by looking. Each hand's header says whether its commitment, deal and
moves verify. Built from the log alone (the fold and the rules core); nothing is fetched."""

from __future__ import annotations

import datetime as dt
import enum
import html
from dataclasses import fields, is_dataclass
from pathlib import Path
from string import Template
from typing import Any

from chieu.audit.proof import Proof
from chieu.games import registry
from chieu.table.v1 import log_pb2
from chieu.tablelog import codec
from chieu.tablelog.fold import Table
from chieu.tablelog.verify import verify

TEMPLATE = Path(__file__).with_name("replay.html")
RED_SUITS = ("♦", "♥")


def _e(x: object) -> str:
    return html.escape(str(x))


def _value(v: Any) -> str:
    if isinstance(v, enum.Enum):
        return str(v.value)
    if isinstance(v, bytes):
        return v.hex()[:16] + ("…" if len(v) > 8 else "")
    if isinstance(v, tuple):
        return "(" + ", ".join(_value(x) for x in v) + ")"
    if is_dataclass(v):
        return _short(v)
    return repr(v) if isinstance(v, str) else str(v)


def _short(obj: Any, limit: int = 220) -> str:
    """``Name(field=value, …)`` of a dataclass, cut at ``limit`` characters."""
    if not is_dataclass(obj):
        return str(obj)[:limit]
    text = f"{type(obj).__name__}(" + ", ".join(f"{f.name}={_value(getattr(obj, f.name))}" for f in fields(obj)
                                               if f.name != "options") + ")"
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _when(ms: int) -> str:
    return dt.datetime.fromtimestamp(ms / 1000, dt.UTC).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]


def _is_card(s: object) -> bool:
    return isinstance(s, str) and 0 < len(s) <= 6


def _chips(items: tuple[Any, ...]) -> str:
    return "".join(f'<span class="card{" red" if any(x in str(c) for x in RED_SUITS) else ""}">{_e(c)}</span>'
                   for c in items)


def _seat_view(view: Any) -> str:
    """A seat's own view: its cards or tiles as chips, its other short facts as text."""
    chips, facts = [], []
    for f in fields(view):
        v = getattr(view, f.name)
        if isinstance(v, tuple) and v and all(_is_card(x) for x in v):
            chips.append(f"{_e(f.name)}: {_chips(v)}")
        elif isinstance(v, int | str | enum.Enum) and f.name not in ("seat", "deadline_ms") and v not in ("", -1):
            facts.append(f"{f.name}={_e(_value(v))}")
    return " ".join(chips) + (f' <span class="kv">{" ".join(facts[:8])}</span>' if facts else "")


def _board(table: Table) -> str:
    state = table.game_state
    if state is None:
        return ""
    try:
        players = table.hand_players or table.last_hand_players
        draw = registry.descriptor(table.game_key).draw
        if draw is not None:
            return draw(state, players)
        return "".join(f'<div class="seatview"><b>{_e(p)}</b> {_seat_view(table.game.view(state, s))}</div>'
                       for s, p in enumerate(players))
    except Exception as e:  # a view the page cannot draw must not hide the moves
        return f'<div class="kv">(no drawing: {_e(type(e).__name__)})</div>'


def _payments(s: log_pb2.Settlement, table_id: str) -> str:
    cur = "金币" if s.currency == log_pb2.CURRENCY_COINS else f"points:{s.game}"
    out = []
    for t in s.transfers:
        frm = s.players[t.from_seat] if t.HasField("from_seat") and t.from_seat < len(s.players) else "gà pot"
        to = s.players[t.to_seat] if t.HasField("to_seat") and t.to_seat < len(s.players) else "gà pot"
        out.append(f'<div class="ev pay">💰 {_e(frm)} → {_e(to)}: {t.amount} × {s.stake} = {t.amount * s.stake} '
                   f'{_e(cur)} ({_e(t.reason)})</div>')
    return "".join(out)


def _events(rec: log_pb2.Record, table: Table) -> str:
    out = []
    for ev in rec.events:
        kind = ev.WhichOneof("kind")
        if kind == "game_event":
            try:
                text = _short(codec.unpack(ev.game_event, table.game_key))
            except Exception:
                text = ev.game_event.TypeName()
            out.append(f'<div class="ev">{_e(text)}</div>')
        elif kind == "settlement":
            out.append(_payments(ev.settlement, rec.table_id))
        elif kind == "hand_started":
            h = ev.hand_started
            out.append(f'<div class="ev"><b>hand {h.hand_no} starts</b>: {_e(", ".join(h.players))}; commitment '
                       f'<span class="fair">{_e(h.seed_commitment)}</span></div>')
        elif kind == "hand_ended":
            end = ev.hand_ended
            o = end.outcome
            winner = end.players[o.winner] if o.HasField("winner") and o.winner < len(end.players) else "nobody"
            out.append(f'<div class="ev"><b>hand {end.hand_no} ends</b>: winner {_e(winner)}, scores '
                       f'{_e(list(o.scores))} ({_e(o.reason)}); seed revealed '
                       f'<span class="fair">{_e(end.server_seed.hex())}</span></div>')
        elif kind is not None:
            body = getattr(ev, kind)
            text = ", ".join(f"{d.name}={v}" for d, v in body.ListFields() if d.type != d.TYPE_MESSAGE)
            out.append(f'<div class="ev">{_e(kind.replace("_", " "))} {_e(text)}</div>')
    return "".join(out)


def _cause(rec: log_pb2.Record, table: Table) -> str:
    cause = rec.WhichOneof("cause")
    if cause == "game_command":
        try:
            return f'<span class="cmd">{_e(_short(codec.unpack(rec.game_command, table.game_key)))}</span>'
        except Exception:
            return f'<span class="cmd">{_e(rec.game_command.TypeName())}</span>'
    if cause == "timeout_seat":
        who = table.hand_players[rec.timeout_seat] if rec.timeout_seat < len(table.hand_players) else rec.timeout_seat
        return f"⏱ the deadline of {_e(who)} passed: the rules played for them"
    return ""


def render(table_id: str, records: list[tuple[int, log_pb2.Record]]) -> str:
    """The page of one table's log (stream sequence, record), every hand move by move."""
    proof = Proof(table_id)  # the money of every hand, derived again from the rules
    verdicts = {v.hand_no: v for v in verify(table_id, records, observe=proof)}
    table = Table(table_id)
    sections: list[str] = []
    rows: list[str] = []
    title = "Before the first hand"

    def close() -> None:
        if rows:
            sections.append(f'<h2>{title}</h2><table class="moves"><tr><th>v</th><th>time (UTC)</th><th>who</th>'
                            f'<th>what</th><th>after it</th></tr>{"".join(rows)}</table>')
            rows.clear()

    for seq, rec in records:
        started = [e.hand_started for e in rec.events if e.WhichOneof("kind") == "hand_started"]
        if started:
            close()
            n = int(started[0].hand_no)
            v = verdicts.get(n)
            money = "; ".join(f"{code} {subject}: {detail}" for code, subject, detail in proof.of_hand(n))
            if v is None:
                status = ""
            elif not v.revealed:
                status = '<span class="kv">in play: the seed is not revealed yet</span>'
            elif v.ok and not money:
                status = f'<span class="ok">verified: commitment, deal, {v.moves_checked} moves and the money</span>'
            else:
                status = f'<span class="bad">FAILED: {_e("; ".join(d for d in (v.detail, money) if d))}</span>'
            title = f"Hand {n} — {_e(', '.join(started[0].players))} — {status}"
        cause = _cause(rec, table)
        table.apply(rec, seq)
        in_hand = started or table.playing or any(e.WhichOneof("kind") == "hand_ended" for e in rec.events)
        board = _board(table) if in_hand and table.game_state is not None else ""
        rows.append(f'<tr><td class="v">{rec.version}</td><td class="v">{_when(rec.server_time_ms)}</td>'
                    f'<td class="who">{_e(rec.actor)}</td><td>{cause}{_events(rec, table)}</td><td>{board}</td></tr>')
    close()
    meta = (f"{len(records)} records, stream sequences {records[0][0]}..{records[-1][0]}; stake {table.stake} "
            f"{'金币' if table.currency == log_pb2.CURRENCY_COINS else 'points'}"
            f"{f'; ladder level {table.ladder_level}' if table.ladder_level else ''}") if records else "no records"
    return Template(TEMPLATE.read_text(encoding="utf-8")).substitute(
        table_id=_e(table_id), game=_e(table.game_key), meta=_e(meta), hands="\n".join(sections))
