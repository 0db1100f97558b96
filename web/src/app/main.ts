// Chiếu's reference front-end: sign in, pick a room, see its tables live, sit or watch, play
// Ô ăn quan and Phỏm with one's own view, the clock, the payments at the end and the coins.
// Plain TypeScript on the typed client (src/client), bundled by esbuild; every call goes to the
// page's own origin, the gateway (Envoy, gRPC-Web).
import type { TableSummary } from "../../gen/chieu/lobby/v1/lobby_service_pb.js";
import { Currency } from "../../gen/chieu/table/v1/log_pb.js";
import { TableStatus, type TableView } from "../../gen/chieu/table/v1/table_service_pb.js";
import { commandId, GAMES as REGISTERED, gameView, Portal, reason, type RoomEntry } from "../client/index.js";
import { gameMessages, loadBoards, type BoardContext } from "./board.js";
import { lang, tIn, word, t as tPage } from "./i18n/index.js";
import type { Message } from "@bufbuild/protobuf";
import { h, mount } from "./dom.js";

/** The games' names by key, from the generated registry (every game, in its listed order). */
const GAMES: Record<string, string> = Object.fromEntries(REGISTERED.map((g) => [g.key, g.titles.vi]));
const FIRST = REGISTERED[0]!.key;
const boards = await loadBoards();
const portal = new Portal(location.origin);
const root = document.getElementById("app")!;
const bar = document.getElementById("bar")!;

/** What tests and benchmarks read: when each table version was on screen (epoch ms, sub-ms). */
const probe = { renders: new Map<string, number>(), portal, screen: "signin", notes: [] as string[], errors: [] as string[] };
(window as unknown as { __chieu: typeof probe }).__chieu = probe;
const now = () => performance.timeOrigin + performance.now();

let leave: AbortController | undefined; // the current screen's streams
let coins: bigint | undefined;

function screen(name: string): AbortSignal {
  leave?.abort();
  leave = new AbortController();
  probe.screen = name;
  document.body.dataset.screen = name;
  return leave.signal;
}

function toast(msg: string, error = true): void {
  (error ? probe.errors : probe.notes).push(msg);
  const el = h("div", { class: "toast" }, msg);
  document.body.appendChild(el);
  setTimeout(() => el.remove(), 4000);
}

async function refreshBar(): Promise<void> {
  if (!portal.session) return mount(bar, "Chiếu");
  try {
    coins = (await portal.home()).coins;
  } catch { /* shown as unknown */ }
  const p = portal.session.player!;
  mount(bar, h("b", {}, "Chiếu"), " · ", h("span", { id: "me" }, p.name || p.playerId), " · ",
    h("span", { id: "coins", "data-coins": coins === undefined ? "" : String(coins) }, coins === undefined ? "? 金币" : `${coins} 金币`),
    " ", h("button", { onclick: () => void lobby(FIRST) }, "Rooms"));
}

// ---------------------------------------------------------------- sign in

function signIn(): void {
  screen("signin");
  const name = h("input", { id: "name", placeholder: "your name", maxlength: 32 });
  const go = async () => {
    let device = localStorage.getItem("chieu.device");
    if (!device) localStorage.setItem("chieu.device", (device = commandId("web")));
    try {
      const s = await portal.signInGuest(device, name.value.trim());
      if (s.welcomeCoins > 0n) toast(`welcome: ${s.welcomeCoins} 金币`, false);
      await refreshBar();
      await lobby(FIRST);
    } catch (e) { toast(`sign-in failed: ${reason(e)}`); }
  };
  mount(root, h("section", { class: "signin" }, h("h1", {}, "Chiếu"), h("p", {}, "Play as a guest on this device."),
    name, h("button", { id: "signin", onclick: go }, "Sign in")));
}

// ---------------------------------------------------------------- rooms

async function lobby(game: string): Promise<void> {
  screen("rooms");
  let rooms: RoomEntry[] = [];
  try { rooms = await portal.rooms(game); } catch (e) { toast(`rooms: ${reason(e)}`); }
  mount(root, h("nav", {}, Object.entries(GAMES).map(([k, v]) =>
    h("button", { class: k === game ? "tab on" : "tab", "data-game": k, onclick: () => void lobby(k) }, v))),
  h("table", { class: "rooms" }, h("tr", {}, h("th", {}, "room"), h("th", {}, "stake"), h("th", {}, "tables"), h("th", {}, "")),
    rooms.map((r) => h("tr", { "data-room": r.room!.roomId },
      h("td", {}, r.room!.name), h("td", {}, money(r.room!.stake, r.room!.currency)), h("td", {}, String(r.tables)),
      h("td", {}, r.gate!.allowed ? h("button", { class: "enter", onclick: () => void room(r) }, "Enter")
        : h("span", { class: "gate" }, r.gate!.reason))))));
}

function money(n: bigint, c: Currency): string {
  return c === Currency.COINS ? `${n} 金币` : `${n} pt`;
}

async function room(entry: RoomEntry): Promise<void> {
  const signal = screen("room");
  const r = entry.room!;
  const tables = new Map<string, TableSummary>();
  const list = h("tbody");
  const draw = () => mount(list, [...tables.values()].map((t) => h("tr", { "data-table": t.tableId },
    h("td", {}, t.tableId.slice(0, 8)), h("td", {}, t.seats.map((p) => p || "·").join(" | ")),
    h("td", {}, t.status === TableStatus.PLAYING ? `playing hand ${t.handNo}` : "waiting"),
    h("td", {}, t.seatsFree > 0n && !t.seats.includes(portal.playerId)
      ? h("button", { class: "sit", onclick: () => void sit(t.tableId) }, "Sit") : null,
    h("button", { class: "watch", onclick: () => void table(t.tableId) }, t.seats.includes(portal.playerId) ? "Open" : "Watch")))));
  mount(root, h("h2", {}, `${GAMES[r.game] ?? r.game} — ${r.name}`),
    h("p", {}, h("button", { id: "quick-seat", onclick: () => void quick(r.roomId) }, "Quick seat"), " ",
      h("button", { id: "new-table", onclick: () => void newTable(entry) }, "New table"), " ",
      h("button", { onclick: () => void lobby(r.game) }, "Back")),
    h("table", { class: "tables" }, h("thead", {}, h("tr", {}, h("th", {}, "table"), h("th", {}, "seats"), h("th", {}, "status"), h("th", {}, ""))), list));
  try {
    for await (const m of portal.watchRoom(r.roomId, signal)) {
      if (m.kind.case === "snapshot") for (const t of m.kind.value.tables) tables.set(t.tableId, t);
      else if (m.kind.case === "changed") tables.set(m.kind.value.tableId, m.kind.value);
      else if (m.kind.case === "removed") tables.delete(m.kind.value.tableId);
      draw();
    }
  } catch (e) { if (!signal.aborted) toast(`room: ${reason(e)}`); }
}

async function quick(roomId: string): Promise<void> {
  try { await table((await portal.quickSeat(roomId)).tableId); } catch (e) { toast(`quick seat: ${reason(e)}`); }
}

/** A table of one's own in the room (its game, stake, currency, options and minimum reputation). */
async function newTable(entry: RoomEntry): Promise<void> {
  const r = entry.room!;
  try {
    const t = await portal.createTable({ game: r.game, stake: r.stake, currency: r.currency, options: r.options,
      minReputation: r.minReputation, ladderLevel: r.ladderMinLevel });
    await table(t.tableId);
  } catch (e) { toast(`new table: ${reason(e)}`); }
}

async function sit(tableId: string): Promise<void> {
  try { await portal.takeSeat(tableId); await table(tableId); } catch (e) { toast(`sit: ${reason(e)}`); }
}

// ---------------------------------------------------------------- a table

async function table(tableId: string): Promise<void> {
  const signal = screen("table");
  let last: TableView | undefined;
  let lastHandShown = -1n;
  const view = h("div", { id: "table" });
  const clock = h("span", { id: "clock" });
  mount(root, h("p", {}, h("button", { onclick: () => void lobby(last?.game ?? FIRST) }, "Leave to the rooms"), " ", clock), view);
  const tick = setInterval(() => { if (last) drawClock(last, clock); }, 250);
  signal.addEventListener("abort", () => clearInterval(tick));

  const send = (command: Message) => {
    const schema = gameMessages.getMessage(command.$typeName);
    if (!schema) return toast(`unknown command ${command.$typeName}`);
    portal.act(tableId, schema, command).catch((e) => toast(word("refusal", reason(e))));
  };
  const draw = (t: TableView) => {
    last = t;
    mount(view, tableBody(t, send, () => draw(t)));
    drawClock(t, clock);
    probe.renders.set(`${t.tableId}@${t.version}`, now());
    if (t.lastOutcome && t.handNo !== lastHandShown && t.status === TableStatus.WAITING) {
      lastHandShown = t.handNo;
      void coinsAfterHand();
    }
  };
  try {
    for await (const t of portal.watch(tableId, { signal, onDrop: () => toast("connection lost: reconnecting…") })) draw(t);
  } catch (e) { if (!signal.aborted) toast(`table: ${reason(e)}`); }
}

/** The ledger posts a hand's settlement from the log a moment after it ends: ask until it shows. */
async function coinsAfterHand(): Promise<void> {
  const before = coins;
  for (let i = 0; i < 20; i++) {
    await refreshBar();
    if (coins !== before) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function drawClock(t: TableView, el: HTMLElement): void {
  const g = gameView(t);
  const deadline = g.view ? Number(g.view.deadlineMs) : 0;
  const toMove = g.view ? Number(g.view.toMove) : -1;
  if (t.status !== TableStatus.PLAYING || !deadline || toMove < 0) return void (el.textContent = "");
  const left = Math.max(0, Math.ceil((deadline - Date.now()) / 1000));
  el.textContent = `⏱ ${left}s for ${who(t, toMove)}`;
  el.className = left <= 5 ? "urgent" : "";
}

function who(t: TableView, handSeat: number): string {
  const p = t.handPlayers[handSeat] ?? `seat ${handSeat}`;
  return p === portal.playerId ? "you" : p;
}

function tableBody(t: TableView, send: (c: Message) => void, rerender: () => void): HTMLElement {
  const g = gameView(t);
  const seated = t.yourSeat !== undefined;
  const isHost = t.host === portal.playerId;
  const canStart = isHost && t.status === TableStatus.WAITING && t.seats.length >= 2;
  const mySeat = t.handSeat === undefined ? undefined : Number(t.handSeat);
  return h("div", { class: "table", "data-version": String(t.version), "data-status": TableStatus[t.status],
    "data-hand": String(t.handNo), "data-to-move": g.view ? String(g.view.toMove) : "", "data-my-seat": mySeat ?? "" },
  h("h2", {}, `${GAMES[t.game] ?? t.game} · table ${t.tableId.slice(0, 8)} · ${money(t.stake, t.currency)} a stake`),
  h("p", { class: "seats" }, t.seats.map((s) => h("span", { class: `seat${s.playerId === portal.playerId ? " me" : ""}` },
    `${s.seat}: ${s.playerId === portal.playerId ? "you" : s.playerId}${t.autoPlayed.includes(s.playerId) ? " (auto)" : ""}`)),
  seated ? "" : " · spectating"),
  h("p", {}, t.status === TableStatus.PLAYING ? `hand ${t.handNo} in play` : "waiting", " · version ", String(t.version),
    canStart ? h("button", { id: "start", onclick: () => void portal.startHand(t.tableId).catch((e) => toast(reason(e))) }, "Start hand") : null,
    !seated && t.seats.length < Number(t.maxSeats) ? h("button", { onclick: () => void portal.takeSeat(t.tableId).catch((e) => toast(reason(e))) }, "Sit") : null),
  g.view ? (boards.get(g.game)?.board(g.view, context(t, mySeat, send, rerender)) ?? h("p", { class: "no-board" }, "This page has no board for this game yet.")) : null,
  t.lastOutcome && t.status === TableStatus.WAITING ? outcome(t) : null);
}

const uiState = new Map<string, unknown>();

function context(t: TableView, mySeat: number | undefined, send: (c: Message) => void, rerender: () => void): BoardContext {
  const words = boards.get(t.game)?.words;
  const secondsLeft = (d: bigint | number) => (Number(d) ? Math.max(0, Math.ceil((Number(d) - Date.now()) / 1000)) : undefined);
  return {
    mySeat, seats: t.handPlayers.length, send, rerender, lang: lang(),
    t: (key, vars) => tIn(words, key, vars),
    word: (kind, code) => word(kind, code),
    name: (s) => (s === mySeat ? tPage("you") : (t as { handSeats?: { name: string }[] }).handSeats?.[s]?.name || t.handPlayers[s]?.slice(0, 8) || tPage("seat", { n: s + 1 })),
    autoPlayed: (s) => t.autoPlayed.includes(t.handPlayers[s] ?? "\0"),
    secondsLeft,
    clock: (d) => { const s = secondsLeft(d); return s === undefined ? "" : tPage("table.secs", { s }); },
    state: <T>(key: string, init: () => T): T => {
      const k = `${t.tableId}:${key}`;
      if (!uiState.has(k)) uiState.set(k, init());
      return uiState.get(k) as T;
    },
  };
}

function outcome(t: TableView): HTMLElement {
  const o = t.lastOutcome!;
  const name = (seat: bigint | undefined) => (seat === undefined ? "the gà pot" : who(t, Number(seat)));
  return h("div", { class: "outcome", id: "outcome" }, h("h3", {}, `hand ${t.handNo}: ${o.winner === undefined ? "no winner" : `${name(o.winner)} won`} (${o.reason})`),
    h("p", {}, "scores: ", o.scores.map((s, i) => `${who(t, i)} ${s}`).join(", ")),
    h("table", { class: "payments" }, h("tr", {}, h("th", {}, "from"), h("th", {}, "to"), h("th", {}, "amount"), h("th", {}, "why")),
      o.transfers.map((x) => h("tr", { class: "payment" }, h("td", {}, name(x.fromSeat)), h("td", {}, name(x.toSeat)),
        h("td", {}, money(x.amount * (t.stake || 1n), t.currency)), h("td", {}, x.reason)))));
}

signIn();
