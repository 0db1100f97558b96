// The web benchmark (run by tests/benchmarks/bench_web.py against `chieu up`):
//  1. a move (TableService.Act) through Envoy and gRPC-Web beside the same move over native gRPC
//     to the table service, interleaved in the same run, same client library (Connect);
//  2. a browser's view update after another player's move: from sending Act (node) to the moment
//     the other player's page (headless Chromium) has the new version on screen.
//  3. the first screen: from navigation to the sign-in screen ready for input (fresh browser
//     contexts, nothing cached), in a headless Chromium on loopback.
// Prints one JSON line. Env: CHIEU_WEB_URL, CHIEU_TABLE_URL, CHIEU_CHROMIUM, BENCH_MOVES.
import { create } from "@bufbuild/protobuf";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { chromium } from "playwright-core";
import { SowSchema, type Sow, type View as OAnQuanView } from "../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";
import { TableStatus, type TableView } from "../gen/chieu/table/v1/table_service_pb.js";
import { gameView, Portal } from "../src/client/index.js";

const WEB = process.env.CHIEU_WEB_URL ?? "http://127.0.0.1:8080";
const NATIVE = process.env.CHIEU_TABLE_URL ?? "http://127.0.0.1:50051";
const MOVES = Number(process.env.BENCH_MOVES ?? 300);
const now = () => performance.timeOrigin + performance.now();
const pct = (xs: number[], q: number) => { const s = [...xs].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(q * s.length))]!; };
const oaq = (t: TableView) => gameView(t).view as OAnQuanView;
/** The first sowing a seat's own view offers (a view lists them only to the seat to move). */
const firstSow = (v: OAnQuanView): Sow => {
  const c = v.legal[0]?.command;
  if (c?.case !== "sow") throw new Error("the view offers no sowing");
  return c.value;
};
const uid = () => Math.random().toString(36).slice(2, 10);

async function guest(name: string): Promise<{ web: Portal; native: Portal }> {
  const web = new Portal(WEB);
  await web.signInGuest(`bench-${name}-${uid()}`, name);
  const native = new Portal(NATIVE, (interceptors) => createGrpcTransport({ baseUrl: NATIVE, interceptors }));
  native.session = web.session; // the same player, its token from the lobby's sign-in
  return { web, native };
}

// ---------------------------------------------------------------- 1. gRPC-Web vs native gRPC
async function transports(): Promise<Record<string, number>> {
  const a = await guest("A");
  const b = await guest("B");
  const web: number[] = [];
  const native: number[] = [];
  let t = await a.web.createTable({ game: "o_an_quan" });
  await b.web.takeSeat(t.tableId);
  t = await a.web.startHand(t.tableId);
  for (let i = 0; web.length < MOVES || native.length < MOVES; i++) {
    if (t.status !== TableStatus.PLAYING) t = await a.web.startHand(t.tableId);
    const v = oaq(t);
    const who = t.handPlayers[Number(v.toMove)] === a.web.playerId ? a : b;
    const viaWeb = i % 2 === 0; // interleaved: both see the same machine at the same moments
    const m = firstSow(oaq(await who.web.getTable(t.tableId))); // the mover's own view
    const t0 = now();
    t = await (viaWeb ? who.web : who.native).act(t.tableId, SowSchema, m);
    (viaWeb ? web : native).push(now() - t0);
  }
  const warm = (xs: number[]) => xs.slice(Math.min(20, xs.length >> 3));
  const w = warm(web), n = warm(native);
  return { web_p50: pct(w, 0.5), web_p99: pct(w, 0.99), native_p50: pct(n, 0.5), native_p99: pct(n, 0.99), moves: w.length + n.length };
}

// ---------------------------------------------------------------- 2. a browser's view update
async function browserUpdate(): Promise<Record<string, number>> {
  const browser = await chromium.launch({
    executablePath: process.env.CHIEU_CHROMIUM ?? "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"],
  });
  try {
    // 3. the first screen, interactive: navigation start → the sign-in form ready (the page's
    // script loaded and run, its first screen drawn), each time in a fresh context (cold cache)
    const first: number[] = [];
    for (let i = 0; i < 12; i++) {
      const ctx = await browser.newContext();
      const p = await ctx.newPage();
      await p.goto(WEB);
      await p.waitForFunction(() => (window as any).__chieu?.readyAt !== undefined, undefined, { polling: "raf" });
      first.push(await p.evaluate(() => (window as any).__chieu.readyAt as number));
      await ctx.close();
    }
    const page = await (await browser.newContext()).newPage();
    await page.goto(WEB);
    await page.fill("#name", "Browser");
    await page.click("#signin");
    await page.waitForSelector('body[data-screen="home"] .stats');
    await page.click('[data-nav="rooms"]');
    await page.click('[data-enter="o_an_quan.points"]');
    await page.click("#new-table");
    await page.waitForSelector("#table .table");
    const tableId: string = await page.evaluate(() => decodeURIComponent(location.hash.split("/")[2]!));
    const a = await guest("Node");
    let t = await a.web.takeSeat(tableId);
    const lat: number[] = [];
    const rendered = (key: string) => page.evaluate((k) => (window as any).__chieu.renders.get(k) as number | undefined, key);
    const waitRender = async (key: string) => {
      await page.waitForFunction((k) => (window as any).__chieu.renders.has(k), key, { polling: "raf", timeout: 10_000 });
      return (await rendered(key))!;
    };
    while (lat.length < Math.max(100, MOVES / 2)) {
      if (t.status !== TableStatus.PLAYING) {
        await page.waitForSelector("#start");
        await page.click("#start");
        t = await waitVersionAbove(a.web, tableId, t.version, (x) => x.status === TableStatus.PLAYING);
      }
      const v = oaq(t);
      if (t.handPlayers[Number(v.toMove)] === a.web.playerId) {
        const m = firstSow(v.legal.length ? v : oaq(await a.web.getTable(tableId)));
        const t0 = now();
        t = await a.web.act(tableId, SowSchema, m);
        lat.push((await waitRender(`${tableId}@${t.version}`)) - t0);
      } else {
        await page.waitForSelector(".oaq button.sq.playable");
        await page.evaluate(() => {
          if (!document.querySelector(".oaq button.sq.picked")) document.querySelector<HTMLButtonElement>(".oaq button.sq.playable")?.click();
          document.querySelector<HTMLButtonElement>('.oaq [data-act^="sow-"]:not([disabled])')?.click();
        });
        t = await waitVersionAbove(a.web, tableId, t.version);
      }
    }
    const w = lat.slice(10);
    const draws: number[] = await page.evaluate(() => (window as any).__chieu.drawMs);
    const f = first.slice(2); // the first two warm the browser itself up
    return { view_p50: pct(w, 0.5), view_p99: pct(w, 0.99), view_max: Math.max(...w), updates: w.length,
      first_p50: pct(f, 0.5), first_max: Math.max(...f), draw_p50: pct(draws, 0.5), draw_p99: pct(draws, 0.99) };
  } finally {
    await browser.close();
  }
}

async function waitVersionAbove(p: Portal, tableId: string, v: bigint, ok: (t: TableView) => boolean = () => true): Promise<TableView> {
  for (let i = 0; i < 1000; i++) {
    const t = await p.getTable(tableId);
    if (t.version > v && ok(t)) return t;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error("the table did not move");
}

const result = { ...(await transports()), ...(await browserUpdate()) };
console.log(JSON.stringify(result));
