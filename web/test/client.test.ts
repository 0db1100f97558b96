// The typed client against a running stack through the gateway (Envoy, gRPC-Web):
// CHIEU_WEB_URL names it (tests/web starts one and runs these with node's test runner).
import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { Direction, SowSchema, type Sow, type View as OAnQuanView } from "../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";
import { TableStatus, type TableView } from "../gen/chieu/table/v1/table_service_pb.js";
import { commandId, gameView, Portal, reason } from "../src/client/index.js";

const URL = process.env.CHIEU_WEB_URL ?? "http://127.0.0.1:8080";
const ROOM = "o_an_quan.points";
const uid = () => Math.random().toString(36).slice(2, 10);

async function guest(name: string, fetchImpl?: typeof fetch): Promise<Portal> {
  const p = fetchImpl
    ? new Portal(URL, (interceptors) => createGrpcWebTransport({ baseUrl: URL, interceptors, fetch: fetchImpl }))
    : new Portal(URL);
  await p.signInGuest(`node-test-${name}-${uid()}`, name);
  return p;
}

function oaq(t: TableView): OAnQuanView {
  const g = gameView(t);
  assert.equal(g.game, "o_an_quan");
  return g.view as OAnQuanView;
}

/** The first sowing a seat's own view offers (a view lists them only to the seat to move). */
function firstSow(v: OAnQuanView): Sow {
  const c = v.legal[0]?.command;
  if (c?.case !== "sow") throw new Error("the view offers no sowing");
  return c.value;
}

/** Two guests seated at one new Ô ăn quan table of the points room, a hand started. */
async function twoAtATable(): Promise<{ a: Portal; b: Portal; tableId: string; started: TableView }> {
  const a = await guest("An");
  const b = await guest("Binh");
  // a table of our own (quick seat could join another test's table)
  const created = await a.table.createTable({ game: "o_an_quan", commandId: commandId("create") });
  const tableId = created.table!.tableId;
  await b.takeSeat(tableId);
  const started = await a.startHand(tableId);
  assert.equal(started.status, TableStatus.PLAYING);
  return { a, b, tableId, started };
}

test("sign in as guests, list rooms with their gates, quick seat two players at one table", async () => {
  const a = await guest("Lan");
  assert.ok(a.playerId.startsWith("g-"));
  assert.ok(a.session!.accessToken.length > 20);
  const rooms = await a.rooms("o_an_quan");
  const points = rooms.find((r) => r.room!.roomId === ROOM);
  assert.ok(points, "the points room is listed");
  assert.equal(points!.gate!.allowed, true);
  const zones = await a.zones();
  assert.ok(zones.some((z) => z.game === "phom"));
  const seat = await a.quickSeat(ROOM);
  assert.ok(seat.tableId);
  const home = await a.home();
  assert.ok(home.seated.some((t) => t.tableId === seat.tableId), "home lists the seat");
});

test("WatchRoom: a snapshot, then the table a quick seat creates appears", async () => {
  const a = await guest("Mai");
  const ctl = new AbortController();
  const seen: string[] = [];
  let snapshotDone!: () => void;
  const ready = new Promise<void>((r) => (snapshotDone = r));
  const watching = (async () => {
    try {
      for await (const m of a.watchRoom("o_an_quan.coins.1", ctl.signal)) {
        if (m.kind.case === "snapshot" && m.kind.value.complete) snapshotDone();
        if (m.kind.case === "changed") seen.push(m.kind.value.tableId);
      }
    } catch {
      /* aborted */
    }
  })();
  await ready;
  const seat = await a.quickSeat("o_an_quan.coins.1");
  const until = Date.now() + 5000;
  while (!seen.includes(seat.tableId) && Date.now() < until) await new Promise((r) => setTimeout(r, 20));
  ctl.abort();
  await watching;
  assert.ok(seen.includes(seat.tableId), "the new table reached the room's stream");
});

test("act: a command id acts once, a refusal has its reason, both players' views follow", async () => {
  const { a, b, tableId, started } = await twoAtATable();
  const view = oaq(started);
  const mover = started.handPlayers[Number(view.toMove)] === a.playerId ? a : b;
  const other = mover === a ? b : a;
  const move = firstSow(oaq(await mover.getTable(tableId)));
  const ctl = new AbortController();
  const watched: bigint[] = [];
  const watching = (async () => {
    for await (const t of other.watch(tableId, { signal: ctl.signal })) watched.push(t.version);
  })();
  try {
  const id = commandId("m");
  const sow = create(SowSchema, { square: move.square, direction: move.direction });
  const first = await mover.act(tableId, SowSchema, sow, { commandId: id });
  const again = await mover.act(tableId, SowSchema, sow, { commandId: id });
  assert.equal(again.version, first.version, "the same command id acted once");
  // the mover again, out of turn now, on a full square of their own side
  const moverSeat = first.handPlayers.indexOf(mover.playerId);
  const board = oaq(first).board;
  const own = (moverSeat === 0 ? [1, 2, 3, 4, 5] : [7, 8, 9, 10, 11]).find((sq) => board[sq]! > 0n)!;
  await assert.rejects(mover.act(tableId, SowSchema, create(SowSchema, { square: BigInt(own), direction: Direction.CW })),
    (err) => reason(err) === "not_your_turn");
  const until = Date.now() + 5000;
  while (!watched.includes(first.version) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
  assert.ok(watched.includes(first.version), "the other player's Watch got the move");
  } finally {
    ctl.abort();
    await watching;
  }
});

test("Watch resumes from its version after the connection drops", async () => {
  // a fetch whose responses can be cut, as a network drop would
  const live = new Set<AbortController>();
  const cuttable: typeof fetch = (input, init) => {
    const c = new AbortController();
    live.add(c);
    init?.signal?.addEventListener("abort", () => c.abort(), { once: true });
    return fetch(input, { ...init, signal: c.signal });
  };
  const { a, b, tableId, started } = await twoAtATable();
  const watcher = await guest("Spectator", cuttable);
  const ctl = new AbortController();
  const versions: bigint[] = [];
  let drops = 0;
  const watching = (async () => {
    for await (const t of watcher.watch(tableId, { signal: ctl.signal, onDrop: () => drops++ })) versions.push(t.version);
  })();
  const waitFor = async (v: bigint) => {
    const until = Date.now() + 5000;
    while (!versions.includes(v) && Date.now() < until) await new Promise((r) => setTimeout(r, 10));
    assert.ok(versions.includes(v), `saw version ${v}`);
  };
  try {
  await waitFor(started.version);
  let t = started;
  for (let i = 0; i < 3; i++) {
    if (i === 1) for (const c of live) c.abort(); // the drop, between two moves
    const v = oaq(t);
    const mover = t.handPlayers[Number(v.toMove)] === a.playerId ? a : b;
    t = await mover.act(tableId, SowSchema, firstSow(oaq(await mover.getTable(tableId))));
    await waitFor(t.version);
  }
  } finally {
    ctl.abort();
    await watching;
  }
  assert.ok(drops >= 1, "the stream was dropped");
  const sorted = [...versions].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
  assert.deepEqual(versions, sorted, "in order");
  assert.equal(new Set(versions).size, versions.length, "no view twice");
});


test("the commit–reveal round with no click: two watching portals commit, the host starts, both reveal, the hand is dealt", async () => {
  const a = await guest("Chi");
  const b = await guest("Dung");
  const created = await a.table.createTable({ game: "o_an_quan", commandId: commandId("create") });
  const tableId = created.table!.tableId;
  await b.takeSeat(tableId);
  const ctl = new AbortController();
  const seen: TableView[] = [];
  const watching = [a, b].map((p) => (async () => {
    for await (const t of p.watch(tableId, { signal: ctl.signal })) if (p === a) seen.push(t);
  })());
  const until = async (ok: (t: TableView) => boolean) => {
    const limit = Date.now() + 10_000;
    while (!seen.some(ok) && Date.now() < limit) await new Promise((r) => setTimeout(r, 10));
    assert.ok(seen.some(ok), "the view came");
  };
  try {
    await until((t) => t.committed.length === 2);
    const asked = await a.startHand(tableId);
    assert.equal(asked.status, TableStatus.WAITING);
    assert.deepEqual([...asked.revealPlayers].sort(), [a.playerId, b.playerId].sort());
    await until((t) => t.status === TableStatus.PLAYING && t.handNo === 1n);
    // during the hand both commit for the next one
    await until((t) => t.status === TableStatus.PLAYING && t.committed.length === 2 && t.roundHandNo === 2n);
  } finally {
    ctl.abort();
    await Promise.all(watching);
  }
});
