// 中国象棋 by clicks: on one's turn, a piece the board lets move (button.movable), then one of
// the destinations it marks, a capture first when one is offered; a draw offer is declined; after
// PLIES moves the side to move resigns (认输, then the confirmation), so the hand ends soon. Each
// player's first move is made from the keyboard alone (arrow keys and Enter).
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

const PLIES = 24;
const byKeyboard = new WeakSet<Page>();

/** From the focused point to `square` with the arrow keys, then Enter. */
async function walk(page: Page, square: string): Promise<void> {
  const at = (sel: string) => page.$eval(sel, (e) => [Number(e.getAttribute("data-row")), Number(e.getAttribute("data-col"))]);
  const [r0, c0] = await at(".xq-pt:focus");
  const [r1, c1] = await at(`.xq-pt[data-square="${square}"]`);
  for (let i = 0; i < Math.abs(r1! - r0!); i++) await page.keyboard.press(r1! > r0! ? "ArrowDown" : "ArrowUp");
  for (let i = 0; i < Math.abs(c1! - c0!); i++) await page.keyboard.press(c1! > c0! ? "ArrowRight" : "ArrowLeft");
  await page.keyboard.press("Enter");
}

/** Each player's first move from the keyboard alone: the board's one tab stop focused, the arrow
 * keys to a piece, Enter, the arrow keys to one of its destinations, Enter. */
async function keyboardMove(page: Page, squares: (sel: string) => Promise<string[]>): Promise<boolean> {
  await page.focus('.xq-grid .xq-pt[tabindex="0"]');
  const pieces = await squares(".xq-pt.movable");
  await walk(page, pick(pieces));
  const dests = await squares(".xq-pt.dest");
  if (!dests.length) return false;
  await walk(page, pick(dests));
  return true;
}
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

export const spec: GameSpec = {
  game: "xiangqi", room: "xiangqi.short", players: 2, midAfter: 8, limitMs: 120_000,
  async move(page) {
    const decline = await page.$('.xq [data-act="decline"]:not([disabled])');
    if (decline) { await decline.click(); return true; }
    if (await page.$('.xq[data-turn="mine"]') === null) return false;
    if (Number(await page.getAttribute(".xq", "data-plies")) >= PLIES) {
      await page.click('.xq [data-act="resign"]');
      await page.click('.xq [data-act="resign-yes"]');
      return true;
    }
    // squares by name (data-square), clicked by selector: a redraw replaces the elements
    const squares = (sel: string) => page.$$eval(sel, (els) => els.map((e) => e.getAttribute("data-square")!));
    const pieces = await squares(".xq-pt.movable");
    if (!pieces.length) return false;
    if (!byKeyboard.has(page)) {
      byKeyboard.add(page);
      if (await keyboardMove(page, squares)) return true;  // a failure fails the hand: the keyboard must work
    }
    if (!(await page.click(`.xq-pt.movable[data-square="${pick(pieces)}"]`, { timeout: 5000 }).then(() => true, () => false))) return false;
    const captures = await squares(".xq-pt.dest:has(.xq-piece)");
    const dests = captures.length ? captures : await squares(".xq-pt.dest");
    if (!dests.length) return false;
    // a redraw may land between the two clicks (a new view, the names): then try again next time
    return page.click(`.xq-pt.dest[data-square="${pick(dests)}"]`, { timeout: 5000 }).then(() => true, () => false);
  },
};
