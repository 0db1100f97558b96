// Ô ăn quan by clicks: pick a square the board offers (a button.sq.playable), then a direction.
import { tabTo, type GameSpec } from "../harness.js";

export const spec: GameSpec = {
  game: "o_an_quan", room: "o_an_quan.coins.1", players: 2, midAfter: 6,
  refused: ".oaq button.sq.refused",
  // every square's stones drawn, as many as its count says (and as its number says)
  async inspect(page) {
    return page.$$eval(".oaq .sq[data-square]", (els) => els.flatMap((el) => {
      const n = Number(el.getAttribute("data-count"));
      const drawn = el.querySelectorAll(".stones .pebble").length;
      const written = Number(el.querySelector(".count")?.textContent ?? NaN);
      return drawn === n && written === n && n >= 0 ? [] : [`square ${el.getAttribute("data-square")}: ${n} stones, ${drawn} drawn, ${written} written`];
    }));
  },
  async move(page) {
    const squares = await page.$$(".oaq button.sq.playable");
    if (!squares.length) return false;
    const picked = await page.$(".oaq button.sq.picked");
    if (!picked) await squares[Math.floor(Math.random() * squares.length)]!.click();
    const dirs = await page.$$('.oaq [data-act^="sow-"]:not([disabled])');
    if (!dirs.length) return false;
    await dirs[Math.floor(Math.random() * dirs.length)]!.click();
    return true;
  },
  // by the keyboard: Tab to one's square, Enter; Tab to a direction, Enter
  async keys(page) {
    if (!(await page.$(".oaq button.sq.playable"))) return false;
    if (!(await page.$(".oaq button.sq.picked"))) {
      if (!(await tabTo(page, ".oaq button.sq.playable"))) return false;
      await page.keyboard.press("Enter");
    }
    if (!(await tabTo(page, '.oaq [data-act^="sow-"]:not([disabled])'))) return false;
    await page.keyboard.press("Enter");
    return true;
  },
};
