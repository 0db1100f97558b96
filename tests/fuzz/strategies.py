"""Hypothesis strategies built from protobuf descriptors: every request of every RPC in the right
shape, with hostile values.

- **Scalars**: integers at and beyond their edges (0, ±1, the type's min and max), floats with
  NaN, ±inf and −0.0, booleans, enums with values the ``.proto`` never named.
- **Strings**: odd unicode (any code point but a surrogate, which protobuf cannot carry: RTL
  overrides, zero-width joiners, NUL, combining marks, Vietnamese in NFC and NFD, astral
  characters), injection-shaped text, and long runs (past a reason's 64 characters, a message's
  400, a token's 4,096, the server's 64 KiB receive limit); **bytes**: random, empty, long.
- **Repeated fields**: a few items, or a huge list (thousands of copies of one item).
- **``google.protobuf.Any``**: empty, a random type URL with random bytes, a real command type of
  any game with random bytes, or a real command of any game (the table's own or another game's)
  built from its own descriptor; **``Struct``** (game options): JSON trees whose keys are often a
  game's real option names.
- **Raw bodies**: random bytes, bad UTF-8 in a string field, a request with junk after it.
- **Right shapes**: a field whose name is in ``pools`` (``table_id``, ``player_id``, ``game``,
  ``room_id``, …) often takes a real value, so calls reach past the first validation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from functools import cache
from typing import Any

from google.protobuf import any_pb2, message_factory, struct_pb2
from google.protobuf.descriptor import Descriptor, FieldDescriptor
from google.protobuf.message import Message
from hypothesis import strategies as st

from chieu.games import registry
from chieu.tablelog import codec

Pools = Mapping[str, Sequence[Any]]
"""Real values by field name (``table_id`` → the ids of tables that exist)."""

WEIRD = (
    "", " ", "\x00", "\t\n\r", "\u202e\u202dabc", "a\u200d\u200db", "\ufeff", "\uffff", "\U0010ffff",
    "e\u0301\u0301\u0301", "Nguyễn Văn Ệ", "Nguye\u0302\u0303n", "𝕏𝕐ℤ", "👨‍👩‍👧‍👦", "中国象棋", "%s%n%x",
    "{}", "null", "../../etc/passwd", "' OR 1=1 --", "<script>alert(1)</script>", "${jndi:x}",
    "\\u0000", "service:table", "operator", "-1", "9" * 40, "1e309", "NaN", "phom ", "PHOM", "o_an_quan\x00",
)
"""Strings that have broken parsers, logs, SQL or terminals somewhere."""

LONG = (65, 201, 401, 4097, 16_000)
"""Lengths just past a reason (64), a subject (200), a message (400), a token (4,096) and the
server's receive limit (64 KiB)."""


@st.composite
def weighted(draw: st.DrawFn, *options: tuple[float, st.SearchStrategy[Any]]) -> Any:
    """One of ``options``, chosen by its weight with a fair coin. ``st.one_of`` is no fair choice
    here: Hypothesis steers away from choices it has already explored, so a branch with few
    values (the valid tokens) would soon be hardly ever taken."""
    coin = draw(st.randoms(use_true_random=False)).random() * sum(w for w, _ in options)
    for w, option in options:
        if coin < w:
            return draw(option)
        coin -= w
    return draw(options[-1][1])


def hostile_text(max_size: int = 24) -> st.SearchStrategy[str]:
    return st.one_of(
        st.text(alphabet=st.characters(exclude_categories=("Cs",)), max_size=max_size),
        st.sampled_from(WEIRD),
        st.builds(lambda s, n: s * n, st.sampled_from(("a", "ệ", "𝕏", "\u202e", "\x00", "%")),
                  st.sampled_from(LONG)),
    )


def hostile_bytes() -> st.SearchStrategy[bytes]:
    return st.one_of(st.binary(max_size=64), st.builds(lambda b, n: b * n, st.binary(min_size=1, max_size=4),
                                                      st.sampled_from(LONG)))


def _ints(bits: int, signed: bool) -> st.SearchStrategy[int]:
    lo, hi = (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1) if signed else (0, 2 ** bits - 1)
    edges = sorted({v for v in (0, 1, 2, 3, 5, 7, 11, 1000, -1, -2, lo, lo + 1, hi, hi - 1, 2 ** 31 - 1,
                                2 ** 31, 2 ** 53 + 1, -(2 ** 31)) if lo <= v <= hi})
    return st.one_of(st.sampled_from(edges), st.integers(lo, hi))


_INT_BITS = {
    FieldDescriptor.TYPE_INT32: (32, True), FieldDescriptor.TYPE_SINT32: (32, True),
    FieldDescriptor.TYPE_SFIXED32: (32, True), FieldDescriptor.TYPE_INT64: (64, True),
    FieldDescriptor.TYPE_SINT64: (64, True), FieldDescriptor.TYPE_SFIXED64: (64, True),
    FieldDescriptor.TYPE_UINT32: (32, False), FieldDescriptor.TYPE_FIXED32: (32, False),
    FieldDescriptor.TYPE_UINT64: (64, False), FieldDescriptor.TYPE_FIXED64: (64, False),
}


def _scalar(f: FieldDescriptor) -> st.SearchStrategy[Any]:
    if f.type in _INT_BITS:
        return _ints(*_INT_BITS[f.type])
    if f.type == FieldDescriptor.TYPE_DOUBLE:
        return st.floats(allow_nan=True, allow_infinity=True)
    if f.type == FieldDescriptor.TYPE_FLOAT:
        return st.floats(allow_nan=True, allow_infinity=True, width=32)
    if f.type == FieldDescriptor.TYPE_BOOL:
        return st.booleans()
    if f.type == FieldDescriptor.TYPE_STRING:
        return hostile_text()
    if f.type == FieldDescriptor.TYPE_BYTES:
        return hostile_bytes()
    if f.type == FieldDescriptor.TYPE_ENUM:
        named = [v.number for v in f.enum_type.values]
        return st.one_of(st.sampled_from(named), _ints(32, True))
    raise TypeError(f"no strategy for {f.full_name} (type {f.type})")


@cache
def game_commands() -> tuple[tuple[str, Descriptor], ...]:
    """Every command message of every registered game: (game key, its descriptor)."""
    out = []
    for key in registry.KEYS:
        module = codec.game_module(key)
        for cls in registry.get(key).commands:
            out.append((key, getattr(module, cls.__name__).DESCRIPTOR))
    return tuple(out)


@cache
def option_names() -> tuple[str, ...]:
    """Every game's option names, as the rules files spell them."""
    names: set[str] = set()
    for key in registry.KEYS:
        game = registry.get(key)
        names.update(game.option_values(game.parse_options({})))
    return tuple(sorted(names))


def json_values() -> st.SearchStrategy[Any]:
    leaves = st.one_of(st.none(), st.booleans(), st.floats(allow_nan=True, allow_infinity=True),
                       st.sampled_from((0, 1, -1, 2 ** 53, 10 ** 300, 0.5, 3600, 1_000_000)), hostile_text(12))
    keys = st.one_of(st.sampled_from(option_names()), hostile_text(12))
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                                        st.dictionaries(keys, inner, max_size=3)), max_leaves=8)


def structs() -> st.SearchStrategy[struct_pb2.Struct]:
    keys = st.one_of(st.sampled_from(option_names()), hostile_text(12))

    def build(d: dict[str, Any]) -> struct_pb2.Struct:
        s = struct_pb2.Struct()
        s.update(d)
        return s

    return st.dictionaries(keys, json_values(), max_size=4).map(build)


def _packed(m: Message) -> any_pb2.Any:
    out = any_pb2.Any()
    out.Pack(m)
    return out


def anys(pools: Pools, depth: int) -> st.SearchStrategy[any_pb2.Any]:
    commands = st.sampled_from([d for _, d in game_commands()])
    return st.one_of(
        st.just(any_pb2.Any()),
        st.builds(lambda url, value: any_pb2.Any(type_url=url, value=value), hostile_text(), hostile_bytes()),
        st.builds(lambda d, value: any_pb2.Any(type_url=f"type.googleapis.com/{d.full_name}", value=value),
                  commands, st.binary(max_size=32)),
        commands.flatmap(lambda d: messages(d, pools, depth + 1)).map(_packed),
    )


MAX_DEPTH = 4


def _fits(f: FieldDescriptor, value: Any) -> bool:
    """Whether a pool's ``value`` can be field ``f``'s (``currency`` is a string in one request
    and an enum in another)."""
    if f.message_type is not None:
        return isinstance(value, Message) and value.DESCRIPTOR is f.message_type
    if f.type == FieldDescriptor.TYPE_STRING:
        return isinstance(value, str)
    if f.type == FieldDescriptor.TYPE_BYTES:
        return isinstance(value, bytes)
    return isinstance(value, int) and not isinstance(value, bool)


def _tame_scalar(f: FieldDescriptor) -> st.SearchStrategy[Any]:
    """A plausible value: a short fresh id, a small positive number, a named enum value."""
    if f.type in _INT_BITS:
        return st.integers(1, 5)
    if f.type == FieldDescriptor.TYPE_STRING:
        return st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=10).map(
            lambda s: f"fz-{s}")
    if f.type == FieldDescriptor.TYPE_ENUM:
        return st.sampled_from([v.number for v in f.enum_type.values if v.number] or [0])
    if f.type == FieldDescriptor.TYPE_BYTES:
        return st.binary(max_size=16)
    return _scalar(f)


def _field(f: FieldDescriptor, pools: Pools, depth: int, tame: bool) -> st.SearchStrategy[Any]:
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        key_f, value_f = f.message_type.fields_by_name["key"], f.message_type.fields_by_name["value"]
        return st.dictionaries(_field(key_f, pools, depth, tame), _field(value_f, pools, depth, tame), max_size=3)
    if f.message_type is not None:
        one: st.SearchStrategy[Any] = messages(f.message_type, pools, depth + 1, tame=tame)
    else:
        one = _tame_scalar(f) if tame else _scalar(f)
    real = [v for v in pools.get(f.name, ()) if _fits(f, v)]
    if real:
        one = st.sampled_from(real) if tame else st.one_of(st.sampled_from(real), one)
    if not f.is_repeated:
        return one
    if tame:
        return st.lists(one, min_size=1, max_size=3)
    return st.one_of(st.lists(one, max_size=4),
                     st.builds(lambda item, n: [item] * n, one, st.sampled_from((1000, 10_000))))


def _assign(msg: Message, f: FieldDescriptor, value: Any) -> None:
    target = getattr(msg, f.name)
    if f.message_type is not None and f.message_type.GetOptions().map_entry:
        value_f = f.message_type.fields_by_name["value"]
        for k, v in value.items():
            if value_f.message_type is not None:
                target[k].CopyFrom(v)
            else:
                target[k] = v
    elif f.is_repeated:
        if f.message_type is not None:
            for v in value:
                target.add().CopyFrom(v)
        else:
            target.extend(value)
    elif f.message_type is not None:
        target.CopyFrom(value)
    else:
        setattr(msg, f.name, value)


def tame_anys(pools: Pools, depth: int) -> st.SearchStrategy[any_pb2.Any]:
    """A plausible command: most often one of the pools' games (``command_games``), sometimes any."""
    games = set(pools.get("command_games", ()))
    ours = [d for g, d in game_commands() if g in games] or [d for _, d in game_commands()]
    commands = st.one_of(st.sampled_from(ours), st.sampled_from([d for _, d in game_commands()]))
    return commands.flatmap(lambda d: messages(d, pools, depth + 1, tame=True)).map(_packed)


def messages(desc: Descriptor, pools: Pools, depth: int = 0, *, tame: bool = False) -> st.SearchStrategy[Message]:
    """Messages of type ``desc``: any subset of its fields set, each with a hostile value of its
    shape; or, ``tame``, every field set to a plausible value (a pool's, where there is one), so
    that a call with the right token goes through."""
    if desc.full_name == "google.protobuf.Any":
        if depth > MAX_DEPTH:
            return st.just(any_pb2.Any())
        return tame_anys(pools, depth) if tame else anys(pools, depth)
    if desc.full_name == "google.protobuf.Struct":
        real = [v for v in pools.get("options", ()) if isinstance(v, struct_pb2.Struct)]
        return st.sampled_from(real or [struct_pb2.Struct()]) if tame else structs()
    cls: Callable[[], Message] = message_factory.GetMessageClass(desc)
    if depth > MAX_DEPTH:
        return st.builds(cls)
    fields = {f.name: _field(f, pools, depth, tame) for f in desc.fields}

    def build(values: dict[str, Any]) -> Message:
        msg = cls()
        for name, value in values.items():
            _assign(msg, desc.fields_by_name[name], value)
        return msg

    if tame:  # every field, but a proto3 ``optional`` scalar (unset means "no value" there) only sometimes
        explicit = {n for n in fields if desc.fields_by_name[n].has_presence
                    and desc.fields_by_name[n].message_type is None}
        return st.fixed_dictionaries({n: v for n, v in fields.items() if n not in explicit},
                                     optional={n: fields[n] for n in explicit}).map(build)
    return st.fixed_dictionaries({}, optional=fields).map(build)


def raw_bodies(desc: Descriptor, pools: Pools) -> st.SearchStrategy[bytes]:
    """Request bodies as a hostile client sends them, not through a protobuf library: random bytes,
    a string field of bad UTF-8, a well-formed request with junk after it."""
    strings = [f.number for f in desc.fields if f.type == FieldDescriptor.TYPE_STRING]
    bad_utf8 = st.builds(lambda n, junk: bytes([n << 3 | 2, len(junk)]) + junk, st.sampled_from(strings or [1]),
                         st.sampled_from((b"\xff\xfe", b"\xc3\x28", b"\xed\xa0\x80", b"\xf4\x90\x80\x80")))
    return st.one_of(st.binary(max_size=48), bad_utf8,
                     st.builds(lambda m, junk: m.SerializeToString() + junk, messages(desc, pools),
                               st.binary(min_size=1, max_size=6)))


def requests(desc: Descriptor, pools: Pools) -> st.SearchStrategy[Message | bytes]:
    """Requests of type ``desc``: plausible ones (two in five), hostile ones (two in five) and raw
    bodies (:func:`raw_bodies`)."""
    return weighted((2, messages(desc, pools, tame=True)), (2, messages(desc, pools)), (1, raw_bodies(desc, pools)))
