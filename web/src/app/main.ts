// Chiếu's portal: sign in, home, rooms by game, a room's live tables, a table with its board,
// leaderboards, the paid services. Plain TypeScript on the typed client (src/client), bundled by
// esbuild; every call goes to the page's own origin, the gateway (Envoy, gRPC-Web). Screens are
// routed by the URL's hash (#/home, #/rooms/<game>, #/room/<id>, #/table/<id>, #/leaders/<game>,
// #/shop), so a reload or the back button lands where the player was.
import type { Message } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { fromBinary, toBinary } from "@bufbuild/protobuf";
import { SessionSchema, type GetHomeResponse, type TableSummary } from "../../gen/chieu/lobby/v1/lobby_service_pb.js";
import { Currency } from "../../gen/chieu/table/v1/log_pb.js";
import { TableStatus, type TableView } from "../../gen/chieu/table/v1/table_service_pb.js";
import type { ListPricesResponse } from "../../gen/chieu/ledger/v1/ledger_service_pb.js";
import { BoardKind, BoardPeriod, commandId, GAMES, gameView, Portal, reason, type RoomEntry } from "../client/index.js";
import { gameMessages, loadBoards, type BoardContext } from "./board.js";
import { h, mount, type Child } from "./dom.js";
import { LANGUAGES, lang, setLang, t, tIn, word, type Key, type Language } from "./i18n/index.js";
import { button, focusedKey, initialOf, mmss, refocus } from "./ui/kit.js";
import { onSeats, presencePill, seatPresence } from "./ui/presence.js";

const boards = await loadBoards();
const portal = new Portal(location.origin);
portal.lang = lang();
const root = document.getElementById("app")!;
const bar = document.getElementById("bar")!;

/** What tests and benchmarks read: when each table version was on screen (epoch ms, sub-ms). */
const probe = { renders: new Map<string, number>(), portal, screen: "boot", notes: [] as string[], errors: [] as string[],
  ready: false, readyAt: undefined as number | undefined, drawMs: [] as number[] };
(window as unknown as { __chieu: typeof probe }).__chieu = probe;
const now = () => performance.timeOrigin + performance.now();

const title = (key: string) => GAMES.find((g) => g.key === key)?.titles[lang()] ?? key;
const FIRST = GAMES[0]!.key;

// ---------------------------------------------------------------- names

const names = new Map<string, string>();
const asking = new Set<string>();
let onNames: (() => void) | undefined;

/** Players the lobby knows no name of (GetProfiles' `unknown`: on the ledger's boards, not signed in). */
const unnamed = new Set<string>();

/** A player's display name (asked from the lobby once, shown as a short id meanwhile; one the
 * lobby has no name for as a neutral "a player", never by its id). */
function nameOf(playerId: string): string {
  if (!playerId) return "";
  if (playerId === portal.playerId) return t("you");
  const n = names.get(playerId);
  if (n) return n;
  if (unnamed.has(playerId)) return t("player.unnamed");
  if (!asking.has(playerId)) {
    asking.add(playerId);
    queueMicrotask(flushNames);
  }
  return t("player", { id: playerId.replace(/^[a-z]-/, "").slice(0, 6) });
}

let flushing = false;
function flushNames(): void {
  if (flushing || !portal.session) return;
  const ids = [...asking].filter((id) => !names.has(id)).slice(0, 200);
  if (!ids.length) return;
  flushing = true;
  portal.profiles(ids).then((ps) => {
    for (const p of ps) if (p.name) names.set(p.playerId, p.name);
    for (const id of ids) if (!names.has(id)) unnamed.add(id);
    onNames?.();
  }).catch(() => undefined).finally(() => {
    for (const id of ids) asking.delete(id);
    flushing = false;
  });
}

function learn(playerId: string, name: string | undefined): void {
  if (playerId && name) names.set(playerId, name);
}

// ---------------------------------------------------------------- frame

let leave: AbortController | undefined; // the current screen's streams
let redraw: () => void = () => undefined; // the current screen drawn again (a language change)
let coins: bigint | undefined;

function screen(name: string): AbortSignal {
  leave?.abort();
  leave = new AbortController();
  probe.screen = name;
  onNames = undefined;
  document.body.dataset.screen = name;
  // a note of the screens before (the welcome) does not follow the player to a table, where it lay
  // over the table's title on a phone
  if (name === "table") for (const n of document.querySelectorAll("#toasts .toast:not(.error)")) n.remove();
  return leave.signal;
}

function toast(msg: string, error = true): void {
  (error ? probe.errors : probe.notes).push(msg);
  const el = h("div", { class: `toast${error ? " error" : ""}`, role: error ? "alert" : "status" }, msg);
  document.getElementById("toasts")!.replaceChildren(el);  // the latest replaces the one before: toasts never pile up
  setTimeout(() => el.remove(), 4000);
}

/** A refusal or failure in words (the contract's catalog; never the code). A session the
 * services no longer accept (expired, signed out elsewhere) sends the player to sign in again. */
function failure(e: unknown): string {
  if (ConnectError.from(e).code === Code.Unauthenticated && portal.session) {
    portal.session = undefined;
    keepSession();
    queueMicrotask(() => { location.hash = "#/"; signIn(); });
  }
  return word("refusal", reason(e));
}

function money(n: bigint, c: Currency): string {
  return c === Currency.COINS ? t("money.coins", { n }) : t("money.points", { n });
}

function langSwitch(): HTMLElement {
  const names: Record<Language, string> = { vi: "Tiếng Việt", zh: "中文", en: "English" };
  const short: Record<Language, string> = { vi: "VI", zh: "中", en: "EN" };
  return h("div", { class: "langs", role: "group", "aria-label": t("lang.label") }, LANGUAGES.map((l) =>
    h("button", { type: "button", class: `lang${l === lang() ? " on" : ""}`, lang: l, "data-lang": l, title: names[l],
      "aria-label": `${short[l]} ${names[l]}`, "aria-pressed": l === lang() ? "true" : "false",
      onclick: () => { setLang(l); portal.lang = l; if (l === "zh") uiSheet(); drawBar(); redraw(); } }, short[l])));
}

let uiSheetAdded = false;
/** "Chieu Han UI" (fonts-zh-ui.css: one cut of Noto Sans SC to the client's own hanzi), for a
 * Chinese page's words on its first screen. */
function uiSheet(): void {
  if (uiSheetAdded) return;
  uiSheetAdded = true;
  document.head.append(h("link", { rel: "stylesheet", href: "fonts-zh-ui.css" }));
}

let hanSheetAdded = false;
/** Noto Sans SC's pieces (fonts-zh.css: ~100 @font-face rules, 31 kB gzipped) for any hanzi the
 * small "Chieu Han" font (fonts-vi.css: what the boards draw) lacks: a Chinese page's words, a
 * player's name: every page adds the sheet after its first screen (a Chinese page's own words are
 * in "Chieu Han UI"). */
function hanSheet(): void {
  if (hanSheetAdded) return;
  hanSheetAdded = true;
  document.head.append(h("link", { rel: "stylesheet", href: "fonts-zh.css" }));
}

function drawBar(): void {
  const signedIn = portal.session !== undefined;
  const nav = (label: Key, hash: string, key: string) =>
    h("a", { class: `nav${probe.screen === key ? " on" : ""}`, href: hash, "data-nav": key }, t(label));
  mount(bar, h("a", { class: "brand", href: signedIn ? "#/home" : "#/" }, h("span", { class: "logo", "aria-hidden": "true", "data-native": "" }, "棋"), t("app.name")),
    signedIn ? h("nav", { class: "main-nav", "aria-label": t("app.name") },
      nav("nav.home", "#/home", "home"), nav("nav.rooms", `#/rooms/${FIRST}`, "rooms"),
      nav("nav.leaders", `#/leaders/${FIRST}`, "leaders"), nav("nav.shop", "#/shop", "shop")) : null,
    h("span", { class: "spacer" }),
    signedIn ? h("span", { id: "coins", class: "pill", "data-coins": coins === undefined ? "" : String(coins) },
      t("money.coins", { n: coins === undefined ? "…" : coins })) : null,
    langSwitch());
}

async function refreshCoins(): Promise<GetHomeResponse | undefined> {
  if (!portal.session) return undefined;
  try {
    const home = await portal.home();
    if (!home.unavailable.includes("ledger")) coins = home.coins;
    drawBar();
    return home;
  } catch { return undefined; }
}

// ---------------------------------------------------------------- session

const SESSION = "chieu.session";

function keepSession(): void {
  if (portal.session) sessionStorage.setItem(SESSION, btoa(String.fromCharCode(...toBinary(SessionSchema, portal.session))));
  else sessionStorage.removeItem(SESSION);
}

function restoreSession(): void {
  const kept = sessionStorage.getItem(SESSION);
  if (!kept) return;
  try {
    const s = fromBinary(SessionSchema, Uint8Array.from(atob(kept), (c) => c.charCodeAt(0)));
    if (Number(s.refreshExpiresMs) > Date.now()) portal.resume(s);
  } catch { sessionStorage.removeItem(SESSION); }
}

function device(): string {
  let d = localStorage.getItem("chieu.device");
  if (!d) localStorage.setItem("chieu.device", (d = commandId("web")));
  return d;
}

// ---------------------------------------------------------------- sign in

function signIn(): void {
  screen("signin");
  redraw = signIn;
  drawBar();
  const name = h("input", { id: "name", name: "name", autocomplete: "nickname", maxlength: 40, placeholder: t("signin.name") });
  const user = h("input", { id: "username", name: "username", autocomplete: "username", maxlength: 32 });
  const pass = h("input", { id: "password", name: "password", type: "password", autocomplete: "current-password", maxlength: 128 });
  const after = async (welcome: bigint) => {
    keepSession();
    if (welcome > 0n) toast(t("signin.welcome", { coins: welcome }), false);
    await refreshCoins();
    location.hash = "#/home";
  };
  const guest = async () => {
    try { await after((await portal.signInGuest(device(), name.value.trim())).welcomeCoins); } catch (e) { toast(failure(e)); }
  };
  const account = async (register: boolean) => {
    try {
      const s = register ? await portal.register(user.value.trim(), pass.value, device(), name.value.trim())
        : await portal.signIn(user.value.trim(), pass.value, device());
      await after(s.welcomeCoins);
    } catch (e) { toast(failure(e)); }
  };
  const field = (label: Key, input: HTMLInputElement) => h("label", { class: "field" }, h("span", {}, t(label)), input);
  mount(root, h("section", { class: "signin" },
    h("div", { class: "hero" }, h("h1", {}, t("app.name")), h("p", {}, t("app.tagline")),
      h("div", { class: "game-strip", "aria-hidden": "true" }, GAMES.map((g) => h("span", {}, g.titles[lang()])))),
    h("form", { class: "panel", onsubmit: (e: Event) => { e.preventDefault(); void guest(); } },
      h("h2", {}, t("signin.guest")), h("p", { class: "muted" }, t("signin.guestHint")),
      field("signin.name", name), button(t("signin.guest"), () => void guest(), { kind: "primary", attrs: { id: "signin" } })),
    h("form", { class: "panel", onsubmit: (e: Event) => { e.preventDefault(); void account(false); } },
      h("h2", {}, t("signin.account")), field("signin.username", user), field("signin.password", pass),
      h("div", { class: "row-buttons" }, button(t("signin.submit"), () => void account(false), { kind: "primary" }),
        button(t("signin.register"), () => void account(true), { kind: "quiet" })))));
  if (!probe.ready) requestAnimationFrame(() => { probe.ready = true; probe.readyAt = performance.now(); });
}

// ---------------------------------------------------------------- home

async function home(): Promise<void> {
  screen("home");
  redraw = () => void home();
  drawBar();
  const hm = await refreshCoins();
  if (probe.screen !== "home") return;
  const p = portal.session!.player!;
  const unknown = (part: string) => hm === undefined || hm.unavailable.includes(part);
  const stat = (label: Key, value: Child, id: string) => h("div", { class: "stat", id }, h("span", { class: "label" }, t(label)), h("b", {}, value));
  const level = (game: string) => hm?.levels.find((l) => l.game === game);
  const ranked = (game: string) => hm?.ranks.find((r) => r.game === game);
  if (hm) for (const s of hm.seated) s.seatProfiles.forEach((pr, i) => learn(s.seats[i] ?? "", pr.name));
  mount(root, h("section", { class: "home" },
    h("h1", {}, t("home.title", { name: p.name || nameOf(p.playerId) })),
    h("div", { class: "stats" },
      stat("home.coins", unknown("ledger") ? "—" : String(hm!.coins), "home-coins"),
      stat("home.hearts", unknown("ledger") ? "—" : String(hm!.hearts), "home-hearts"),
      stat("home.reputation", unknown("ladder") ? "—" : String(hm!.reputation), "home-reputation"),
      stat("shop.member", hm && hm.membershipDays > 0n ? (hm.membershipDays === 1n ? t("shop.oneDay") : t("shop.days", { n: hm.membershipDays })) : t("home.notMember"), "home-member")),
    hm?.seated.length ? h("div", { class: "panel" }, h("h2", {}, t("home.seated")), h("ul", { class: "plain" }, hm.seated.map((s) =>
      h("li", {}, h("b", {}, title(s.game)), " · ", money(s.stake, s.currency), " · ",
        s.status === TableStatus.PLAYING ? t("room.playing") : t("room.waiting"), " ",
        button(t("home.open"), () => { location.hash = `#/table/${s.tableId}`; }, { kind: "primary" }))))) : null,
    h("h2", {}, t("home.games")),
    h("div", { class: "games" }, GAMES.map((g) => {
      const l = level(g.key);
      const r = ranked(g.key);
      return h("div", { class: "game-card", "data-game": g.key },
        boards.get(g.key)?.picture?.() ?? null,
        h("h3", {}, g.titles[lang()]),
        h("dl", {}, h("dt", {}, t("home.points")), h("dd", { class: "home-points" }, r ? `${r.points} · ${r.rank > 0n ? `#${r.rank}` : t("leaders.beyond")}` : "0"),
          h("dt", {}, t("home.level")), h("dd", {}, String(l?.level ?? 1n)),
          h("dt", {}, t("home.best")), h("dd", {}, String(l?.best ?? 1n)),
          h("dt", {}, t("home.lp")), h("dd", {}, String(l?.lp ?? 0n))),
        boards.has(g.key) ? button(t("home.play"), () => { location.hash = `#/rooms/${g.key}`; }, { kind: "primary" })
          : h("p", { class: "muted small" }, t("table.noBoard")));
    }))));
}

// ---------------------------------------------------------------- rooms

function gameTabs(current: string, base: string): HTMLElement {
  return h("nav", { class: "tabs", "aria-label": t("nav.rooms") }, GAMES.map((g) =>
    h("a", { class: `tab${g.key === current ? " on" : ""}`, href: `#/${base}/${g.key}`, "data-game": g.key,
      "aria-current": g.key === current ? "page" : undefined }, g.titles[lang()])));
}

function roomLabel(r: RoomEntry["room"] & object): string {
  if (r.ladderMinLevel > 0n) return `${t("rooms.ladder")} · ${t("rooms.levels", { from: r.ladderMinLevel, to: r.ladderMaxLevel })}`;
  return r.currency === Currency.COINS ? `${t("rooms.coins")} ×${r.stake}` : t("rooms.points");
}

async function rooms(game: string): Promise<void> {
  screen("rooms");
  redraw = () => void rooms(game);
  drawBar();
  let list: RoomEntry[] = [];
  try { list = await portal.rooms(game); } catch (e) { toast(failure(e)); }
  if (probe.screen !== "rooms") return;
  const group = (label: Key, pick: (r: RoomEntry) => boolean) => {
    const rs = list.filter(pick);
    return rs.length ? h("div", { class: "room-group" }, h("h2", {}, t(label)), h("div", { class: "room-cards" }, rs.map((r) => {
      const room = r.room!;
      const gate = r.gate!;
      return h("div", { class: `room-card${gate.allowed ? "" : " locked"}`, "data-room": room.roomId },
        h("h3", {}, roomLabel(room)),
        h("p", { class: "muted small" }, `${t("rooms.stake")}: ${money(room.stake, room.currency)}`,
          room.minReputation > 0n ? ` · ${t("rooms.minRep", { n: room.minReputation })}` : ""),
        h("p", { class: "small" }, `${t("rooms.tables")}: ${r.tables} · ${t("rooms.players")}: ${r.players}`),
        gate.allowed ? button(t("rooms.enter"), () => { location.hash = `#/room/${room.roomId}`; }, { kind: "primary", attrs: { "data-enter": room.roomId } })
          : h("p", { class: "gate" }, word("refusal", gate.reason)));
    }))) : null;
  };
  mount(root, gameTabs(game, "rooms"),
    h("section", { class: "rooms" },
      list.length ? null : h("p", { class: "muted" }, t("rooms.none")),
      group("rooms.points", (r) => r.room!.currency !== Currency.COINS && r.room!.ladderMinLevel === 0n),
      group("rooms.coins", (r) => r.room!.currency === Currency.COINS && r.room!.ladderMinLevel === 0n),
      group("rooms.ladder", (r) => r.room!.ladderMinLevel > 0n)));
}

async function room(roomId: string): Promise<void> {
  const signal = screen("room");
  drawBar();
  let entry: RoomEntry | undefined;
  const game = roomId.split(".")[0] ?? FIRST;
  try { entry = (await portal.rooms(game)).find((r) => r.room!.roomId === roomId); } catch (e) { toast(failure(e)); }
  if (signal.aborted) return;
  const r = entry?.room;
  const tables = new Map<string, TableSummary>();
  const list = h("div", { class: "table-cards", id: "tables" });
  const draw = () => mount(list, tables.size ? [...tables.values()].map((s) => {
    s.seatProfiles.forEach((pr, i) => learn(s.seats[i] ?? "", pr.name));
    const mine = s.seats.includes(portal.playerId);
    return h("div", { class: "table-card", "data-table": s.tableId },
      h("div", { class: "table-seats" }, s.seats.map((p) => h("span", { class: `chip${p ? "" : " free"}${p === portal.playerId ? " me" : ""}` },
        p ? nameOf(p) : t("room.free")))),
      h("p", { class: "small muted" }, s.status === TableStatus.PLAYING ? `${t("room.playing")} · ${t("table.hand", { n: s.handNo })}` : t("room.waiting"),
        s.spectators > 0n ? ` · ${t("room.watchers", { n: s.spectators })}` : ""),
      h("div", { class: "row-buttons" },
        s.seatsFree > 0n && !mine ? button(t("room.sit"), () => void sit(s.tableId), { kind: "primary", attrs: { "data-sit": s.tableId } }) : null,
        button(mine ? t("room.open") : t("room.watch"), () => { location.hash = `#/table/${s.tableId}`; }, { kind: mine ? "primary" : "quiet", attrs: { "data-watch": s.tableId } })));
  }) : h("p", { class: "muted" }, t("room.empty")));
  redraw = () => { drawRoom(); draw(); };
  onNames = draw;
  const drawRoom = () => mount(root, h("section", { class: "room" },
    h("p", {}, h("a", { href: `#/rooms/${game}`, class: "back" }, "← ", t("room.back"))),
    h("h1", {}, title(game), r ? ` · ${roomLabel(r)}` : ""),
    r ? h("p", { class: "muted" }, `${t("rooms.stake")}: ${money(r.stake, r.currency)}`) : null,
    h("div", { class: "row-buttons" },
      button(t("room.quick"), () => void quick(roomId), { kind: "primary", attrs: { id: "quick-seat" } }),
      entry ? button(t("room.new"), () => void newTable(entry!), { attrs: { id: "new-table" } }) : null),
    list));
  drawRoom();
  draw();
  await follow(signal, async () => {
    for await (const m of portal.watchRoom(roomId, signal)) {
      if (m.kind.case === "snapshot") { tables.clear(); for (const s of m.kind.value.tables) tables.set(s.tableId, s); }
      else if (m.kind.case === "changed") tables.set(m.kind.value.tableId, m.kind.value);
      else if (m.kind.case === "removed") tables.delete(m.kind.value.tableId);
      draw();
    }
  });
}

/** Runs a stream until the screen is left, reconnecting after a drop (a refusal ends it). */
async function follow(signal: AbortSignal, run: () => Promise<void>): Promise<void> {
  let wait = 250;
  while (!signal.aborted) {
    try { await run(); } catch (e) {
      if (signal.aborted) return;
      const r = reason(e);
      if (!["Unavailable", "Unknown", "DeadlineExceeded", "Canceled", "Internal"].includes(r)) return void toast(failure(e));
      toast(t("conn.lost"));
    }
    await new Promise((ok) => setTimeout(ok, wait));
    wait = Math.min(wait * 2, 5000);
  }
}

async function quick(roomId: string): Promise<void> {
  try { location.hash = `#/table/${(await portal.quickSeat(roomId)).tableId}`; } catch (e) { toast(failure(e)); }
}

async function newTable(entry: RoomEntry): Promise<void> {
  const r = entry.room!;
  try {
    const tv = await portal.createTable({ game: r.game, stake: r.stake, currency: r.currency, options: r.options,
      minReputation: r.minReputation, ladderLevel: r.ladderMinLevel });
    location.hash = `#/table/${tv.tableId}`;
  } catch (e) { toast(failure(e)); }
}

async function sit(tableId: string): Promise<void> {
  try { await portal.takeSeat(tableId); location.hash = `#/table/${tableId}`; } catch (e) { toast(failure(e)); }
}

// ---------------------------------------------------------------- a table

const uiState = new Map<string, unknown>();
/** Whether a game's rounds are dealt hands ("Hand 1"), as its board says; else games ("Game 1" for chess). */
const dealt = (game: string): boolean => boards.get(game)?.rounds === "hands";

async function table(tableId: string): Promise<void> {
  const signal = screen("table");
  drawBar();
  let last: TableView | undefined;
  let lastHand = -1n;
  let dropped = false;
  const view = h("div", { id: "table" });
  mount(root, view);
  const draw = (tv: TableView) => {
    const t0 = performance.now();
    last = tv;
    const key = focusedKey();
    // a board's rerender draws the latest view (one asked for later, by a timer, must not bring
    // back an older one)
    mount(view, tableBody(tv, send, () => draw(last ?? tv)));
    refocus(view, key);
    tick();
    probe.renders.set(`${tv.tableId}@${tv.version}`, now());
    if (probe.drawMs.push(performance.now() - t0) > 1000) probe.drawMs.shift();
    if (tv.lastOutcome && tv.handNo !== lastHand && tv.status === TableStatus.WAITING) {
      lastHand = tv.handNo;
      void coinsAfterHand();
    }
  };
  redraw = () => { if (last) draw(last); };
  onNames = redraw;
  // one command at a time: the board takes no click until the table answers (no double send)
  const send = (command: Message) => {
    const schema = gameMessages.getMessage(command.$typeName);
    if (!schema) return toast(t("err.generic"));
    view.classList.add("pending");
    portal.act(tableId, schema, command).catch((e) => toast(failure(e))).finally(() => view.classList.remove("pending"));
  };
  const timer = setInterval(tick, 250);
  signal.addEventListener("abort", () => clearInterval(timer));
  try {
    for await (const tv of portal.watch(tableId, { signal, onDrop: () => { dropped = true; banner(true); } })) {
      if (dropped) { dropped = false; banner(false); }
      draw(tv);
    }
  } catch (e) { if (!signal.aborted) toast(failure(e)); }
}

/** The connection banner: shown while the table's stream reconnects. */
function banner(lost: boolean): void {
  const el = document.getElementById("conn")!;
  el.hidden = !lost;
  el.textContent = lost ? t("conn.lost") : "";
  if (!lost) toast(t("conn.back"), false);
}

/** Every clock on screen (elements with data-deadline) counted down. */
function tick(): void {
  for (const el of document.querySelectorAll<HTMLElement>("[data-deadline]")) {
    const left = Math.max(0, Math.ceil((Number(el.dataset.deadline) - Date.now()) / 1000));
    el.textContent = mmss(left);
    el.classList.toggle("urgent", left <= 5);
  }
}

/** The ledger posts a hand's settlement from the log a moment after it ends: ask until it shows. */
async function coinsAfterHand(): Promise<void> {
  const before = coins;
  for (let i = 0; i < 20; i++) {
    await refreshCoins();
    if (coins !== before) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

function context(tv: TableView, mySeat: number | undefined, send: (c: Message) => void, rerender: () => void): BoardContext {
  const words = boards.get(tv.game)?.words;
  const secondsLeft = (d: bigint | number) => (Number(d) ? Math.max(0, Math.ceil((Number(d) - Date.now()) / 1000)) : undefined);
  return {
    mySeat, seats: tv.handPlayers.length, send, rerender, lang: lang(),
    t: (key, vars) => tIn(words, key, vars),
    word: (kind, code) => word(kind, code),
    name: (s) => handName(tv, s),
    initial: (s) => initialOf(tv.handPlayers[s] === portal.playerId ? portal.session?.player?.name || t("you") : handName(tv, s)),
    autoPlayed: (s) => tv.autoPlayed.includes(tv.handPlayers[s] ?? "\0"),
    secondsLeft,
    clock: (d) => { const s = secondsLeft(d); return s === undefined ? "" : mmss(s); },
    state: <T>(key: string, init: () => T): T => {
      const k = `${tv.tableId}:${key}`;
      if (!uiState.has(k)) uiState.set(k, init());
      return uiState.get(k) as T;
    },
  };
}

/** The drawn board with each hand seat's presence on its seat element (ui/presence.ts). */
function withPresence(board: HTMLElement | undefined, tv: TableView): HTMLElement | undefined {
  if (board) onSeats(board, tv.handSeats);
  return board;
}

function handName(tv: TableView, s: number): string {
  const id = tv.handPlayers[s] ?? "";
  learn(id, (tv as { handSeats?: { name: string }[] }).handSeats?.[s]?.name);
  return id ? nameOf(id) : t("seat", { n: s + 1 });
}

function tableBody(tv: TableView, send: (c: Message) => void, rerender: () => void): HTMLElement {
  for (const s of tv.seats) learn(s.playerId, (s as { name?: string }).name);
  const g = gameView(tv);
  const seated = tv.yourSeat !== undefined;
  const playing = tv.status === TableStatus.PLAYING;
  const isHost = tv.host === portal.playerId;
  const game = GAMES.find((x) => x.key === tv.game);
  // the commit–reveal round (chieu-fair-v2): every seated page has committed to its seed for the
  // next hand (milliseconds after it sits or the last hand is dealt), and no reveal is under way
  const committed = !portal.seedRound || tv.seats.every((s) => tv.committed.includes(s.playerId));
  const canStart = isHost && !playing && !tv.revealPlayers.length && committed && tv.seats.length >= (game?.minSeats ?? 2);
  const mySeat = tv.handSeat === undefined ? undefined : Number(tv.handSeat);
  // whose turn: the view's to_move, or mahjong's turn (it names it so)
  const turnOf = g.view?.toMove ?? (g.view as { turn?: bigint } | undefined)?.turn;
  const toMove = turnOf === undefined ? -1 : Number(turnOf);
  const deadline = Number(g.view?.deadlineMs ?? 0n);
  const mod = boards.get(tv.game);
  const act = (label: Key, fn: () => Promise<unknown>, id: string, kind?: "primary" | "quiet") =>
    button(t(label), () => void fn().catch((e) => toast(failure(e))), { kind, key: id, attrs: { id } });
  const status: Child = playing && toMove >= 0
    ? h("span", { class: `turn${toMove === mySeat ? " mine" : ""}`, id: "turn" },
      toMove === mySeat ? t("table.yourTurn") : t("table.turnOf", { name: handName(tv, toMove) }),
      deadline ? h("span", { class: "clock", id: "clock", "data-deadline": deadline }) : null)
    : !playing && !canStart ? h("span", { class: "turn" }, tv.seats.length < (game?.minSeats ?? 2)
      ? t("table.waitPlayers", { n: tv.seats.length, max: tv.maxSeats }) : t("table.waitHost")) : null;
  const auto = tv.autoPlayed.filter((p) => tv.handPlayers.includes(p));
  return h("div", { class: "table", "data-version": String(tv.version), "data-status": playing ? "playing" : "waiting",
    "data-game": tv.game, "data-hand": String(tv.handNo), "data-to-move": g.view ? String(toMove) : "", "data-my-seat": mySeat ?? "" },
  h("div", { class: "table-top" }, h("div", { class: "table-head" },
    h("a", { href: `#/rooms/${tv.game}`, class: "back", id: "leave" }, "← ", t("table.leave")),
    h("h1", {}, game?.titles[lang()] ?? tv.game),
    h("span", { class: "pill" }, t("table.stakeLine", { stake: money(tv.stake, tv.currency) })),
    tv.ladderLevel > 0n ? h("span", { class: "pill" }, t("table.level", { n: tv.ladderLevel })) : null,
    tv.handNo > 0n ? h("span", { class: "pill" }, t(dealt(tv.game) ? "table.hand" : "table.game", { n: tv.handNo })) : null,
    tv.pot > 0n ? h("span", { class: "pill" }, t("table.pot", { n: tv.pot })) : null,
    seated ? null : h("span", { class: "pill watch" }, t("table.spectating"))),
  h("div", { class: "table-status" }, status,
    [...tv.seats, ...tv.handSeats].some((x) => x.presence)  // each seat's presence in words (older servers: the pills as before)
      ? (playing ? tv.handSeats : tv.seats).map((x) => presencePill(x, nameOf(x.playerId)))
      : [auto.map((p) => h("span", { class: "pill auto" }, `${nameOf(p)}: ${t("table.auto")}`)),
        Object.entries(tv.reconnectDeadlines).map(([p, d]) => h("span", { class: "pill away" }, `${nameOf(p)}: `, h("span", { "data-deadline": Number(d) })))])),
  !playing ? h("div", { class: "waiting" },
    h("div", { class: "table-seats" }, Array.from({ length: Number(tv.maxSeats) }, (_, i) => {
      const s = tv.seats.find((x) => Number(x.seat) === i);
      return h("span", { class: `chip${s ? "" : " free"}${s?.playerId === portal.playerId ? " me" : ""}`, "data-table-seat": i },
        s ? nameOf(s.playerId) : t("room.free"), seatPresence(s));  // presence on the seat itself
    })),
    h("div", { class: "row-buttons" },
      canStart ? act(tv.handNo > 0n ? "result.next" : "table.start", () => portal.startHand(tv.tableId), "start", "primary") : null,
      !seated && tv.seats.length < Number(tv.maxSeats) ? act("table.sit", () => portal.takeSeat(tv.tableId), "sit", "primary") : null,
      seated ? act("table.stand", () => portal.standUp(tv.tableId), "stand", "quiet") : null)) : null,
  tv.lastOutcome && !playing ? outcome(tv) : null,
  g.view ? h("div", { class: "board" }, withPresence(mod?.board(g.view, context(tv, mySeat, send, rerender)), tv) ?? h("p", { class: "no-board" }, t("table.noBoard"))) : null,
  fairness(tv, playing));
}

/** The hand's provable fairness: the commitments (this hand's, the next one's, published before
 * any client seed for it) and, once a hand is over, its revealed seed: SHA-256 of it is the
 * commitment, and with the players' seeds it re-derives the deal (docs/fairness.md). */
function fairness(tv: TableView, playing: boolean): HTMLElement | null {
  if (!tv.seedCommitment && !tv.nextSeedCommitment) return null;
  const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");
  const row = (label: Key, value: string, id: string) => value
    ? h("div", { class: "fair-row" }, h("dt", {}, t(label)), h("dd", {}, h("code", { id }, value))) : null;
  return h("details", { class: "fairness panel", id: "fairness" },
    h("summary", {}, t("fair.title")),
    h("p", { class: "muted" }, t("fair.hint")),
    h("dl", {},
      row("fair.commitment", tv.handNo > 0n ? tv.seedCommitment : "", "fair-commitment"),
      row("fair.seed", !playing && tv.lastServerSeed.length ? hex(tv.lastServerSeed) : "", "fair-seed"),
      row("fair.next", tv.nextSeedCommitment, "fair-next")));
}

function outcome(tv: TableView): HTMLElement {
  const o = tv.lastOutcome!;
  const who = (seat: bigint | undefined) => (seat === undefined ? t("result.pot") : handName(tv, Number(seat)));
  const unit = tv.stake || 1n;
  return h("div", { class: "outcome panel", id: "outcome", role: "status" },
    h("h2", {}, t(dealt(tv.game) ? "result.title" : "result.gameTitle", { n: tv.handNo })),
    h("p", { class: "verdict" }, h("b", {}, o.winner === undefined ? t("result.draw")
      : tv.handPlayers[Number(o.winner)] === portal.playerId ? t("result.youWon") : t("result.won", { name: who(o.winner) })),
      " — ", word("outcome", o.reason)),
    h("div", { class: "scores" }, tv.handPlayers.map((_, i) => h("span", { class: `chip${o.winner !== undefined && Number(o.winner) === i ? " winner" : ""}` },
      `${handName(tv, i)}: ${o.scores[i] ?? 0n}`))),
    o.transfers.length ? h("div", { class: "scroll-x" }, h("table", { class: "payments" },
      h("caption", {}, t("result.payments")),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("result.from")), h("th", { scope: "col" }, t("result.to")),
        h("th", { scope: "col" }, t("result.amount")), h("th", { scope: "col" }, t("result.why")))),
      h("tbody", {}, o.transfers.map((x) => h("tr", { class: "payment" }, h("td", {}, who(x.fromSeat)), h("td", {}, who(x.toSeat)),
        h("td", { class: "num" }, money(x.amount * unit, tv.currency)), h("td", {}, word("payment", x.reason))))))) : null);
}

// ---------------------------------------------------------------- leaderboards

/** Which board the leaderboard screen shows: the ledger's points or 金币 won (by period), or the ladder's. */
type BoardChoice = "points" | "coins" | "ladder";
let boardKind: BoardChoice = "points";
let boardPeriod: BoardPeriod = BoardPeriod.ALL;

function choices<T>(label: Key, options: readonly (readonly [T, Key])[], current: T, pick: (v: T) => void): HTMLElement {
  return h("div", { class: "tabs", role: "group", "aria-label": t(label) }, options.map(([v, k]) =>
    button(t(k), () => pick(v), { kind: v === current ? "primary" : "quiet", attrs: { "aria-pressed": v === current, "data-board": String(v) } })));
}

async function leaders(game: string): Promise<void> {
  screen("leaders");
  redraw = () => void leaders(game);
  drawBar();
  const pickers = () => h("div", { class: "panel board-pick" },
    choices<BoardChoice>("leaders.kind", [["points", "leaders.points"], ["coins", "leaders.coins"], ["ladder", "leaders.ladder"]],
      boardKind, (v) => { boardKind = v; void leaders(game); }),
    boardKind === "ladder" ? null : choices<BoardPeriod>("leaders.period",
      [[BoardPeriod.WEEK, "leaders.week"], [BoardPeriod.MONTH, "leaders.month"], [BoardPeriod.ALL, "leaders.all"]],
      boardPeriod, (v) => { boardPeriod = v; void leaders(game); }),
    h("p", { class: "muted small", id: "board-note" }, t(boardKind === "ladder" ? "leaders.noteLadder" : boardKind === "coins" ? "leaders.noteCoins" : "leaders.notePoints")));
  if (boardKind !== "ladder") return void ledgerBoard(game, pickers);
  const month = new Date().toISOString().slice(0, 7);
  const [board, monthly] = await Promise.all([
    portal.leaderboard(game).catch((e) => { toast(failure(e)); return undefined; }),
    portal.monthly(game, month).catch(() => []),
  ]);
  if (probe.screen !== "leaders") return;
  const rows = (list: { rank: bigint; playerId: string; standing?: { level: bigint; best: bigint; lp: bigint } }[]) =>
    list.length ? h("div", { class: "scroll-x" }, h("table", { class: "ranks" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("leaders.rank")), h("th", { scope: "col" }, t("leaders.player")),
        h("th", { scope: "col" }, t("home.level")), h("th", { scope: "col" }, t("home.best")), h("th", { scope: "col" }, t("home.lp")))),
      h("tbody", {}, list.map((r) => h("tr", { class: r.playerId === portal.playerId ? "me" : "" },
        h("td", {}, String(r.rank)), h("td", {}, nameOf(r.playerId)), h("td", { class: "num" }, String(r.standing?.level ?? 1n)),
        h("td", { class: "num" }, String(r.standing?.best ?? 1n)), h("td", { class: "num" }, String(r.standing?.lp ?? 0n))))))) 
      : h("p", { class: "muted" }, t("leaders.empty"));
  const draw = () => mount(root, gameTabs(game, "leaders"), pickers(), h("section", { class: "leaders" },
    h("div", { class: "panel" }, h("h2", {}, t("leaders.all")), rows(board?.top ?? []),
      board?.you ? h("p", {}, `${t("you")}: #${board.you.rank}`) : null),
    h("div", { class: "panel" }, h("h2", {}, `${t("leaders.monthly")} (${month})`), rows(monthly))));
  onNames = draw;
  draw();
}

/** The ledger's board of a game (points or 金币 won, for the chosen period), 50 rows a page, "more" for the next. */
async function ledgerBoard(game: string, pickers: () => HTMLElement): Promise<void> {
  const kind = boardKind === "coins" ? BoardKind.COINS : BoardKind.POINTS;
  const first = await portal.board(game, kind, boardPeriod).catch((e) => { toast(failure(e)); return undefined; });
  if (probe.screen !== "leaders") return;
  const list = [...(first?.rows ?? [])];
  let next = first?.nextPageToken ?? "";
  const you = first?.you;
  const more = async () => {
    const page = await portal.board(game, kind, boardPeriod, next).catch((e) => { toast(failure(e)); return undefined; });
    if (!page || probe.screen !== "leaders") return;
    list.push(...page.rows);
    next = page.nextPageToken;
    draw();
  };
  const score = (v: bigint) => (kind === BoardKind.COINS ? money(v, Currency.COINS) : String(v));
  const draw = () => mount(root, gameTabs(game, "leaders"), pickers(), h("section", { class: "leaders" },
    h("div", { class: "panel" }, h("h2", {}, t(kind === BoardKind.COINS ? "leaders.coins" : "leaders.points")),
      list.length ? h("div", { class: "scroll-x" }, h("table", { class: "ranks" },
        h("thead", {}, h("tr", {}, h("th", { scope: "col" }, t("leaders.rank")), h("th", { scope: "col" }, t("leaders.player")),
          h("th", { scope: "col" }, t("leaders.score")), h("th", { scope: "col" }, t("leaders.hands")))),
        h("tbody", {}, list.map((r) => h("tr", { class: r.playerId === portal.playerId ? "me" : "" },
          h("td", {}, String(r.rank)), h("td", {}, nameOf(r.playerId)), h("td", { class: "num" }, score(r.score)),
          h("td", { class: "num" }, String(r.hands)))))))
        : h("p", { class: "muted" }, t("leaders.empty")),
      you ? h("p", { id: "board-you" }, `${t("you")}: ${you.rank > 0n ? `#${you.rank}` : t("leaders.beyond")} · ${score(you.score)}`) : null,
      next ? button(t("leaders.more"), () => void more()) : null)));
  onNames = draw;
  draw();
}

// ---------------------------------------------------------------- paid services

/** What the paid services cost (ListPrices), fetched when the shop first opens. */
let prices: ListPricesResponse | null = null;

function shop(): void {
  screen("shop");
  redraw = shop;
  drawBar();
  if (prices === null) void portal.prices().then((p) => { prices = p; if (probe.screen === "shop") shop(); }, () => undefined);
  const gameSel = h("select", { id: "shop-game", "aria-label": t("shop.game") }, GAMES.map((g) => h("option", { value: g.key }, g.titles[lang()])));
  const song = h("input", { id: "shop-song", maxlength: 200, "aria-label": t("shop.songTitle"), placeholder: t("shop.songTitle") });
  const days = h("select", { id: "shop-days", "aria-label": t("shop.member") }, [1, 7, 30].map((d) => h("option", { value: d }, d === 1 ? t("shop.oneDay") : t("shop.days", { n: d }))));
  const done = async (p: Promise<unknown>) => {
    try { await p; toast(t("shop.done"), false); await refreshCoins(); } catch (e) { toast(failure(e)); }
  };
  const price = (coins: bigint | undefined, id: string) => coins === undefined ? null
    : h("p", { class: "price", "data-price": id }, t("shop.price", { n: coins }));
  const memberPrice = () => prices ? prices.membershipDay * BigInt(Number(days.value)) : undefined;
  const memberLine = price(memberPrice(), "membership");
  days.addEventListener("change", () => { if (memberLine) memberLine.textContent = t("shop.price", { n: memberPrice()! }); });
  const costs: Record<string, Child> = {
    "reset-score": price(prices?.negativeReset, "reset-score"), "reset-reputation": price(prices?.reputationReset, "reset-reputation"),
    song: price(prices?.song, "song"), membership: memberLine,
  };
  const item = (head: Key, hint: Key, control: Child, go: () => void, id: string) => h("div", { class: "panel service", "data-service": id },
    h("h2", {}, t(head)), h("p", { class: "muted" }, t(hint)), control, costs[id] ?? null,
    button(t("shop.buy"), go, { kind: "primary", attrs: { "data-buy": id } }));
  mount(root, h("section", { class: "shop" }, h("h1", {}, t("shop.title")), h("div", { class: "services" },
    item("shop.resetScore", "shop.resetScoreHint", h("label", { class: "field" }, h("span", {}, t("shop.game")), gameSel),
      () => void done(portal.resetNegativeScore(gameSel.value)), "reset-score"),
    item("shop.resetRep", "shop.resetRepHint", null, () => void done(portal.resetReputation()), "reset-reputation"),
    item("shop.song", "shop.songHint", h("label", { class: "field" }, h("span", {}, t("shop.songTitle")), song),
      () => void done(portal.requestSong(song.value.trim(), `room:${FIRST}`)), "song"),
    item("shop.member", "shop.memberHint", h("label", { class: "field" }, h("span", {}, t("shop.member")), days),
      () => void done(portal.buyMembership(Number(days.value))), "membership"))));
}

// ---------------------------------------------------------------- routing

function route(): void {
  const [, where = "", arg = ""] = location.hash.split("/");
  if (!portal.session) return signIn();
  if (where === "rooms") return void rooms(arg || FIRST);
  if (where === "room" && arg) return void room(decodeURIComponent(arg));
  if (where === "table" && arg) return void table(decodeURIComponent(arg));
  if (where === "leaders") return void leaders(arg || FIRST);
  if (where === "shop") return shop();
  return void home();
}

setLang(lang());
if (lang() === "zh") uiSheet();
window.addEventListener("load", () => setTimeout(hanSheet, 3000), { once: true });
restoreSession();
portal.onSession = keepSession;
try { portal.seedKeeper = sessionStorage; } catch { /* storage refused: seeds in memory only */ }
window.addEventListener("hashchange", route);
route();
if (portal.session) void refreshCoins();
