// Đô Mi Nô by clicks: a playable tile (then an end, when it fits both), else draw, else pass.
import type { GameSpec } from "../harness.js";

export const spec: GameSpec = {
  game: "dominoes", players: 2, midAfter: 6, refused: '.dom .fan button.domino[aria-disabled="true"]',
  async move(page) {
    const tiles = await page.$$('.dom .fan button.domino[data-playable="1"]:not([disabled])');
    if (tiles.length) {
      await tiles[Math.floor(Math.random() * tiles.length)]!.click();
      const ends = await page.$$('.dom [data-act="left"], .dom [data-act="right"]');
      if (ends.length) await ends[Math.floor(Math.random() * ends.length)]!.click();
      return true;
    }
    for (const act of ["draw", "pass"]) {
      const b = await page.$(`.dom [data-act="${act}"]:not([disabled])`);
      if (b) { await b.click(); return true; }
    }
    return false;
  },
};
