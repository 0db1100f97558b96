// 连连看 by clicks: a tile the board lets pick (an enabled button), then one of the partners it
// marks for it (the legal pairs' other tiles); everybody plays at once, so every page moves
// whenever its board changed.
import type { GameSpec } from "../harness.js";

const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

export const spec: GameSpec = {
  game: "lianliankan", room: "lianliankan.short", players: 2, midAfter: 10, limitMs: 150_000,
  async move(page) {
    // cells by name (data-cell), clicked by selector: the other player's moves redraw the board
    const cells = (sel: string) => page.$$eval(sel, (els) => els.map((e) => e.getAttribute("data-cell")!));
    const tiles = await cells(".llk-grid button.llk-tile:not([disabled]):not(.picked)");
    if (!tiles.length) return false;
    const click = (cell: string, cls: string) => page.click(`.llk-tile${cls}[data-cell="${cell}"]`, { timeout: 5000 }).then(() => true, () => false);
    if (await page.$(".llk-tile.picked") === null && !(await click(pick(tiles), ":not([disabled])"))) return false;
    const partners = await cells(".llk-grid button.llk-tile.partner");
    if (!partners.length) return false;
    return click(pick(partners), ".partner");
  },
};
