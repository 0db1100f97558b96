// 连连看 by clicks: a pair of the view's legal pairs (read from the board's data-offers: the board
// itself marks none, as the game is played), its first tile then its second, and the pair's path
// must then be drawn; everybody plays at once, so every page moves whenever its board changed.
import { join } from "node:path";
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
/** The cells a page has sent removals for: empty from then on (a reshuffle moves tiles only over
 * the cells still full), so never clicked again, even while an older view still shows them
 * (the other player's move may come first). */
const sent = new WeakMap<Page, Set<string>>();
const shot = new WeakSet<Page>();

export const spec: GameSpec = {
  game: "lianliankan", room: "lianliankan.short", players: 2, midAfter: 10, limitMs: 150_000,
  async move(page) {
    // cells by name (data-cell), clicked by selector: the other player's moves redraw the board
    const cells = (sel: string) => page.$$eval(sel, (els) => els.map((e) => e.getAttribute("data-cell")!));
    const gone = sent.get(page) ?? new Set<string>();
    sent.set(page, gone);
    // the board shows no pairs (as the game is played): they are read from the root's data-offers
    const offers = JSON.parse((await page.getAttribute(".llk", "data-offers")) ?? "[]") as [string, string][];
    const open = offers.filter(([a, b]) => !gone.has(a) && !gone.has(b));
    if (!open.length) return false;
    const [first, second] = pick(open);
    const click = (cell: string) => page.click(`.llk-tile[data-cell="${cell}"]`, { timeout: 5000 }).then(() => true, () => false);
    // a tile picked before (an older view) is put down first: a click on it again unpicks it
    const before = await (await page.$(".llk-tile.picked"))?.getAttribute("data-cell");
    if (before && before !== first && !(await click(before))) return false;
    if (before !== first && !(await click(first))) return false;
    const paths = Number(await page.getAttribute(".llk", "data-paths"));
    if (!(await click(second))) return false;
    // the removal was sent with its path drawn over the board (data-paths counts them; the line
    // itself shows for under a second, too short to catch on a busy machine) — unless the board
    // changed between reading the pairs and the clicks (a reshuffle of a dead board): then it said
    // why beside the tile, and the next look tries again
    if (Number(await page.getAttribute(".llk", "data-paths")) === paths) {
      if (await page.$(".llk-tile .why")) return false;
      throw new Error(`a pair of the legal list was clicked (${first}, ${second}) and neither sent with its path nor refused`);
    }
    gone.add(first).add(second);
    if (!shot.has(page) && gone.size >= 12) {  // one picture of a path per page, to look at
      shot.add(page);
      const wide = (page.viewportSize()?.width ?? 0) > 640;
      const path = join(process.env.CHIEU_ARTIFACTS ?? "build/artifacts/web", `lianliankan-1-path-${wide ? "desktop" : "phone"}.png`);
      await page.screenshot({ path, fullPage: true }).catch(() => undefined);
    }
    return true;
  },
};
