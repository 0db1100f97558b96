// 够级 by clicks, reading what the board offers (data-offers: the legal list; data-leads: the
// leads' two parts) as a player would: no 革命; 还贡 the first return offered; a lead of as many
// cards as the leads allow; an answer when one is offered (most often), else 不要 / 扣. A set is
// chosen by clicking its ranks in the hand as many times as it holds cards of each, then 出牌.
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

interface Offer { kind: string; cards?: string[] }
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

async function select(page: Page, cards: readonly string[]): Promise<void> {
  if (await page.$('.gj [data-act="clear"]')) await page.click('.gj [data-act="clear"]');
  const want = new Map<string, number>();
  for (const c of cards) want.set(c, (want.get(c) ?? 0) + 1);
  for (const [rank, n] of want) for (let i = 0; i < n; i++) await page.click(`.gj-hand [data-rank="${rank}"]`);
}

export const spec: GameSpec = {
  game: "gouji", room: "gouji.short", players: 6, midAfter: 12, limitMs: 240_000,
  async move(page) {
    const raw = await page.getAttribute(".gj", "data-offers");
    const offers: Offer[] = raw ? JSON.parse(raw) : [];
    const leadsRaw = await page.getAttribute(".gj", "data-leads");
    if (!offers.length && !leadsRaw) return false;
    const has = (k: string) => offers.filter((o) => o.kind === k);
    if (has("declineRevolution").length) { await page.click('.gj [data-act="decline"]'); return true; }
    const ret = has("returnCards")[0];
    if (ret) { await select(page, ret.cards!); await page.click('.gj [data-act="return"]:not([disabled])'); return true; }
    let set: string[] | undefined;
    if (leadsRaw) {
      const leads = JSON.parse(leadsRaw) as { wilds: string[][]; bases: string[][] };
      const longest = (xs: string[][]) => xs.reduce((a, b) => (b.length > a.length ? b : a), [] as string[]);
      set = [...longest(leads.wilds), ...longest(leads.bases)];
    } else {
      const answers = has("play");
      if (answers.length && Math.random() < 0.8) set = pick(answers).cards;
    }
    if (set?.length) { await select(page, set); await page.click('.gj [data-act="play"]:not([disabled])'); return true; }
    if (has("pass").length) { await page.click('.gj [data-act="pass"]'); return true; }
    return false;
  },
};
