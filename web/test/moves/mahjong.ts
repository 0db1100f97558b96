// Mahjong by clicks, reading what the board offers (data-offers: the view's legal list) and
// playing it as a player would: 胡 when offered; the 对王 pair; 杠 and 碰 when offered (fewer
// turns), else 过; on one's turn 报听 when it is offered and the page has made a few moves (the
// server then plays the drawn tiles, so the hand runs to its end; declared at once, a hand could end
// in three moves, before the mid-hand screenshot), else a tile picked in the hand and 打.
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

interface Offer { kind: string; tile?: string; declare?: number }
const TING = 2;
/** A page 报听s only after this many moves of its own (the mid-hand screenshot is at midAfter). */
const TING_AFTER = 3;
const made = new WeakMap<Page, number>();
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

/** Picks `tile` in the hand; false when the click could not be made (a newer view). */
async function choose(page: Page, tile: string): Promise<boolean> {
  const t = page.locator(`.mj-hand button.mj-tile[data-tile="${tile}"]`).first();
  if ((await t.getAttribute("aria-pressed")) === "true") return true;
  return t.click({ timeout: 5000 }).then(() => true, () => false);
}

const version = (page: Page) => page.getAttribute("#table .table", "data-version");

export const spec: GameSpec = {
  game: "mahjong", players: 2, midAfter: 6, limitMs: 200_000, refused: '.mj-hand button.mj-tile[aria-disabled="true"]',
  async move(page) {
    const v0 = await version(page);
    // the final click only on the view the choice was made on (a newer one: choose again)
    // (a click that waits more than 5 s: a newer view took the control away; choose again)
    const act = async (sel: string) => {
      if ((await version(page)) !== v0) return false;
      return page.locator(sel).first().click({ timeout: 5000 }).then(() => true, () => false);
    };
    const raw = await page.getAttribute(".mj", "data-offers");
    const offers: Offer[] = raw ? JSON.parse(raw) : [];
    if (!offers.length) return false;
    const has = (k: string) => offers.find((o) => o.kind === k);
    for (const kind of ["win", "pair", "gang", "peng", "pass"]) {
      if (!has(kind === "pair" ? "choosePair" : kind)) continue;
      return act(`.mj [data-act="${kind}"]:not([disabled])`);
    }
    const mine = made.get(page) ?? 0;
    const ting = offers.filter((o) => o.kind === "discard" && o.declare === TING);
    const plain = offers.filter((o) => o.kind === "discard" && o.declare !== TING && o.declare !== 3);
    const ok = ting.length && (mine >= TING_AFTER || !plain.length)
      ? (await choose(page, pick(ting).tile!)) && (await act('.mj [data-act="ting"]:not([disabled])'))
      : plain.length > 0 && (await choose(page, pick(plain).tile!)) && (await act('.mj [data-act="discard"]:not([disabled])'));
    if (ok) made.set(page, mine + 1);
    return ok;
  },
};
