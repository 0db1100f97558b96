// 连连看 by clicks: a tile the board lets pick (an enabled button), then one of the partners it
// marks for it (the legal pairs' other tiles), and the pair's path must then be drawn; everybody
// plays at once, so every page moves whenever its board changed.
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
    const pickedCell = async () => (await (await page.$(".llk-tile.picked"))?.getAttribute("data-cell")) ?? null;
    const picked = await pickedCell();
    if (picked && gone.has(picked)) return false;  // an old view: wait for the next
    const tiles = (await cells(".llk-grid button.llk-tile:not([disabled]):not(.picked)")).filter((c) => !gone.has(c));
    if (!tiles.length) return false;
    const click = (cell: string, cls: string) => page.click(`.llk-tile${cls}[data-cell="${cell}"]`, { timeout: 5000 }).then(() => true, () => false);
    if (picked === null && !(await click(pick(tiles), ":not([disabled])"))) return false;
    const first = await pickedCell();
    const partners = (await cells(".llk-grid button.llk-tile.partner")).filter((c) => !gone.has(c));
    if (!first || !partners.length) return false;
    const second = pick(partners);
    if (!(await click(second, ".partner"))) return false;
    gone.add(first).add(second);
    // the pair's path is drawn over the board (not caught: a removal without its line fails the hand)
    await page.waitForSelector(".llk-path polyline", { state: "attached", timeout: 2000 });
    if (!shot.has(page) && gone.size >= 12) {  // one picture of a path per page, to look at
      shot.add(page);
      const wide = (page.viewportSize()?.width ?? 0) > 640;
      const path = join(process.env.CHIEU_ARTIFACTS ?? "build/artifacts/web", `lianliankan-1-path-${wide ? "desktop" : "phone"}.png`);
      await page.screenshot({ path, fullPage: true }).catch(() => undefined);
    }
    return true;
  },
};
