// 中国象棋's draw offer by clicks (and, first, two clicks the rules refuse, each told why beside
// the point): Red (An, Vietnamese, desktop) offers a draw (提和) on its
// move; Black (Bình, Chinese, phone) sees the offer with the name and its two answers, declines;
// the offer is gone from both pages and Red may not offer again this turn. A move each, then Red
// offers again and Black accepts: both pages show the hand over without a winner (和棋 by
// agreement), in each one's language.
import type { Browser, Page } from "playwright-core";
import { Harness, type Session } from "../harness.js";
import { allAt, OUT, pageErrors, seatAll, until, versionOf, WEB, type SceneResult } from "./kit.js";

const squares = (page: Page, sel: string) => page.$$eval(sel, (els) => els.map((e) => e.getAttribute("data-square")!));

/** One move by clicks for the side to move (the first piece it may move, its first destination). */
async function move(s: Session, pages: Page[]): Promise<bigint> {
  await s.page.waitForSelector('.xq[data-turn="mine"]');
  const v0 = await versionOf(s.page);
  await until(`${s.name} moves`, async () => {
    const pieces = await squares(s.page, ".xq-pt.movable");
    if (!pieces.length) return false;
    await s.page.click(`.xq-pt.movable[data-square="${pieces[0]}"]`, { timeout: 3000 });
    const dests = await squares(s.page, ".xq-pt.dest");
    if (!dests.length) return false;
    await s.page.click(`.xq-pt.dest[data-square="${dests[0]}"]`, { timeout: 3000 });
    return true;
  });
  const v1 = await until("the move", async () => { const v = await versionOf(s.page); return v > v0 ? v : undefined; });
  await allAt(pages, v1);
  return v1;
}

/** Clicks `act` on the page and waits until every page has the change. */
async function act(s: Session, sel: string, pages: Page[]): Promise<bigint> {
  const v0 = await versionOf(s.page);
  await s.page.click(`.xq [data-act="${sel}"]:not([disabled])`);
  const v1 = await until(`${sel} acted`, async () => { const v = await versionOf(s.page); return v > v0 ? v : undefined; });
  await allAt(pages, v1);
  return v1;
}

export async function xiangqiDraw(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, OUT);
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const red = await hn.open("An", "vi", false);
  const black = await hn.open("Bình", "zh", true);
  const pages = [red.page, black.page];
  await seatAll(hn, "xiangqi.short", "xiangqi", red, [black]);
  await red.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await red.page.click("#start");
  for (const p of pages) await p.waitForSelector('#table .table[data-status="playing"]');
  const f = r.facts;
  f.redSeat = await red.page.getAttribute("#table .table", "data-my-seat");
  // 0. clicks the rules refuse say why beside the point: Red on Black's chariot, Black on its own
  // before its turn
  // (aria-disabled: no move from there, so Playwright would wait for it; a player's click lands)
  await red.page.click('.xq-pt[data-square="a9"]', { force: true });
  f.whyRed = await red.page.textContent('.xq-grid > .why-bubble');
  await black.page.click('.xq-pt[data-square="a9"]', { force: true });
  f.whyBlack = await black.page.textContent('.xq-grid > .why-bubble');
  // 1. Red offers; Black sees it, with both answers
  f.offerEnabledAtStart = await red.page.isEnabled('.xq [data-act="offer"]');
  await act(red, "offer", pages);
  await black.page.waitForSelector('.xq [data-act="accept"]:not([disabled])');
  f.offerText = await black.page.textContent(".xq .banner.window");
  f.declineShown = await black.page.isEnabled('.xq [data-act="decline"]');
  f.redOfferAgainEnabled = await red.page.isEnabled('.xq [data-act="offer"]');
  f.redSeesAnswers = (await red.page.$('.xq [data-act="accept"]')) !== null;
  await hn.look(black, "xiangqi-draw-1-offered", true);
  // 2. Black declines: the offer is gone from both pages; still one offer per turn for Red
  await act(black, "decline", pages);
  f.offerGoneForBlack = (await black.page.$('.xq [data-act="accept"]')) === null && (await black.page.$(".xq .banner.window")) === null;
  f.redOfferAfterDecline = await red.page.isEnabled('.xq [data-act="offer"]');
  f.stillPlaying = (await red.page.$('#table .table[data-status="playing"]')) !== null;
  // 3. a move each; Red offers again, Black accepts
  await move(red, pages);
  await move(black, pages);
  f.offerEnabledNextTurn = await red.page.isEnabled('.xq [data-act="offer"]');
  await act(red, "offer", pages);
  await black.page.waitForSelector('.xq [data-act="accept"]:not([disabled])');
  await black.page.click('.xq [data-act="accept"]');
  for (const p of pages) await p.waitForSelector("#outcome", { timeout: 15_000 });
  f.verdictRed = await red.page.textContent("#outcome .verdict");
  f.verdictBlack = await black.page.textContent("#outcome .verdict");
  f.winnerChips = await red.page.$$eval("#outcome .chip.winner", (els) => els.length);
  await hn.look(red, "xiangqi-draw-2-agreed", true);
  await hn.look(black, "xiangqi-draw-2-agreed");
  r.errors = await pageErrors(hn, [red, black]);
}
