// Phỏm by clicks: reads what the board offers (data-offers: the view's legal list) and plays it
// the way a player would — Ù; lay a phỏm (select its cards, Lay); send (select the card, click
// the phỏm); eat (select the partners, Eat); draw; discard (select the card, Discard).
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

interface Offer { kind: string; cards?: string[]; partners?: string[]; card?: string; target?: string }

async function select(page: Page, cards: readonly string[]): Promise<void> {
  for (const c of await page.$$eval('.phom .fan .pcard[aria-pressed="true"]', (els) => els.map((e) => e.getAttribute("data-card")!)))
    if (!cards.includes(c)) await page.click(`.phom .fan .pcard[data-card="${c}"]`);
  for (const c of cards)
    if ((await page.getAttribute(`.phom .fan .pcard[data-card="${c}"]`, "aria-pressed")) !== "true") await page.click(`.phom .fan .pcard[data-card="${c}"]`);
}

const played = new WeakMap<Page, number>();

export const spec: GameSpec = {
  game: "phom", players: 3, midAfter: 8, limitMs: 200_000,
  async move(page) {
    const raw = await page.getAttribute(".phom", "data-offers");
    const offers: Offer[] = raw ? JSON.parse(raw) : [];
    if (!offers.length) return false;
    const first = (k: string) => offers.find((o) => o.kind === k);
    const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;
    // Ù ends the hand at once: claimed only once this page has played a few moves (a deal with
    // no cạ, Ù khan, comes often enough that claiming it at once left no hand to look at)
    const n = played.get(page) ?? 0;
    if (first("claimU")) {
      if (n >= 4) { await page.click('[data-act="u"]'); return true; }
      if (offers.length === 1) return false;  // let the Ù window pass
    }
    played.set(page, n + 1);
    const lay = first("lay");
    if (lay) { await select(page, lay.cards!); await page.click('[data-act="lay"]:not([disabled])'); return true; }
    const send = first("send");
    if (send) {
      await select(page, [send.card!]);
      await page.click(`.phom button.meld:has([data-card="${send.target}"])`);
      return true;
    }
    const eats = offers.filter((o) => o.kind === "eat");
    if (eats.length) { await select(page, pick(eats).partners ?? []); await page.click('[data-act="eat"]:not([disabled])'); return true; }
    if (first("draw")) { await select(page, []); await page.click('[data-act="draw"]:not([disabled])'); return true; }
    const discards = offers.filter((o) => o.kind === "discard");
    if (discards.length) { await select(page, [pick(discards).card!]); await page.click('[data-act="discard"]:not([disabled])'); return true; }
    return false;
  },
};
