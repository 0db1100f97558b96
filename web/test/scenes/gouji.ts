// 够级's own controls by clicks: 革命 and its refusal, 烧 (捎牌), 还贡. Six seats: An (seat 0,
// Vietnamese, desktop), Bình (1, Chinese, phone) and Chi (2, English, desktop) in pages, three
// guests playing from node (3–5). The test deals the first game (tests/web/test_gouji_controls_browser.py
// chooses its server seed) so that An and Bình hold no 2s and no jokers (革命 offered to both),
// Chi a joker and a single low card, seat 3 or 4 a 2 and a higher plain card.
//
// 1. 革命 window: An clicks 不革命, Bình 革命: Bình sits the game out, on every page.
// 2. The moves between the clicks are played from node through each seat's own session (the
//    pages' players too): An leads every set out (头科); Chi sheds all but one joker, one rank
//    and a single; seat X (3 or 4) beats the single and leads a lone 2, a 够级 set Chi may burn.
// 3. Chi clicks its joker and 烧: the burn shows on the others' pages; Chi goes out (二科) and
//    the three guests play to the end.
// 4. Game 2: 大落 pays 头科 (An) two cards and 二落 pays 二科 (Chi) one (进贡); An selects two
//    cards and clicks 还贡, Chi one: the payers hold what was returned, every hand has 36 again.
import { create } from "@bufbuild/protobuf";
import type { Browser, Page } from "playwright-core";
import { CommandSchema, PlaySchema, type Command, type View } from "../../gen/chieu/games/gouji/v1/gouji_pb.js";
import type { Portal } from "../../src/client/index.js";
import { Harness, type Session } from "../harness.js";
import { allAt, bot, botsCommit, gjSelect, OUT, pageErrors, portalOf, seatAll, until, versionOf, viewOf, WEB, type SceneResult } from "./kit.js";

const LOW = ["3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A", "2", "SJ", "BJ"];
const rank = (c: string) => LOW.indexOf(c);
const WILD = new Set(["2", "SJ", "BJ"]);
const highFirst = (cards: string[]) => [...cards].sort((a, b) => rank(b) - rank(a));
const same = (a: readonly string[], b: readonly string[]) => highFirst([...a]).join(" ") === highFirst([...b]).join(" ");
const without = (hand: readonly string[], cards: readonly string[]) => {
  const out = [...hand];
  for (const c of cards) { const i = out.indexOf(c); if (i >= 0) out.splice(i, 1); }
  return out;
};
const play = (cards: string[]): Command => create(CommandSchema, { command: { case: "play", value: create(PlaySchema, { cards: highFirst(cards) }) } });
const entry = (v: View, kind: NonNullable<Command["command"]["case"]>) => v.legal.find((c) => c.command.case === kind);

/** The longest lead the view offers: every wild card and the longest group of one rank. */
function longestLead(v: View): Command {
  const L = v.legalLeads!;
  const longest = (xs: { cards: string[] }[]) => xs.reduce((a, b) => (b.cards.length > a.length ? b.cards : a), [] as string[]);
  return play([...longest(L.wilds), ...longest(L.bases)]);
}

interface Seat { seat: number; name: string; portal: Portal; s?: Session }

export async function gouji(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, OUT);
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const f = r.facts;
  const t0 = Date.now();
  const lap = (k: string) => { r.timings[k] = (Date.now() - t0) / 1000; };
  const an = await hn.open("An", "vi", false);
  const binh = await hn.open("Bình", "zh", true);
  const chi = await hn.open("Chi", "en", false);
  const pages = [an.page, binh.page, chi.page];
  const bots = [await bot("Dũng"), await bot("Giang"), await bot("Hà")];
  const tableId = await seatAll(hn, "gouji.short", "gouji", an, [binh, chi], bots);
  const seatOf = new Map<string, number>();
  for (const x of (await bots[0]!.getTable(tableId)).seats) seatOf.set(x.playerId, Number(x.seat));
  const all: Seat[] = [];
  for (const [i, s] of [an, binh, chi].entries()) {
    const portal = await portalOf(s.page);
    all.push({ seat: seatOf.get(portal.playerId)!, name: s.name, portal, s });
    if (all[i]!.seat !== i) throw new Error(`${s.name} sits at seat ${all[i]!.seat}, the scene wants ${i}`);
  }
  for (const [i, b] of bots.entries()) all.push({ seat: seatOf.get(b.playerId)!, name: ["Dũng", "Giang", "Hà"][i]!, portal: b });
  all.sort((a, b) => a.seat - b.seat);
  if (all.some((x, i) => x.seat !== i)) throw new Error(`seats ${all.map((x) => x.seat)}`);
  const [A, B, C] = [0, 1, 2];
  const look = async (seat: number) => viewOf<View>(all[seat]!.portal, tableId);
  /** Clicks `act` on a page and waits until every page has the change. */
  const click = async (s: Session, act: string) => {
    const v0 = await versionOf(s.page);
    await s.page.click(`.gj [data-act="${act}"]:not([disabled])`);
    const v1 = await until(`${act} by ${s.name}`, async () => { const v = await versionOf(s.page); return v > v0 ? v : undefined; });
    await allAt(pages, v1);
  };
  const tagOf = (page: Page, seat: number) => page.$$eval(`.gj-seat[data-seat="${seat}"] .tag`, (els) => els.map((e) => e.textContent ?? ""));

  await botsCommit(bots, tableId);
  await an.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await an.page.click("#start");
  for (const p of pages) await p.waitForSelector('#table .table[data-status="playing"]');
  lap("started");

  // 1. 革命: offered to An and Bình; Chi's page names them as the seats still deciding
  for (const p of [an.page, binh.page]) await p.waitForSelector('.gj [data-act="revolt"]');
  f.revolution = (await look(C)).view.revolution.map(Number);
  f.chiRevButtons = await chi.page.$$eval('.gj [data-act="revolt"], .gj [data-act="decline"]', (els) => els.length);
  f.chiHint = await chi.page.textContent(".gj .hint");
  f.binhHint = await binh.page.textContent(".gj .hint");
  await hn.look(binh, "gouji-revolution-window", true);
  await click(an, "decline");
  f.anButtonsAfterDecline = await an.page.$$eval('.gj [data-act="revolt"], .gj [data-act="decline"]', (els) => els.length);
  await click(binh, "revolt");
  const afterRev = (await look(C)).view;
  f.sittingOut = Number(afterRev.sittingOut);
  f.phaseAfterRevolution = afterRev.phase;
  f.binhTagOnAn = await tagOf(an.page, B);
  f.binhTagOnChi = await tagOf(chi.page, B);
  f.binhTagOwn = await tagOf(binh.page, B);
  await hn.look(an, "gouji-revolution-done", true);
  lap("revolution");

  // the moves between the clicks, from node: the seat to act plays `choose`'s move until `done`
  let steps = 0;
  const drive = async (what: string, done: (v: View) => boolean, choose: (seat: number, v: View) => Command | undefined) => {
    let v = (await look(3)).view;
    for (let i = 0; !done(v); i++) {
      if (i > 600 || v.phase !== "play") throw new Error(`${what}: stuck (phase ${v.phase}, step ${i})`);
      const seat = Number(v.toAct);
      const mine = (await look(seat)).view;
      const cmd = choose(seat, mine);
      if (!cmd) throw new Error(`${what}: no move for seat ${seat} (${JSON.stringify(mine.legal.map((c) => c.command.case))})`);
      await all[seat]!.portal.act(tableId, CommandSchema, cmd);
      steps++;
      v = (await look(3)).view;
    }
    return v;
  };
  const pass = (v: View) => entry(v, "pass");
  const lowestSingle = (v: View) => {
    const b = v.legalLeads!.bases.filter((x) => x.cards.length === 1).sort((x, y) => rank(x.cards[0]!) - rank(y.cards[0]!))[0];
    return b ? play(b.cards) : longestLead(v);
  };

  // 2a. An leads every set out while the others pass: 头科
  await drive("An goes out", (v) => Number(v.places[A]) === 1, (seat, v) => {
    if (v.leading) return seat === A ? longestLead(v) : lowestSingle(v);
    if (seat === A) return v.legal.find((c) => c.command.case === "play") ?? pass(v);
    return pass(v);
  });
  lap("anOut");
  // 2b. Chi keeps a joker, one rank and a single q that seat X beats; X then leads a lone 2
  const chiHand = (await look(C)).view.hand;
  const J = chiHand.includes("SJ") ? "SJ" : "BJ";
  let plan: { q: string; X: number; beat: string } | undefined;
  for (const q of LOW.slice(0, 12).filter((c) => chiHand.filter((x) => x === c).length === 1)) {
    for (const X of [3, 4]) {
      const h = (await look(X)).view.hand;
      const beat = h.filter((c) => !WILD.has(c) && rank(c) > rank(q)).sort((a, b) => rank(a) - rank(b))[0];
      if (h.includes("2") && beat) { plan = { q, X, beat }; break; }
    }
    if (plan) break;
  }
  if (!plan) throw new Error(`no plan for the burn: Chi holds ${chiHand.join(" ")}`);
  const { q, X, beat } = plan;
  const keepRank = LOW.slice(0, 12).filter((c) => c !== q && chiHand.includes(c)).at(-1)!;
  f.plan = { J, q, X, beat, keepRank };
  await drive("Chi sheds", (v) => Number(v.topOwner) === X && same(v.top, ["2"]), (seat, v) => {
    if (seat === C && v.leading) {
      const rest = without(v.hand, [J, q]).filter((c) => c !== keepRank);
      if (!rest.length) return play([q]);
      const wilds = rest.filter((c) => WILD.has(c));
      const low = rest.filter((c) => !WILD.has(c)).sort((a, b) => rank(a) - rank(b))[0];
      return play([...wilds, ...(low ? rest.filter((c) => c === low) : [])]);
    }
    if (seat === X && v.leading) return play(["2"]);
    if (seat === X && Number(v.topOwner) === C && same(v.top, [q])) return play([beat]);
    if (v.leading) return undefined;
    return pass(v);
  });
  lap("shed");

  // 3. 烧: Chi's page offers to burn the lone 2 with the joker; Chi clicks the joker, then 烧
  await chi.page.waitForSelector('.gj [data-act="burn"]');
  const offers = JSON.parse((await chi.page.getAttribute(".gj", "data-offers")) ?? "[]") as { kind: string; cards?: string[] }[];
  f.burnOffers = offers.filter((o) => o.kind === "burn").map((o) => o.cards);
  f.chiHandBeforeBurn = (await look(C)).view.hand;
  f.burnDisabledBeforePick = await chi.page.isDisabled('.gj [data-act="burn"]');
  await gjSelect(chi.page, [J]);
  await hn.look(chi, "gouji-burn-picked");
  await click(chi, "burn");
  const burnt = (await look(A)).view;
  f.burning = burnt.burning.map(Number);
  f.topAfterBurn = burnt.top;
  f.topOwnerAfterBurn = Number(burnt.topOwner);
  f.burnTagOnAn = await tagOf(an.page, C);
  f.burnTagOnBinh = await tagOf(binh.page, C);
  f.topOnAn = await an.page.textContent(".gj-middle .gj-label");
  await hn.look(an, "gouji-burn-seen", true);
  await hn.look(binh, "gouji-burn-seen");
  lap("burn");
  // the rest of game 1: leads of the longest set, every answer a pass
  const end1 = await drive("game 1 ends", (v) => v.phase === "over", (_, v) => (v.leading ? longestLead(v) : pass(v)));
  const places1 = end1.places.map(Number);
  f.places1 = places1;
  f.steps = steps;
  lap("game1");

  // 4. game 2: 进贡 to 头科 (An, 2 cards) and 二科 (Chi, 1 card), then 还贡 by clicks
  const daluo = places1.indexOf(6), erluo = places1.indexOf(5);
  await botsCommit(bots, tableId);
  await an.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await an.page.click("#start");
  await an.page.waitForSelector('.gj [data-act="return"]', { timeout: 15_000 });
  await chi.page.waitForSelector('.gj [data-act="return"]', { timeout: 15_000 });
  const tribute = async (s: Session, seat: number, payer: number, n: number, key: string) => {
    const mine = (await look(seat)).view;
    const before = (await look(payer)).view.hand;
    const cards = mine.hand.slice(-n);  // the lowest n (a hand is written highest first)
    const offered = mine.legal.some((c) => c.command.case === "returnCards" && same(c.command.value.cards, cards));
    const hint = await s.page.textContent(".gj .hint");
    const heldBefore = await s.page.$$eval(".gj-hand [data-held]", (els) => els.reduce((n, e) => n + Number(e.getAttribute("data-held")), 0));
    await gjSelect(s.page, cards);
    if (key === "an") await hn.look(s, "gouji-tribute-return", true);
    await click(s, "return");
    const after = (await look(payer)).view.hand;
    const own = (await look(seat)).view;
    f[key] = {
      phase: mine.phase, owe: Number(mine.oweReturn), handBefore: mine.hand.length, heldBefore, cards, offered, hint,
      handAfter: own.hand.length, oweAfter: Number(own.oweReturn),
      heldAfter: await s.page.$$eval(".gj-hand [data-held]", (els) => els.reduce((n, e) => n + Number(e.getAttribute("data-held")), 0)),
      payer, payerBefore: before.length, payerAfter: after.length, payerGot: same(without(after, before), cards) && without(before, after).length === 0,
    };
  };
  await tribute(an, A, daluo, 2, "an");
  await tribute(chi, C, erluo, 1, "chi");
  const g2 = (await look(A)).view;
  f.phaseAfterReturns = g2.phase;
  f.counts = await an.page.$$eval(".gj-seat [data-count]", (els) => els.map((e) => e.textContent ?? ""));
  await hn.look(an, "gouji-tribute-done");
  lap("tribute");
  r.errors = await pageErrors(hn, [an, binh, chi]);
}
