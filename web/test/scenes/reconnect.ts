// A dropped table stream in the browser, for real: An (Vietnamese, desktop) reaches the stack
// through a gateway of its own (CHIEU_CUT_URL, an Envoy the Python test stops and starts again),
// Bình (Chinese, phone) through the usual one. Mid-hand of Ô ăn quan, after An's move, the test
// stops An's gateway: the open Watch stream is cut. An's page must say it is reconnecting, in
// Vietnamese, while Bình plays on; when the gateway is back the page resumes with
// Watch(from_version = the version it had), shows Bình's move, the same board as Bình's, says it
// is connected again, and An plays the next move by clicks.
import { fromBinary } from "@bufbuild/protobuf";
import type { Page } from "playwright-core";
import { WatchRequestSchema } from "../../gen/chieu/table/v1/table_service_pb.js";
import { vi } from "../../src/app/i18n/vi.js";
import { Harness, type Session } from "../harness.js";
import { spec } from "../moves/o_an_quan.js";
import { allAt, ask, OUT, pageErrors, seatAll, until, versionOf, WEB, type SceneResult } from "./kit.js";
import type { Browser } from "playwright-core";

const CUT = process.env.CHIEU_CUT_URL ?? WEB;
const WATCH = "/chieu.table.v1.TableService/Watch";

/** The squares as a page draws them: stones per square (by the square's number, so the ring
 * seen from either side compares), and whose turn. */
const boardOf = (page: Page) => page.evaluate(() => ({
  squares: Object.fromEntries([...document.querySelectorAll(".oaq [data-square]")].map((e) => [e.getAttribute("data-square"), e.querySelector(".count")?.textContent ?? ""])),
  toMove: document.querySelector("#table .table")?.getAttribute("data-to-move") ?? "",
}));

const mySeat = async (s: Session) => s.page.getAttribute("#table .table", "data-my-seat");
const toMove = async (s: Session) => s.page.getAttribute("#table .table", "data-to-move");

/** The player to move plays one move by clicks; the version it leads to, seen by every page. */
async function moveBy(s: Session, pages: Page[]): Promise<bigint> {
  const v0 = await versionOf(s.page);
  await until(`${s.name} moves`, () => spec.move(s.page));
  const v1 = await until(`${s.name}'s move on its page`, async () => { const v = await versionOf(s.page); return v > v0 ? v : undefined; });
  await allAt(pages, v1);
  return v1;
}

export async function reconnect(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, OUT);
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const an = await hn.open("An", "vi", false, "player", CUT);
  const binh = await hn.open("Bình", "zh", true);
  const pages = [an.page, binh.page];
  // every Watch An's page sends, with its from_version (gRPC-Web: a 5-byte frame head, then the message)
  const watches: { from: bigint; t: number }[] = [];
  an.page.on("request", (q) => {
    if (!q.url().endsWith(WATCH)) return;
    const body = q.postDataBuffer();
    if (body && body.length >= 5) watches.push({ from: fromBinary(WatchRequestSchema, body.subarray(5)).fromVersion, t: Date.now() });
  });
  await seatAll(hn, "o_an_quan.points", "o_an_quan", an, [binh]);
  await an.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await an.page.click("#start");
  for (const p of pages) await p.waitForSelector('#table .table[data-status="playing"]');
  const anSeat = await mySeat(an);
  // a few moves by clicks, then stop right after one of An's: Bình is to move
  let moves = 0;
  while (moves < 3 || (await toMove(an)) === anSeat) {
    const mover = (await toMove(an)) === anSeat ? an : binh;
    await moveBy(mover, pages);
    moves++;
  }
  const had = await versionOf(an.page);
  r.facts.versionBefore = String(had);
  r.facts.movesBefore = moves;

  const cutAt = Date.now();
  await ask("cut");  // the test stops An's gateway: the open stream is gone
  await an.page.waitForSelector("#conn:not([hidden])", { timeout: 20_000 });
  r.facts.banner = await an.page.textContent("#conn");
  r.facts.bannerExpected = vi["conn.lost"];
  // Bình plays on meanwhile; An's page cannot know
  const after = await moveBy(binh, [binh.page]);
  r.facts.versionWhileCut = String(await versionOf(an.page));
  r.facts.bannerStill = await an.page.isVisible("#conn");
  await hn.look(an, "reconnect-1-lost");
  await hn.look(binh, "reconnect-1-other");

  await ask("restore");  // the gateway is back
  const restoredAt = Date.now();
  await allAt([an.page], after, 30_000);
  r.facts.reconnectMs = Date.now() - restoredAt;
  await an.page.waitForSelector("#conn[hidden]", { state: "attached", timeout: 5_000 });
  r.facts.notes = await an.page.evaluate(() => (window as any).__chieu.notes as string[]);
  r.facts.backExpected = vi["conn.back"];
  const sent = watches.filter((w) => w.t >= cutAt);
  r.facts.watchesAfterCut = sent.map((w) => String(w.from));
  r.facts.watchesBeforeCut = watches.filter((w) => w.t < cutAt).length;
  r.facts.resumedAfterRestore = watches.filter((w) => w.t >= restoredAt).map((w) => String(w.from));
  const [a, b] = [await boardOf(an.page), await boardOf(binh.page)];
  r.facts.boardSame = JSON.stringify(a) === JSON.stringify(b);
  r.facts.boards = { an: a, binh: b };
  r.facts.versionAfter = String(await versionOf(an.page));
  r.facts.versionOther = String(await versionOf(binh.page));
  await hn.look(an, "reconnect-2-back", true);
  // playable again: An's move by clicks reaches Bình
  r.facts.anToMove = (await toMove(an)) === anSeat;
  const next = await moveBy(an, pages);
  r.facts.versionAfterMove = String(next);
  r.facts.otherSawMove = (await versionOf(binh.page)) === next;
  r.errors = await pageErrors(hn, [an, binh]);
}
