// 够级 by clicks, reading what the board offers (data-offers: the legal list; data-leads: the
// leads' two parts) as a player would: no 革命; 还贡 the first return offered; a lead of as many
// cards as the leads allow; an answer now and then when one is offered, else 不要 / 扣 (the leader
// sheds its cards fast). A set is chosen by clicking its ranks in the hand (a first click takes all
// of a rank, each next one fewer), then 出牌.
import type { Page } from "playwright-core";
import type { GameSpec } from "../harness.js";

interface Offer { kind: string; cards?: string[] }
const pick = <T>(xs: T[]) => xs[Math.floor(Math.random() * xs.length)]!;

/** A click that gives up after 5 s (a redraw moved the target): the move is tried again on the
 * next loop, from a clear selection. */
const click = (page: Page, sel: string) => page.click(sel, { timeout: 5000 });

async function select(page: Page, cards: readonly string[]): Promise<void> {
  if (await page.$('.gj [data-act="clear"]')) await click(page, '.gj [data-act="clear"]');
  const want = new Map<string, number>();
  for (const c of cards) want.set(c, (want.get(c) ?? 0) + 1);
  // a rank's first click takes all its cards, each next click one fewer
  for (const [rank, n] of want) {
    const held = Number(await page.getAttribute(`.gj-hand [data-rank="${rank}"]`, "data-held"));
    for (let i = 0; i <= held - n; i++) await click(page, `.gj-hand [data-rank="${rank}"]`);
  }
}

const version = (page: Page) => page.getAttribute("#table .table", "data-version");

export const spec: GameSpec = {
  game: "gouji", room: "gouji.short", players: 6, midAfter: 12, limitMs: 240_000, refused: '.gj-hand button[aria-disabled="true"]',
  async move(page) {
    return play(page).catch(() => false);
  },
};

async function play(page: Page): Promise<boolean> {
  const v0 = await version(page);
  // the final click only on the view the choice was made on (a newer one: choose again)
  const act = async (sel: string) => {
    if ((await version(page)) !== v0) return false;
    await click(page, sel);
    return true;
  };
  const raw = await page.getAttribute(".gj", "data-offers");
  const offers: Offer[] = raw ? JSON.parse(raw) : [];
  const leadsRaw = await page.getAttribute(".gj", "data-leads");
  if (!offers.length && !leadsRaw) return false;
  const has = (k: string) => offers.filter((o) => o.kind === k);
  if (has("declineRevolution").length) return act('.gj [data-act="decline"]');
  const ret = has("returnCards")[0];
  if (ret) { await select(page, ret.cards!); return act('.gj [data-act="return"]:not([disabled])'); }
  let set: string[] | undefined;
  if (leadsRaw) {
    const leads = JSON.parse(leadsRaw) as { wilds: string[][]; bases: string[][] };
    const longest = (xs: string[][]) => xs.reduce((a, b) => (b.length > a.length ? b : a), [] as string[]);
    set = [...longest(leads.wilds), ...longest(leads.bases)];
  } else {
    const answers = has("play");
    if (answers.length && Math.random() < 0.3) set = pick(answers).cards;
  }
  if (set?.length) { await select(page, set); return act('.gj [data-act="play"]:not([disabled])'); }
  if (has("pass").length) return act('.gj [data-act="pass"]');
  return false;
}
