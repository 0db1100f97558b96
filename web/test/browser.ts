// Two browser sessions play a whole Ô ăn quan hand against each other through the gateway, a
// third watches; then the two start a Phỏm hand (each sees only their own cards) and the dealer's
// first discard reaches the other's view. Screenshots of the tables are kept. Driven by playwright-core with the system's
// Chromium (CHIEU_CHROMIUM; never a downloaded browser). Prints one JSON line: what happened.
//   CHIEU_WEB_URL=http://127.0.0.1:8080 CHIEU_ARTIFACTS=dir node build/test/browser.mjs
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Page } from "playwright-core";

const URL = process.env.CHIEU_WEB_URL ?? "http://127.0.0.1:8080";
const OUT = process.env.CHIEU_ARTIFACTS ?? "build/artifacts";
const ROOM = process.env.CHIEU_ROOM ?? "o_an_quan.coins.1";
mkdirSync(OUT, { recursive: true });

const browser = await chromium.launch({
  executablePath: process.env.CHIEU_CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run"],
});
const shot = (page: Page, name: string) => page.screenshot({ path: join(OUT, `${name}.png`), fullPage: true });

async function open(name: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1000, height: 800 } })).newPage();
  page.on("pageerror", (e) => console.error(`[${name}] page error: ${e.message}`));
  await page.goto(URL);
  await page.fill("#name", name);
  await page.click("#signin");
  await page.waitForSelector(`tr[data-room="${ROOM}"] button.enter`);
  await page.waitForFunction(() => document.querySelector("#coins")?.getAttribute("data-coins") !== "");
  await page.click(`tr[data-room="${ROOM}"] button.enter`);
  await page.waitForSelector("#quick-seat");
  return page;
}
const coinsOf = async (page: Page) => BigInt((await page.getAttribute("#coins", "data-coins")) || "0");
const attr = (page: Page, name: string) => page.getAttribute("#table .table", name);

const result: Record<string, unknown> = {};
try {
  const a = await open("An");
  const b = await open("Binh");
  const coinsBefore = [await coinsOf(a), await coinsOf(b)];
  // An opens a new table in the room; Binh sits at it from the room's live list
  await a.click("#new-table");
  await a.waitForSelector("#table .table");
  const tableId = await a.evaluate(() => [...(window as any).__chieu.renders.keys()][0].split("@")[0] as string);
  await b.waitForSelector(`tr[data-table="${tableId}"] button.sit`);
  await b.click(`tr[data-table="${tableId}"] button.sit`);
  await b.waitForSelector("#table .table");
  // the host starts the hand once the second seat shows
  const host = (await a.$("#start")) ? a : b;
  await host.waitForSelector("#start", { timeout: 10_000 });
  await host.click("#start");
  for (const p of [a, b]) await p.waitForSelector('#table .table[data-status="PLAYING"]');
  // a spectator opens the table from the room's list
  const c = await open("Chi");
  await c.waitForSelector(`tr[data-table="${tableId}"] button.watch`);
  await c.click(`tr[data-table="${tableId}"] button.watch`);
  await c.waitForSelector("#table .oaq");
  await shot(a, "oaq-1-start-An");
  await shot(b, "oaq-1-start-Binh");
  // play: whoever shows a move button clicks the first one, until both see the outcome
  let moves = 0;
  const deadline = Date.now() + 180_000;
  const clicked = new Map<Page, string>();
  while (Date.now() < deadline) {
    const done = await Promise.all([a, b].map((p) => p.$("#outcome")));
    if (done.every(Boolean)) break;
    for (const p of [a, b]) {
      const v = await p.evaluate(() => {
        const t = document.querySelector("#table .table");
        const btn = document.querySelector<HTMLButtonElement>("button.move");
        return t && btn ? t.getAttribute("data-version") : null;
      });
      if (v !== null && clicked.get(p) !== v) {
        clicked.set(p, v);
        await p.evaluate(() => document.querySelector<HTMLButtonElement>("button.move")?.click());
        moves++;
        if (moves === 6) { await shot(a, "oaq-2-midgame-An"); await shot(b, "oaq-2-midgame-Binh"); await shot(c, "oaq-2-midgame-spectator"); }
      }
    }
    await new Promise((r) => setTimeout(r, 15));
  }
  for (const p of [a, b, c]) await p.waitForSelector("#outcome", { timeout: 10_000 });
  const payments = await a.$$eval("tr.payment", (rows) => rows.map((r) => r.textContent));
  // the coins change once the ledger has posted the settlement
  const coinsAfter = [coinsBefore[0], coinsBefore[1]];
  const until = Date.now() + 15_000;
  while (payments.length && Date.now() < until && (coinsAfter[0] === coinsBefore[0] || coinsAfter[1] === coinsBefore[1])) {
    await new Promise((r) => setTimeout(r, 200));
    coinsAfter[0] = await coinsOf(a);
    coinsAfter[1] = await coinsOf(b);
  }
  await shot(a, "oaq-3-end-An");
  await shot(b, "oaq-3-end-Binh");
  await shot(c, "oaq-3-end-spectator");
  const oaqResult = {
    outcome: await a.textContent("#outcome h3"),
    spectatorSaw: await attr(c, "data-version"), finalVersion: await attr(a, "data-version"),
  };
  // Phỏm: each player sees their own hand only; the dealer's first discard reaches the other's view
  for (const p of [a, b]) {
    await p.click("header button");  // back to the rooms
    await p.click('nav button[data-game="phom"]');
    await p.click('tr[data-room="phom.points"] button.enter');
    await p.waitForSelector("#new-table");
  }
  await a.click("#new-table");
  await a.waitForSelector("#table .table");
  const phomId = await a.evaluate(() => [...(window as any).__chieu.renders.keys()].at(-1).split("@")[0] as string);
  await b.waitForSelector(`tr[data-table="${phomId}"] button.sit`);
  await b.click(`tr[data-table="${phomId}"] button.sit`);
  await a.waitForSelector("#start");
  await a.click("#start");
  const hands = await Promise.all([a, b].map(async (p) => {
    await p.waitForSelector(".phom .hand .card");
    return p.$$eval(".phom .hand .card", (cs) => cs.map((c) => c.getAttribute("data-card")!));
  }));
  await shot(a, "phom-1-dealt-An");
  await shot(b, "phom-1-dealt-Binh");
  // the dealer (10 cards) discards its first card once the Ù window has closed
  const dealer = hands[0]!.length === 10 ? a : b;
  const other = dealer === a ? b : a;
  const card = (hands[dealer === a ? 0 : 1]!)[0]!;
  await dealer.click(`.phom .hand .card[data-card="${card}"]`);
  await dealer.waitForSelector('button[data-act="Discard"]:not([disabled])', { timeout: 30_000 });
  await dealer.click('button[data-act="Discard"]');
  await other.waitForSelector(`.phom .seats .row .card[data-card="${card}"]`);
  await shot(other, "phom-2-discarded-other");
  Object.assign(result, { phomHands: hands.map((h) => h.length), phomDiscard: card,
    phomHidden: hands[0]!.every((c) => !hands[1]!.includes(c)) });
  Object.assign(result, {
    ok: true, tableId, moves, payments, ...oaqResult,
    coinsBefore: coinsBefore.map(String), coinsAfter: coinsAfter.map(String),
    errors: await Promise.all([a, b, c].map((p) => p.evaluate(() => (window as any).__chieu.errors))),
  });
} catch (e) {
  Object.assign(result, { ok: false, error: String(e) });
} finally {
  await browser.close();
}
console.log(JSON.stringify(result));
process.exit(result.ok ? 0 : 1);
