// What the browser scenes share (test/scenes.ts runs one): talking to the Python test that
// started the scene (`ask`: a line "@what" on stdout, answered by a line on stdin once the test
// has done it, e.g. stopped the gateway), a page's player as a node client (its own session, to
// play the moves a scene does not click), guests that play from node only, and waiting.
import { createInterface } from "node:readline";
import { create } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { SessionSchema } from "../../gen/chieu/lobby/v1/lobby_service_pb.js";
import type { TableView } from "../../gen/chieu/table/v1/table_service_pb.js";
import { gameView, Portal } from "../../src/client/index.js";
import { sleep, type Harness, type Session } from "../harness.js";

export const WEB = process.env.CHIEU_WEB_URL ?? "http://127.0.0.1:8080";
export const OUT = process.env.CHIEU_ARTIFACTS ?? "build/artifacts/web";

export interface SceneResult {
  ok: boolean; scene: string; error?: string;
  /** What the scene saw, to assert from Python (each scene its own keys). */
  facts: Record<string, unknown>;
  errors: string[]; overflow: string[]; axe: string[]; screenshots: string[];
  timings: Record<string, number>;
}

let lines: AsyncIterator<string> | undefined;

/** Asks the test that runs this scene to do `what` (a line "@what"), and waits for its answer. */
export async function ask(what: string): Promise<string> {
  lines ??= createInterface({ input: process.stdin })[Symbol.asyncIterator]();
  console.log(`@${what}`);
  const r = await lines.next();
  if (r.done) throw new Error(`no answer to @${what}`);
  return r.value;
}

/** Waits until `probe` returns a truthy value (polled); that value, or a failure naming `what`. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out (${ms} ms) waiting for ${what}`);
    await sleep(50);
  }
}

/** The page's player as a node client: the page's own session (signed in by the page). */
export async function portalOf(page: Page): Promise<Portal> {
  const s = await page.evaluate(() => {
    const x = (window as any).__chieu.portal.session;
    return { accessToken: x.accessToken as string, refreshToken: x.refreshToken as string, exp: String(x.accessExpiresMs),
      id: x.player.playerId as string, name: x.player.name as string };
  });
  const p = new Portal(WEB);
  p.resume(create(SessionSchema, { accessToken: s.accessToken, refreshToken: s.refreshToken, accessExpiresMs: BigInt(s.exp),
    player: { playerId: s.id, name: s.name } }));
  return p;
}

/** A guest that plays from node only (no page). */
export async function bot(name: string): Promise<Portal> {
  const p = new Portal(WEB);
  await p.signInGuest(`scene-${name}-${Math.random().toString(36).slice(2, 10)}`, name);
  return p;
}

/** The table id of the page's table screen. */
export const tableIdOf = async (page: Page) => decodeURIComponent(await page.evaluate(() => location.hash.split("/")[2] ?? ""));

/** The version the page shows. */
export const versionOf = async (page: Page) => BigInt((await page.getAttribute("#table .table", "data-version")) ?? "-1");

/** The caller's game view of the table now, decoded as the game's View type. */
export async function viewOf<V>(p: Portal, tableId: string): Promise<{ table: TableView; view: V }> {
  const table = await p.getTable(tableId);
  return { table, view: gameView(table).view as V };
}

/** Waits until every page shows at least `version`. */
export async function allAt(pages: Page[], version: bigint, ms = 15_000): Promise<void> {
  await until(`every page at version ${version}`, async () => {
    for (const p of pages) if ((await versionOf(p)) < version) return false;
    return true;
  }, ms);
}

/** A host opens a new table in `room` by clicks and the others sit at it from the room's list;
 * returns the table id. Seats are taken in order: the host 0, then each guest the next. */
export async function seatAll(hn: Harness, room: string, game: string, host: Session, guests: Session[], bots: Portal[] = []): Promise<string> {
  for (const s of [host, ...guests]) await hn.enterRoom(s, game, room);
  await host.page.click("#new-table");
  await host.page.waitForSelector("#table .table");
  const tableId = await tableIdOf(host.page);
  for (const s of guests) {
    await s.page.click(`[data-sit="${tableId}"]`);
    await s.page.waitForSelector("#table .table");
  }
  for (const b of bots) await b.takeSeat(tableId);
  return tableId;
}

/** Bots (portals with no page) take part in the commit–reveal round as a page does: each commits
 * a seed for the table's next hand (the host's start waits for every seated player's). */
export async function botsCommit(bots: Portal[], tableId: string): Promise<void> {
  for (const b of bots) await b.takePart(await b.getTable(tableId));
}

/** The page's toasts and page errors so far, less what a dropped connection makes the browser
 * log (a refused fetch is not the page's error). */
export async function pageErrors(hn: Harness, sessions: Session[]): Promise<string[]> {
  const out = hn.errors.filter((e) => !/net::ERR_|Failed to fetch|network error/i.test(e));
  for (const s of sessions) out.push(...(await s.page.evaluate(() => (window as any).__chieu.errors as string[])).map((e) => `${s.name}: toast: ${e}`));
  return out;
}

/** A card-like selection in a 够级 hand: a rank's first click takes all of it, each next click one fewer. */
export async function gjSelect(page: Page, cards: readonly string[]): Promise<void> {
  if (await page.$('.gj [data-act="clear"]')) await page.click('.gj [data-act="clear"]');
  const want = new Map<string, number>();
  for (const c of cards) want.set(c, (want.get(c) ?? 0) + 1);
  for (const [rank, n] of want) {
    const held = Number(await page.getAttribute(`.gj-hand [data-rank="${rank}"]`, "data-held"));
    for (let i = 0; i <= held - n; i++) await page.click(`.gj-hand [data-rank="${rank}"]`);
  }
}
