// Phỏm by clicks: reads what the board offers (data-offers: the view's legal list) and plays it
// the way a player would — Ù; lay a phỏm (select its cards, Lay); send (select the card, click
// the phỏm); eat (select the partners, Eat); draw; discard (select the card, Discard).
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

interface Offer { kind: string; cards?: string[]; partners?: string[]; card?: string; target?: string }

async function select(page: Page, cards: readonly string[]): Promise<void> {
  for (const c of await page.$$eval('.phom .fan .pcard[aria-pressed="true"]', (els) => els.map((e) => e.getAttribute("data-card")!)))
    if (!cards.includes(c)) await click(page, `.phom .fan .pcard[data-card="${c}"]`);
  for (const c of cards)
    if ((await page.getAttribute(`.phom .fan .pcard[data-card="${c}"]`, "aria-pressed", { timeout: 5000 })
      .catch(() => null)) !== "true") await click(page, `.phom .fan .pcard[data-card="${c}"]`);
}

const played = new WeakMap<Page, number>();

/** Click a control, giving up after 5 s (a newer view may have disabled it: the clock played for
 * this seat meanwhile): false, and the player looks again. */
async function click(page: Page, selector: string): Promise<boolean> {
  return page.locator(selector).first().click({ timeout: 5000 }).then(() => true, () => false);
}

export const spec: GameSpec = {
  game: "phom", players: 3, midAfter: 8, limitMs: 200_000,
  refused: '.phom .fan button.pcard[aria-disabled="true"], .phom .eatable button.pcard[aria-disabled="true"]',
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
      if (n >= 4) return click(page, '[data-act="u"]');
      if (offers.length === 1) return false;  // let the Ù window pass
    }
    played.set(page, n + 1);
    const lay = first("lay");
    if (lay) { await select(page, lay.cards!); return click(page, '[data-act="lay"]:not([disabled])'); }
    const send = first("send");
    if (send) {
      await select(page, [send.card!]);
      return click(page, `.phom button.meld:has([data-card="${send.target}"])`);
    }
    const eats = offers.filter((o) => o.kind === "eat");
    if (eats.length) { await select(page, pick(eats).partners ?? []); return click(page, '[data-act="eat"]:not([disabled])'); }
    if (first("draw")) { await select(page, []); return click(page, '[data-act="draw"]:not([disabled])'); }
    const discards = offers.filter((o) => o.kind === "discard");
    if (discards.length) { await select(page, [pick(discards).card!]); return click(page, '[data-act="discard"]:not([disabled])'); }
    return false;
  },
};
