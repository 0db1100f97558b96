// Đô Mi Nô's double blank and the seat badges' letters, looked at: a hand dealt so that An
// (Vietnamese, desktop) leads and holds [0|0] and a tile with a six. Before the lead, An's hand
// (a six lies in two rows of three along a horizontal tile); An clicks [0|0] (an end when asked);
// both pages then show it across the line with its two blank halves drawn engraved. Each page's own
// badge carries its player's initial, not the first letter of "bạn" / "你".
import type { Browser, Page } from "playwright-core";
import { Harness } from "../harness.js";
import { allAt, OUT, pageErrors, seatAll, until, versionOf, WEB, type SceneResult } from "./kit.js";

/** What a page draws of a domino: its classes, its halves' classes and where its pips are. */
const drawn = (page: Page, sel: string) => page.$$eval(sel, (els) => els.map((e) => ({
  tile: e.getAttribute("data-tile"), cls: e.className,
  halves: [...e.querySelectorAll(".half")].map((x) => ({ cls: x.className, pips: [...x.children].flatMap((p, i) => (p.classList.contains("pip") ? [i] : [])) })),
  w: Math.round(e.getBoundingClientRect().width), h: Math.round(e.getBoundingClientRect().height),
})));

const avatar = (page: Page) => page.$$eval(".seat-badge", (els) => els.map((e) => ({
  me: e.classList.contains("me"), letter: e.querySelector(".avatar")?.textContent ?? "", name: e.querySelector(".name")?.textContent ?? "" })));

export async function dominoes(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, OUT);
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const an = await hn.open("An", "vi", false);
  const binh = await hn.open("Bình", "zh", true);
  const pages = [an.page, binh.page];
  await seatAll(hn, "dominoes.points", "dominoes", an, [binh]);
  await an.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await an.page.click("#start");
  for (const p of pages) await p.waitForSelector('#table .table[data-status="playing"]');
  const f = r.facts;
  await an.page.waitForSelector('.dom .fan button.domino[data-tile="0|0"][data-playable="1"]');
  f.hand = await drawn(an.page, ".dom .fan .domino");
  f.avatarsAn = await avatar(an.page);
  f.avatarsBinh = await avatar(binh.page);
  await hn.look(an, "dominoes-blank-0-hand", true);
  const v0 = await versionOf(an.page);
  await an.page.click('.dom .fan button.domino[data-tile="0|0"]');
  const end = await an.page.$('.dom [data-act="left"], .dom [data-act="right"]');
  if (end) await end.click();
  const v1 = await until("the lead", async () => { const v = await versionOf(an.page); return v > v0 ? v : undefined; });
  await allAt(pages, v1);
  f.lineAn = await drawn(an.page, ".dom-line .domino");
  f.lineBinh = await drawn(binh.page, ".dom-line .domino");
  await hn.look(an, "dominoes-blank-1-line", true);
  await hn.look(binh, "dominoes-blank-1-line");
  r.errors = await pageErrors(hn, [an, binh]);
}
