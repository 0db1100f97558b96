"""Every RPC of every service × every kind of credential, against the real services (issue 16).

:data:`MATRIX` is the expected answer of each cell. Its rows must be exactly the RPCs the generated
descriptors list (a new RPC cannot be added without its row), and which cells it lets through must
be exactly what the table "RPC → who may call" of docs/security.md says (parsed below): that page is the
contract people read, this table the one the servers are held to.

Each call is made with the smallest request that names a player (``player_id`` = the ``player``
column's own id, where the request has that field): an allowed caller gets past authentication and
the role check, and then anything but those refusals (``INVALID_ARGUMENT`` for the empty request
is fine); a refused caller gets exactly the status and reason of its cell.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path

import grpc
import pytest
from google.protobuf.message import Message
from grpc_health.v1 import health_pb2
from grpc_reflection.v1alpha import reflection_pb2

from chieu.kit import auth
from chieu.kit.settings import Settings
from tests.conftest import SIGNER, credential, token
from tests.security.rpcs import SERVICES, Answer, Rpc, bearer, call, past_auth, service_rpcs, standard_rpcs

pytestmark = pytest.mark.integration

ROLES_PAGE = Path(__file__).resolve().parents[2] / "docs" / "security.md"

COLUMNS = ("none", "expired", "bad_key", "player", "other", "operator", "auditor",
           "s:table", "s:ledger", "s:ladder", "s:lobby")
"""The credentials: no token; an expired token; a token signed by an unknown Ed25519 key; the
player the request names (``self``); another player; an operator; an auditor; each service's own
credential."""

CELLS: dict[str, tuple[grpc.StatusCode, str] | None] = {
    "ok": None,  # past authentication and the role check
    "no_token": (grpc.StatusCode.UNAUTHENTICATED, "no_token"),
    "expired": (grpc.StatusCode.UNAUTHENTICATED, "token_expired"),
    "bad_key": (grpc.StatusCode.UNAUTHENTICATED, "unknown_key"),
    "role": (grpc.StatusCode.PERMISSION_DENIED, "role_required"),
    "yours": (grpc.StatusCode.PERMISSION_DENIED, "not_yours"),
    "person": (grpc.StatusCode.PERMISSION_DENIED, "not_a_player"),
}
"""What a cell's word means: ``ok``, or the status and the stable reason of the refusal."""

MATRIX = """
rpc                         none     expired  bad_key  player other operator auditor s:table s:ledger s:ladder s:lobby
table.CreateTable           no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.TakeSeat              no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.StartHand             no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.Act                   no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.GetTable              no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.Watch                 no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.StandUp               no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.SetReady              no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.CommitSeed            no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.RevealSeed            no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.ChangeSettings        no_token expired  bad_key  ok     ok    ok       ok      person  person   person   person
table.AbortHand             no_token expired  bad_key  role   role  ok       role    person  person   person   person
table.AuditLog              no_token expired  bad_key  role   role  role     ok      person  person   person   person
table.VerifyDeals           no_token expired  bad_key  role   role  role     ok      person  person   person   person
ledger.GetBalances          no_token expired  bad_key  ok     yours ok       ok      yours   yours    yours    ok
ledger.GetHistory           no_token expired  bad_key  ok     yours ok       ok      yours   yours    yours    yours
ledger.GetPot               no_token expired  bad_key  role   role  ok       ok      ok      ok       ok       ok
ledger.ListPrices           no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
ledger.GetBoard             no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
ledger.CheckEligibility     no_token expired  bad_key  ok     yours ok       ok      ok      ok       ok       ok
ledger.ClaimWelcome         no_token expired  bad_key  role   role  ok       role    role    role     role     ok
ledger.CreditPurchase       no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.ConvertHearts        no_token expired  bad_key  ok     yours ok       yours   yours   yours    yours    yours
ledger.ResetNegativeScore   no_token expired  bad_key  ok     yours ok       yours   yours   yours    yours    yours
ledger.ResetReputation      no_token expired  bad_key  ok     yours ok       yours   yours   yours    yours    yours
ledger.RequestSong          no_token expired  bad_key  ok     yours ok       yours   yours   yours    yours    yours
ledger.BuyMembership        no_token expired  bad_key  ok     yours ok       yours   yours   yours    yours    yours
ledger.CreditReward         no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.Adjust               no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.HoldCoins            no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.ReleaseCoins         no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.ListReviewHolds      no_token expired  bad_key  role   role  ok       ok      role    role     role     role
ledger.ReviewHold           no_token expired  bad_key  role   role  ok       role    role    role     role     role
ledger.Audit                no_token expired  bad_key  role   role  ok       ok      role    role     role     role
ledger.ReserveHand          no_token expired  bad_key  role   role  role     role    ok      role     role     role
ladder.GetStanding          no_token expired  bad_key  ok     yours ok       ok      yours   yours    yours    ok
ladder.GetHistory           no_token expired  bad_key  ok     yours ok       ok      yours   yours    yours    yours
ladder.CheckSeat            no_token expired  bad_key  role   role  ok       ok      ok      ok       ok       ok
ladder.GetLeaderboard       no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
ladder.GetMonthlyRanking    no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
ladder.PayMonthlyRewards    no_token expired  bad_key  role   role  ok       role    role    role     role     role
ladder.GetReputation        no_token expired  bad_key  ok     yours ok       ok      ok      ok       yours    ok
ladder.Correct              no_token expired  bad_key  role   role  ok       role    role    role     role     role
lobby.SignInGuest           ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
lobby.Register              ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
lobby.SignIn                ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
lobby.Refresh               ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
lobby.SignOut               no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.RevokeSessions        no_token expired  bad_key  role   role  ok       role    role    role     role     role
lobby.CheckSession          no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.ListRevocations       no_token expired  bad_key  role   role  role     role    ok      ok       ok       ok
lobby.ListZones             no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.ListRooms             no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.GetRoom               no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.PutRoom               no_token expired  bad_key  role   role  ok       role    role    role     role     role
lobby.DeleteRoom            no_token expired  bad_key  role   role  ok       role    role    role     role     role
lobby.ListRoomAudit         no_token expired  bad_key  role   role  ok       ok      role    role     role     role
lobby.ListTables            no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.WatchRoom             no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.QuickSeat             no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
lobby.GetHome               no_token expired  bad_key  ok     yours ok       ok      yours   yours    yours    yours
lobby.GetProfiles           no_token expired  bad_key  ok     ok    ok       ok      ok      ok       ok       ok
health.Check                ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
health.List                 ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
health.Watch                ok       ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
reflection.ServerReflectionInfo ok   ok       ok       ok     ok    ok       ok      ok      ok       ok       ok
"""
"""Service.RPC, then one word of :data:`CELLS` per column of :data:`COLUMNS`. ``health`` and
``reflection`` are served by every server (and called on each)."""


def matrix() -> dict[str, dict[str, str]]:
    lines = [line.split() for line in MATRIX.strip().splitlines()]
    assert tuple(lines[0][1:]) == COLUMNS
    rows: dict[str, dict[str, str]] = {}
    for words in lines[1:]:
        assert len(words) == len(COLUMNS) + 1, words
        assert words[0] not in rows, f"{words[0]} twice"
        assert all(w in CELLS for w in words[1:]), words
        rows[words[0]] = dict(zip(COLUMNS, words[1:], strict=True))
    return rows


ROWS = matrix()
RPCS = {r.id: r for r in (*service_rpcs(), *standard_rpcs())}


def test_every_rpc_has_a_row_and_every_row_an_rpc() -> None:
    assert sorted(set(RPCS) - set(ROWS)) == [], "RPCs with no row in MATRIX"
    assert sorted(set(ROWS) - set(RPCS)) == [], "rows of MATRIX that name no RPC"


# -- docs/security.md's table -------------------------------------------------------------------

def readme_table() -> list[tuple[str, str, str]]:
    """The rows (service, RPC cell, who-may-call cell) of docs/security.md's "RPC → who may call"."""
    text = ROLES_PAGE.read_text(encoding="utf-8")
    section = text.split("**RPC → who may call**", 1)[1]
    rows = []
    for line in section.splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells[0] in ("service", "---"):
            continue
        assert len(cells) == 3, line
        rows.append((cells[0], cells[1], cells[2]))
    return rows


RPC_NAMES = re.compile(r"^((?:`[A-Z]\w*`(?:,\s*|\s+))+)(.*)$")


def _names(text: str) -> list[str]:
    return re.findall(r"`([A-Z]\w*)`", text)


def _allowed(callers: str) -> set[str]:
    """The columns a caller list of the page lets through."""
    out: set[str] = set()
    callers = re.sub(r"\([^)]*\)", "", callers)
    for item in (c.strip().replace("`", "") for c in callers.split(",")):
        if item == "no token":
            out |= set(COLUMNS)
        elif item == "any valid token":
            out |= set(COLUMNS) - {"none", "expired", "bad_key"}
        elif item == "players":
            out |= {"player", "other", "operator", "auditor"}
        elif item == "self":
            out.add("player")
        elif item in ("operator", "auditor"):
            out.add(item)
        elif item == "any service":
            out |= {c for c in COLUMNS if c.startswith("s:")}
        elif item.startswith("service:") and f"s:{item[8:]}" in COLUMNS:
            out.add(f"s:{item[8:]}")
        else:
            raise AssertionError(f"docs/security.md names a caller the matrix does not know: {item!r}")
    return out


def readme_allowed() -> dict[str, set[str]]:
    """RPC id → the columns the page lets through. A row's RPCs are backquoted names, ``every
    call`` or ``the others`` (every RPC of the service no other row names); its callers are split
    on ``;``, and a part that starts with backquoted RPC names applies to those alone."""
    found: dict[str, set[str]] = {}
    others: list[tuple[str, str]] = []
    for service, rpcs, who in readme_table():
        assert service in SERVICES, service
        every = [m.name for m in SERVICES[service].methods]
        if rpcs.startswith("the others"):
            others.append((service, who))
            continue
        names = every if rpcs == "every call" else _names(rpcs)
        for part in who.split(";"):
            named = RPC_NAMES.match(part.strip())
            targets, callers = (_names(named.group(1)), named.group(2)) if named else (names, part)
            for name in targets:
                assert name in every, f"docs/security.md names {service}.{name}, which does not exist"
                found[f"{service}.{name}"] = _allowed(callers)
    for service, who in others:
        for m in SERVICES[service].methods:
            found.setdefault(f"{service}.{m.name}", _allowed(who))
    return found


def test_the_matrix_lets_through_exactly_whom_the_readme_says() -> None:
    readme = readme_allowed()
    services = {k for k in ROWS if k.split(".")[0] in SERVICES}
    assert sorted(services - set(readme)) == [], "RPCs the table of docs/security.md does not cover"
    differ = {rpc: {"readme": sorted(readme[rpc]), "matrix": sorted(c for c, w in ROWS[rpc].items() if w == "ok")}
              for rpc in sorted(services) if readme[rpc] != {c for c, w in ROWS[rpc].items() if w == "ok"}}
    assert differ == {}


def test_the_readme_parser_reads_what_it_should() -> None:
    """The parser is not vacuous: a few rows read as a person would read them."""
    readme = readme_allowed()
    assert readme["ledger.CreditReward"] == {"operator"}  # no service credential mints money (issue 27)
    assert readme["ledger.ReserveHand"] == {"s:table"}  # a hand's reservations: the table's alone (issue 32)
    assert readme["table.AuditLog"] == {"auditor"} and readme["table.Act"] == {"player", "other", "operator",
                                                                                "auditor"}
    assert readme["lobby.ListRoomAudit"] == {"operator", "auditor"} and readme["lobby.SignIn"] == set(COLUMNS)
    assert readme["lobby.ListZones"] == set(COLUMNS) - {"none", "expired", "bad_key"}


# -- the servers -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def who(settings: Settings) -> tuple[str, dict[str, tuple[tuple[str, str], ...]]]:
    """The ``player`` column's id and each column's metadata."""
    me = f"rm-{uuid.uuid4().hex[:8]}"
    stranger = auth.Signer.generate()
    creds = {
        "none": (),
        "expired": bearer(SIGNER.sign(me, ttl_s=-5)),
        "bad_key": bearer(stranger.sign(me, ("operator",))),
        "player": bearer(token(settings, me)),
        "other": bearer(token(settings, f"{me}-other")),
        "operator": bearer(token(settings, f"{me}-ops", "operator")),
        "auditor": bearer(token(settings, f"{me}-aud", "auditor")),
        **{c: bearer(credential(c[2:])) for c in COLUMNS if c.startswith("s:")},
    }
    return me, creds


def request_of(rpc: Rpc, me: str) -> Message:
    if rpc.service == "reflection":
        return reflection_pb2.ServerReflectionRequest(list_services="")
    if rpc.service == "health":
        return health_pb2.HealthCheckRequest()
    fields = rpc.method.input_type.fields_by_name
    return rpc.request(**({"player_id": me} if "player_id" in fields else {}))


def verdict(word: str, a: Answer) -> str | None:
    """Why ``a`` is not what ``word`` expects (None: it is)."""
    expected = CELLS[word]
    if expected is None:
        return None if past_auth(a) else f"refused {a.code.name}/{a.reason}"
    if (a.code, a.reason) != expected:
        return f"got {a.code.name}/{a.reason} ({a.details[:80]!r})"
    return None


@pytest.mark.parametrize("rpc_id", sorted(ROWS))
async def test_each_rpc_answers_each_credential_as_its_row_says(
        rpc_id: str, channels: dict[str, grpc.aio.Channel],
        who: tuple[str, dict[str, tuple[tuple[str, str], ...]]]) -> None:
    me, creds = who
    rpc = RPCS[rpc_id]
    servers = list(channels) if rpc.service in ("health", "reflection") else [rpc.service]
    wrong = {}
    for server in servers:
        for column, word in ROWS[rpc_id].items():
            answer = await call(channels[server], rpc, request_of(rpc, me), creds[column])
            assert "Traceback" not in answer.details
            why = verdict(word, answer)
            if why:
                wrong[f"{server}/{column}"] = f"expected {word}: {why}"
    assert wrong == {}
