// Mahjong's 硬扣 and 报听 by clicks. The test deals a hand (its server seed chosen in Python,
// tests/web/test_mahjong_browser.py) where, with every other move the same simple one (discard
// the drawn tile, pass every claim), one seat is offered 硬扣 and later the other 报听. Those
// other moves are played through each page's own session (node); the two declarations are
// clicked: the tile, then 硬扣 on An's page (Vietnamese, desktop) or 报听 on Bình's (Chinese,
// phone). Each declaration must show on both pages (the seat's tag), the declarer's waits on its
// own page, and the declarer's discard in its pond.
import { create } from "@bufbuild/protobuf";
import type { Browser, Page } from "playwright-core";
import { CommandSchema, Declare, Phase, type Command, type View } from "../../gen/chieu/games/mahjong/v1/mahjong_pb.js";
import type { Portal } from "../../src/client/index.js";
import { Harness, type Session } from "../harness.js";
import { allAt, OUT, pageErrors, portalOf, seatAll, until, versionOf, viewOf, WEB, type SceneResult } from "./kit.js";

type Discard = { tile: string; declare: Declare };
const discards = (v: View) => v.legal.filter((c) => c.command.case === "discard").map((c) => c.command.value as Discard);
const plain = (d: Discard) => d.declare === Declare.NONE || d.declare === Declare.UNSPECIFIED;

/** What a page shows of one seat: its tag (报听 / 硬扣), its pond. */
const seatOn = (page: Page, seat: number) => page.evaluate((s) => {
  const box = document.querySelector(`.mj-seat[data-seat="${s}"]`);
  return { tag: box?.querySelector(".tag.ting")?.textContent ?? "", pond: [...(box?.querySelectorAll(".mj-pond [data-tile]") ?? [])].map((e) => e.getAttribute("data-tile")) };
}, seat);

/** Clicks `tile` in the page's hand (unless picked already), then the declaration's button. */
async function declare(s: Session, tile: string, act: "ting" | "yingkou"): Promise<void> {
  const t = s.page.locator(`.mj-hand button.mj-tile[data-tile="${tile}"]`).first();
  if ((await t.getAttribute("aria-pressed")) !== "true") await t.click();
  await s.page.click(`.mj [data-act="${act}"]:not([disabled])`);
}

export async function mahjong(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, OUT);
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const an = await hn.open("An", "vi", false);
  const binh = await hn.open("Bình", "zh", true);
  const players = [an, binh];
  const pages = players.map((s) => s.page);
  const tableId = await seatAll(hn, "mahjong.short", "mahjong", an, [binh]);
  await an.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
  await an.page.click("#start");
  for (const p of pages) await p.waitForSelector('#table .table[data-status="playing"]');
  const seats = await Promise.all(players.map(async (s) => Number(await s.page.getAttribute("#table .table", "data-my-seat"))));
  r.facts.seats = seats;
  const bySeat = new Map<number, { s: Session; p: Portal }>();
  for (const [i, s] of players.entries()) bySeat.set(seats[i]!, { s, p: await portalOf(s.page) });
  const f = r.facts;
  let yk: { seat: number; tile: string; step: number } | undefined;
  let ting: { seat: number; tile: string; step: number } | undefined;
  // the moves, as the test's search played them: the first seat that may act does
  for (let step = 1; step <= 200 && !ting; step++) {
    let acted = false;
    for (let seat = 0; seat < 2 && !acted; seat++) {
      const { s, p } = bySeat.get(seat)!;
      const { table, view: v } = await viewOf<View>(p, tableId);
      if (!v.legal.length) continue;
      acted = true;
      if (v.legal.some((c) => c.command.case === "win")) throw new Error(`a win was offered at step ${step}, before both declarations`);
      const ds = discards(v);
      const yks = ds.filter((d) => d.declare === Declare.YING_KOU);
      const tings = ds.filter((d) => d.declare === Declare.TING);
      let entry: Command | undefined;
      if (v.phase === Phase.CLAIM) entry = v.legal.find((c) => c.command.case === "pass");
      else if (v.legal[0]!.command.case === "choosePair") entry = v.legal[0];
      else if (!yk && yks.length) {
        yk = { seat, tile: yks[0]!.tile, step };
        await s.page.waitForFunction((ver) => document.querySelector("#table .table")?.getAttribute("data-version") === ver, String(table.version));
        f.ykButtons = await s.page.$$eval(".mj .actions [data-act]", (els) => els.map((e) => e.getAttribute("data-act")));
        await declare(s, yk.tile, "yingkou");
      } else if (yk && !ting && seat !== yk.seat && tings.length) {
        ting = { seat, tile: tings[0]!.tile, step };
        await s.page.waitForFunction((ver) => document.querySelector("#table .table")?.getAttribute("data-version") === ver, String(table.version));
        f.tingButtons = await s.page.$$eval(".mj .actions [data-act]", (els) => els.map((e) => e.getAttribute("data-act")));
        await declare(s, ting.tile, "ting");
      } else {
        const ps = ds.filter(plain);
        const d = ps.find((x) => x.tile === v.drawn) ?? ps[0];
        entry = d ? v.legal.find((c) => c.command.case === "discard" && c.command.value.tile === d.tile && plain(c.command.value as Discard)) : v.legal[0];
      }
      if (entry) await p.act(tableId, CommandSchema, create(CommandSchema, entry));
      const now = (await viewOf<View>(p, tableId)).table.version;
      if (now === table.version) await until(`step ${step} acted`, async () => (await viewOf<View>(p, tableId)).table.version > table.version);
      if (yk?.step === step) await checkDeclared(hn, r, "yk", yk, players, seats, tableId, bySeat.get(seat)!.p);
      if (ting?.step === step) await checkDeclared(hn, r, "ting", ting, players, seats, tableId, bySeat.get(seat)!.p);
    }
    if (!acted) throw new Error(`nobody could act at step ${step}`);
  }
  f.ykAt = yk; f.tingAt = ting;
  r.errors = await pageErrors(hn, players);
}

/** After a declaration: the tag on both pages, the waits on the declarer's, its discard in the pond. */
async function checkDeclared(hn: Harness, r: SceneResult, key: string, d: { seat: number; tile: string },
  players: Session[], seats: number[], tableId: string, p: Portal): Promise<void> {
  const { table, view } = await viewOf<View>(p, tableId);
  await allAt(players.map((s) => s.page), table.version);
  const me = players[seats.indexOf(d.seat)]!;
  const other = players[seats.indexOf(1 - d.seat)]!;
  r.facts[key] = {
    ...d, declared: view.players.find((x) => Number(x.seat) === d.seat)?.declared,
    own: await seatOn(me.page, d.seat), other: await seatOn(other.page, d.seat),
    waits: await me.page.$$eval(".mj-center .mj-ind:last-child [data-tile]", (els) => els.map((e) => e.getAttribute("data-tile"))),
    waitsWord: await me.page.textContent(".mj-center .mj-ind:last-child small"),
    viewWaits: view.waits,
    version: String(await versionOf(me.page)),
  };
  await hn.look(me, `mahjong-${key}-declared`, true);
  await hn.look(other, `mahjong-${key}-seen`);
}
