// 中国象棋 by clicks: on one's turn, a piece the board lets move (button.movable), then one of
// the destinations it marks, a capture first when one is offered; a draw offer is declined; after
// PLIES moves the side to move resigns (认输, then the confirmation), so the hand ends soon.
import type { GameSpec } from "../harness.js";

const PLIES = 24;
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
    await page.click(`.xq-pt[data-square="${pick(pieces)}"]`);
    const captures = await squares(".xq-pt.dest:has(.xq-piece)");
    const dests = captures.length ? captures : await squares(".xq-pt.dest");
    if (!dests.length) return false;
    await page.click(`.xq-pt[data-square="${pick(dests)}"]`);
    return true;
  },
};
