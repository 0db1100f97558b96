/**
 * Chiếu's portal flow for a front-end, typed, over the generated client (web/gen) and gRPC-Web.
 *
 *   const portal = new Portal(location.origin);               // gRPC-Web through the gateway
 *   await portal.signInGuest(deviceId, "Lan");            // LobbyService.SignInGuest
 *   const rooms = await portal.rooms(GAMES[0].key);        // LobbyService.ListRooms (with gates)
 *   for await (const change of portal.watchRoom(roomId)) … // LobbyService.WatchRoom
 *   const seat = await portal.quickSeat(roomId);           // LobbyService.QuickSeat
 *   for await (const view of portal.watch(tableId)) …      // TableService.Watch, resumed after a drop
 *   await portal.act(tableId, create(SowSchema, {…}));     // TableService.Act, command id + retries
 *
 * While it watches a table where the caller sits, the portal takes part in the commit–reveal
 * round of client seeds (chieu-fair-v2, docs/fairness.md) with no click: a fresh random 32-byte
 * seed committed for each hand (TableService.CommitSeed), revealed when the seat is asked
 * (TableService.RevealSeed). `portal.seedRound = false` turns it off.
 *
 * Every call after sign-in carries "authorization: Bearer <access token>"; the access token is
 * refreshed (LobbyService.Refresh) shortly before it expires.
 */
import { createRegistry, type DescMessage, type Message, type MessageInitShape, type MessageShape } from "@bufbuild/protobuf";
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, createClient, type Client, type Interceptor, type Transport } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";
import { GAMES, gameOf, type GameDescriptor } from "../../gen/chieu/games/registry.js";
import {
  LobbyService,
  type GetHomeResponse,
  type QuickSeatResponse,
  type RoomEntry,
  type Session,
  type WatchRoomResponse,
  type Zone,
} from "../../gen/chieu/lobby/v1/lobby_service_pb.js";
import { TableService, type CreateTableRequestSchema, type TableView } from "../../gen/chieu/table/v1/table_service_pb.js";
import { LadderService, type RankedPlayer } from "../../gen/chieu/ladder/v1/ladder_service_pb.js";
import { BoardKind, BoardPeriod, LedgerService, type GetBoardResponse, type ListPricesResponse, type PostingResult } from "../../gen/chieu/ledger/v1/ledger_service_pb.js";
import type { Profile } from "../../gen/chieu/lobby/v1/lobby_service_pb.js";

export { BoardKind, BoardPeriod };
export type { GetBoardResponse, PostingResult, Profile, RankedPlayer, RoomEntry, Session, TableView, WatchRoomResponse };

export { GAMES, gameOf, type GameDescriptor };

/** The game views this client decodes: every registered game's (TableView.game_view is an Any of one). */
export const gameViews = createRegistry(...GAMES.map((g) => g.view));

/** A table's game view, decoded with its game's schema from the generated registry; `view` is
 * undefined before the first hand (or for a game this client was generated without). A board
 * reads it as its own game's View type. */
export interface GameView {
  game: string;
  view: (Message & { toMove?: bigint | number; deadlineMs?: bigint }) | undefined;
}

/** The caller's game view of a table view, decoded (undefined before the first hand). */
export function gameView(table: TableView): GameView {
  const any = table.gameView;
  const game = gameOf(table.game);
  if (!any || !game) return { game: table.game, view: undefined };
  return { game: table.game, view: anyUnpack(any, game.view) as GameView["view"] };
}

/** The stable reason code of a refusal (the chieu-reason trailer, else the message's prefix). */
export function reason(err: unknown): string {
  const e = ConnectError.from(err);
  const r = e.metadata.get("chieu-reason");
  if (r) return r;
  const m = /^([a-z_]+):/.exec(e.rawMessage);
  return m ? m[1]! : Code[e.code];
}

/** Failures worth trying again with the same command id: the service or the network, not a refusal. */
export function retryable(err: unknown): boolean {
  const code = ConnectError.from(err).code;
  return code === Code.Unavailable || code === Code.Unknown || code === Code.DeadlineExceeded;
}

export interface RetryOptions {
  /** Tries in all (default 5). */
  attempts?: number;
  /** First back-off in ms, doubled each time (default 100). */
  backoffMs?: number;
  signal?: AbortSignal;
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal?.addEventListener("abort", () => { clearTimeout(t); reject(signal.reason); }, { once: true });
  });

let counter = 0;
/** A fresh command id: the same id sent again acts once (the table remembers it). */
export function commandId(prefix = "c"): string {
  const rand = globalThis.crypto?.randomUUID?.() ?? `${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`;
  return `${prefix}-${rand}-${++counter}`;
}

const SEED_PREFIX = new TextEncoder().encode("chieu-fair-v2 client\0");

function be(n: bigint, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = bytes - 1; i >= 0; i--) { out[i] = Number(n & 0xffn); n >>= 8n; }
  return out;
}

/**
 * A client commitment (chieu-fair-v2): lowercase hex SHA-256 of "chieu-fair-v2 client" || 0x00 ||
 * uint32-be(len table id) || table id || uint64-be(hand) || uint32-be(len player id) || player id ||
 * seed, ids in UTF-8 (docs/fairness.md).
 */
export async function clientCommitment(tableId: string, handNo: bigint, playerId: string, seed: Uint8Array): Promise<string> {
  const enc = new TextEncoder();
  const t = enc.encode(tableId), p = enc.encode(playerId);
  const parts = [SEED_PREFIX, be(BigInt(t.length), 4), t, be(handNo, 8), be(BigInt(p.length), 4), p, seed];
  const all = new Uint8Array(parts.reduce((n, x) => n + x.length, 0));
  let at = 0;
  for (const x of parts) { all.set(x, at); at += x.length; }
  const digest = new Uint8Array(await globalThis.crypto.subtle.digest("SHA-256", all));
  return Array.from(digest, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** What the round asks of `playerId` at `view`: commit (no reveal asked, and no seed of theirs the
 * table acknowledged: `acked(hand)` is the version of its answer, undefined for none; a view older
 * than that answer asks nothing, as a watch stream may be behind a command's answer), reveal
 * (their seat asked and not revealed), or nothing. */
export function roundStep(view: TableView, playerId: string, acked: (hand: bigint) => bigint | undefined): "commit" | "reveal" | undefined {
  if (!playerId || !view.seats.some((s) => s.playerId === playerId)) return undefined;
  const at = acked(view.roundHandNo);
  if (view.revealPlayers.length) {
    return view.revealPlayers.includes(playerId) && !view.revealed.includes(playerId) && at !== undefined
      ? "reveal" : undefined;
  }
  return at !== undefined && (view.committed.includes(playerId) || view.version <= at) ? undefined : "commit";
}

async function withRetries<T>(call: () => Promise<T>, opts: RetryOptions = {}): Promise<T> {
  const attempts = opts.attempts ?? 5;
  let backoff = opts.backoffMs ?? 100;
  for (let i = 1; ; i++) {
    try {
      return await call();
    } catch (err) {
      if (i >= attempts || !retryable(err) || opts.signal?.aborted) throw err;
      await sleep(backoff, opts.signal);
      backoff *= 2;
    }
  }
}

/** Where a page keeps what must outlive a reload (the browser's sessionStorage). */
export interface Keeper { getItem(key: string): string | null; setItem(key: string, value: string): void }

const hex = (b: Uint8Array) => Array.from(b, (x) => x.toString(16).padStart(2, "0")).join("");

/** Keep a committed seed (`key`: "table/hand") for `playerId` in `keeper`: a page reloaded while
 * the table asks for reveals still reveals (without it the seat would withhold: a forced quit). */
export function keepSeed(keeper: Keeper | undefined, playerId: string, key: string, kept: { seed: Uint8Array; version: bigint }): void {
  try {
    keeper?.setItem(`chieu.seed/${playerId}/${key}`, JSON.stringify({ seed: hex(kept.seed), version: String(kept.version) }));
  } catch { /* storage full or refused: the seed stays in memory only */ }
}

/** The seed `keepSeed` kept, or undefined. */
export function keptSeed(keeper: Keeper | undefined, playerId: string, key: string): { seed: Uint8Array; version: bigint } | undefined {
  try {
    const raw = keeper?.getItem(`chieu.seed/${playerId}/${key}`);
    if (!raw) return undefined;
    const { seed, version } = JSON.parse(raw) as { seed: string; version: string };
    if (!/^[0-9a-f]{64}$/.test(seed)) return undefined;
    return { seed: Uint8Array.from(seed.match(/../g)!, (x) => parseInt(x, 16)), version: BigInt(version) };
  } catch {
    return undefined;
  }
}

/** The portal: one player's session and their calls to the lobby and the table service. */
export class Portal {
  readonly lobby: Client<typeof LobbyService>;
  readonly table: Client<typeof TableService>;
  readonly ladder: Client<typeof LadderService>;
  readonly ledger: Client<typeof LedgerService>;
  session: Session | undefined;
  /** The language the services answer refusals in (accept-language); "" for their default. */
  lang = "";
  private refreshing: Promise<void> | undefined;
  /** Called with the new session after each refresh (a page keeps it to resume after a reload). */
  onSession: ((s: Session) => void) | undefined;
  /** Refresh the access token this long before it expires. */
  refreshMarginMs = 60_000;
  /** Take part in the commit–reveal round of client seeds while watching a table (default on). */
  seedRound = true;
  /** The seeds whose commitment the table acknowledged, by "table/hand", with the version it
   * answered with (the last few). */
  private seeds = new Map<string, { seed: Uint8Array; version: bigint }>();
  /** Where committed seeds are also kept, to reveal after a reload (a page sets sessionStorage). */
  seedKeeper: Keeper | undefined;
  /** Tables with a round step under way: one at a time. */
  private stepping = new Set<string>();

  /**
   * `transport` makes the transport for the portal's clients with the interceptors given (the
   * bearer token); the default is gRPC-Web to `baseUrl`, the gateway (Envoy).
   */
  constructor(baseUrl: string, transport: (interceptors: Interceptor[]) => Transport =
    (interceptors) => createGrpcWebTransport({ baseUrl, interceptors })) {
    const auth: Interceptor = (next) => async (req) => {
      if (this.lang) req.header.set("accept-language", this.lang);
      if (this.session && req.method.name !== "Refresh") {
        await this.freshToken();
        req.header.set("authorization", `Bearer ${this.session.accessToken}`);
      }
      return next(req);
    };
    const t = transport([auth]);
    this.lobby = createClient(LobbyService, t);
    this.table = createClient(TableService, t);
    this.ladder = createClient(LadderService, t);
    this.ledger = createClient(LedgerService, t);
  }

  get playerId(): string {
    return this.session?.player?.playerId ?? "";
  }

  private async freshToken(): Promise<void> {
    const s = this.session;
    if (!s || Number(s.accessExpiresMs) - Date.now() > this.refreshMarginMs) return;
    this.refreshing ??= this.lobby.refresh({ refreshToken: s.refreshToken }).then(
      (r) => { this.session = r.session; if (r.session) this.onSession?.(r.session); },
    ).finally(() => { this.refreshing = undefined; });
    await this.refreshing;
  }

  // ------------------------------------------------------------------ sessions (LobbyService)

  /** SignInGuest: one guest per device id; the first sign-in pays the welcome 金币. */
  async signInGuest(deviceId: string, name = ""): Promise<Session> {
    const r = await withRetries(() => this.lobby.signInGuest({ deviceId, name }));
    this.session = r.session!;
    return this.session;
  }

  /** SignIn with a username and password. */
  async signIn(username: string, password: string, deviceId: string): Promise<Session> {
    const r = await this.lobby.signIn({ username, password, deviceId });
    this.session = r.session!;
    return this.session;
  }

  /** Register an account (username, password) and sign in with it. */
  async register(username: string, password: string, deviceId: string, name = ""): Promise<Session> {
    const r = await this.lobby.register({ username, password, deviceId, name });
    this.session = r.session!;
    return this.session;
  }

  /** A session kept from before (the page stored it): used as is, refreshed when it is old. */
  resume(session: Session): void {
    this.session = session;
  }

  async signOut(): Promise<void> {
    if (!this.session) return;
    await this.lobby.signOut({ refreshToken: this.session.refreshToken });
    this.session = undefined;
  }

  // ------------------------------------------------------------------ rooms (LobbyService)

  async zones(): Promise<Zone[]> {
    return (await withRetries(() => this.lobby.listZones({}))).zones;
  }

  /** The rooms of a game with the caller's gate for each (allowed, or why not). */
  async rooms(game: string): Promise<RoomEntry[]> {
    return (await withRetries(() => this.lobby.listRooms({ game }))).rooms;
  }

  /** WatchRoom: the room's open tables (snapshot messages), then each change; until aborted. */
  watchRoom(roomId: string, signal?: AbortSignal): AsyncIterable<WatchRoomResponse> {
    return this.lobby.watchRoom({ roomId }, { signal });
  }

  /** QuickSeat: the fullest waiting table the caller may join in the room, or a new one. */
  async quickSeat(roomId: string): Promise<QuickSeatResponse> {
    return withRetries(() => this.lobby.quickSeat({ roomId }));
  }

  async home(): Promise<GetHomeResponse> {
    return withRetries(() => this.lobby.getHome({}));
  }

  /** GetProfiles: display names and avatar keys of up to 200 players (unknown ids left out). */
  async profiles(playerIds: readonly string[]): Promise<Profile[]> {
    if (!playerIds.length) return [];
    return (await withRetries(() => this.lobby.getProfiles({ playerIds: [...playerIds] }))).profiles;
  }

  // ------------------------------------------------------------------ ranks (LadderService)

  /** GetLeaderboard: the top of a game's ladder and the caller's own rank. */
  async leaderboard(game: string, top = 50): Promise<{ top: RankedPlayer[]; you: RankedPlayer | undefined; players: bigint }> {
    const r = await withRetries(() => this.ladder.getLeaderboard({ game, top, playerId: this.playerId }));
    return { top: r.top, you: r.you, players: r.players };
  }

  /** GetMonthlyRanking: a month's (YYYY-MM, UTC) ranking of a game. */
  async monthly(game: string, month: string, top = 50): Promise<RankedPlayer[]> {
    return (await withRetries(() => this.ladder.getMonthlyRanking({ game, month, top }))).ranking;
  }

  /** GetBoard (LedgerService): a page of 50 of a game's points or 金币-won board for a period, the
   * caller's own row too; the next page from the previous one's nextPageToken. */
  async board(game: string, kind: BoardKind, period: BoardPeriod, pageToken = ""): Promise<GetBoardResponse> {
    return await withRetries(() => this.ledger.getBoard({ game, kind, period, pageToken, playerId: this.playerId }));
  }

  // ------------------------------------------------------------------ paid services (LedgerService)

  /** ListPrices: what each paid service costs now, in 金币 (the operator's settings). */
  async prices(): Promise<ListPricesResponse> {
    return await withRetries(() => this.ledger.listPrices({}));
  }

  /** 负分清零: one game's negative points back to 0, paid in 金币. */
  async resetNegativeScore(game: string): Promise<PostingResult> {
    const requestId = commandId("reset");
    return (await withRetries(() => this.ledger.resetNegativeScore({ requestId, game }))).result!;
  }

  /** 信誉度复位: reputation back to its starting value, paid in 金币. */
  async resetReputation(): Promise<PostingResult> {
    const requestId = commandId("rep");
    return (await withRetries(() => this.ledger.resetReputation({ requestId }))).result!;
  }

  /** 点歌: a song for a room or table, paid in 金币. */
  async requestSong(song: string, target: string): Promise<PostingResult> {
    const requestId = commandId("song");
    return (await withRetries(() => this.ledger.requestSong({ requestId, song, target }))).result!;
  }

  /** Membership days, paid in 金币. */
  async buyMembership(days: number): Promise<PostingResult> {
    const requestId = commandId("member");
    return (await withRetries(() => this.ledger.buyMembership({ requestId, days: BigInt(days) }))).result!;
  }

  /** The caller's balances and membership days (LedgerService.GetBalances). */
  async balances(): Promise<{ coins: bigint; hearts: bigint; membershipDays: bigint }> {
    const r = await withRetries(() => this.ledger.getBalances({}));
    const of = (c: string) => r.balances.find((b) => b.currency === c)?.amount ?? 0n;
    return { coins: of("coins"), hearts: of("hearts"), membershipDays: r.membershipDays };
  }

  // ------------------------------------------------------------------ tables (TableService)

  /** CreateTable: the caller hosts it and takes seat 0 (one command id for every try). */
  async createTable(req: Omit<MessageInitShape<typeof CreateTableRequestSchema>, "commandId" | "$typeName">): Promise<TableView> {
    const id = commandId("create");
    return (await withRetries(() => this.table.createTable({ ...req, commandId: id }))).table!;
  }

  async takeSeat(tableId: string): Promise<TableView> {
    const id = commandId("seat");
    return (await withRetries(() => this.table.takeSeat({ tableId, commandId: id }))).table!;
  }

  async standUp(tableId: string): Promise<TableView> {
    const id = commandId("stand");
    return (await withRetries(() => this.table.standUp({ tableId, commandId: id }))).table!;
  }

  async startHand(tableId: string): Promise<TableView> {
    const id = commandId("start");
    return (await withRetries(() => this.table.startHand({ tableId, commandId: id }))).table!;
  }

  /**
   * The commit–reveal round at `view`: commit a fresh random 32-byte seed for the next hand, or
   * reveal it when the caller's seat is asked; the table after, or undefined (nothing to do, a
   * step already under way, or the table moved on: a refusal of a step is no error).
   */
  async takePart(view: TableView): Promise<TableView | undefined> {
    const key = `${view.tableId}/${view.roundHandNo}`;
    if (this.stepping.has(view.tableId)) return undefined;
    const kept = (k: string) => this.seeds.get(k) ?? keptSeed(this.seedKeeper, this.playerId, k);
    const step = roundStep(view, this.playerId, (hand) => kept(`${view.tableId}/${hand}`)?.version);
    if (!step) return undefined;
    this.stepping.add(view.tableId);
    try {
      if (step === "reveal") {
        const seed = kept(key)!.seed;
        const id = commandId("reveal");
        return (await withRetries(() => this.table.revealSeed({ tableId: view.tableId, seed, commandId: id }))).table!;
      }
      const seed = globalThis.crypto.getRandomValues(new Uint8Array(32));
      const commitment = await clientCommitment(view.tableId, view.roundHandNo, this.playerId, seed);
      const id = commandId("commit");
      const after = (await withRetries(() => this.table.commitSeed({ tableId: view.tableId, commitment, commandId: id }))).table!;
      this.seeds.set(key, { seed, version: after.version }); // counts once the table has it
      keepSeed(this.seedKeeper, this.playerId, key, { seed, version: after.version });
      while (this.seeds.size > 8) this.seeds.delete(this.seeds.keys().next().value!);
      return after;
    } catch (err) {
      if (retryable(err)) throw err;
      return undefined; // the table moved on meanwhile: the next view says what to do
    } finally {
      this.stepping.delete(view.tableId);
    }
  }

  async getTable(tableId: string): Promise<TableView> {
    return (await withRetries(() => this.table.getTable({ tableId }))).table!;
  }

  /**
   * Act: a game command (a message of chieu.games.<game>.v1) for the caller's seat, under one
   * command id for every try, so a retry after a lost answer acts once.
   */
  async act<Desc extends DescMessage>(
    tableId: string, schema: Desc, command: MessageShape<Desc>,
    opts: RetryOptions & { commandId?: string; expectedVersion?: bigint } = {},
  ): Promise<TableView> {
    const id = opts.commandId ?? commandId("act");
    const packed = anyPack(schema, command);
    const r = await withRetries(
      () => this.table.act({ tableId, command: packed, commandId: id, expectedVersion: opts.expectedVersion }), opts);
    return r.table!;
  }

  /**
   * Watch a table: the caller's view now, then one per change. After a dropped stream it
   * reconnects (backing off) with Watch(from_version = the last version seen), so no view is
   * missed or repeated; it ends when `signal` aborts, or throws a refusal (not a network failure).
   */
  async *watch(tableId: string, opts: { signal?: AbortSignal; fromVersion?: bigint; onDrop?: (err: unknown) => void } = {}): AsyncGenerator<TableView> {
    let version = opts.fromVersion ?? 0n;
    let backoff = 100;
    for (;;) {
      try {
        for await (const r of this.table.watch({ tableId, fromVersion: version }, { signal: opts.signal })) {
          const t = r.table!;
          if (t.version < version) continue;
          version = t.version;
          backoff = 100;
          if (this.seedRound) this.takePart(t).catch(() => undefined); // the next view tries again
          yield t;
        }
        if (opts.signal?.aborted) return;
      } catch (err) {
        if (opts.signal?.aborted) return;
        if (!retryable(err) && ConnectError.from(err).code !== Code.Canceled) throw err;
        opts.onDrop?.(err);
      }
      await sleep(backoff, opts.signal).catch(() => undefined);
      if (opts.signal?.aborted) return;
      backoff = Math.min(backoff * 2, 5_000);
    }
  }
}

export { anyPack };
