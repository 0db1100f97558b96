// A dropped opponent shown on the seat, in words (issue 34): An (Vietnamese, desktop), Bình
// (Chinese, phone) and Carol (English, desktop) sit at a Phỏm table with Dũng, who closes his page
// before the hand. The table process behind this stack stands a seat up after a short idle time
// (the Python test's CHIEU_TABLE_IDLE_STAND_S). Each page must show, on Dũng's own seat, that his
// connection is lost with the seconds left, in its language; then the seat is free (stood up).
// Screenshots: presence-1-lost-<lang>-…png, presence-2-stood-vi-desktop.png.
import type { Browser, Page } from "playwright-core";
import { wordsFor } from "../../gen/chieu/words.js";
import { Harness, type Session } from "../harness.js";
import { seatAll, until, WEB, type SceneResult, pageErrors } from "./kit.js";

const seatChip = (seat: number) => `#table .table-seats [data-table-seat="${seat}"]`;

/** The words shown on a seat's chip, its presence kind, and the seconds its countdown shows. */
const onSeat = (page: Page, seat: number) => page.evaluate((sel) => {
  const chip = document.querySelector(sel);
  const p = chip?.querySelector(".seat-presence");
  return { chip: chip?.textContent ?? "", kind: p?.getAttribute("data-presence") ?? "", words: p?.textContent ?? "",
    clock: p?.querySelector("[data-deadline]")?.textContent ?? "", free: chip?.classList.contains("free") ?? false };
}, seatChip(seat));

export async function presence(browser: Browser, r: SceneResult): Promise<void> {
  const hn = new Harness(browser, WEB, process.env.CHIEU_ARTIFACTS ?? "build/artifacts/web");
  r.errors = hn.errors; r.overflow = hn.overflow; r.axe = hn.axe; r.screenshots = hn.screenshots;
  const an = await hn.open("An", "vi", false);
  const binh = await hn.open("Bình", "zh", true);
  const carol = await hn.open("Carol", "en", false);
  const dung = await hn.open("Dũng", "vi", false);
  const watchers: Session[] = [an, binh, carol];
  await seatAll(hn, "phom.points", "phom", an, [binh, carol, dung]);
  for (const s of watchers) await s.page.waitForSelector(`${seatChip(3)}:not(.free)`);
  for (const s of watchers) {  // everybody watches: nobody absent on any seat
    const seen = await onSeat(s.page, 3);
    if (seen.kind) throw new Error(`${s.name} sees Dũng ${seen.kind} before he leaves`);
  }
  const closedAt = Date.now();
  await dung.page.context().close();  // Dũng closes the page: his stream is gone
  const lost: Record<string, unknown> = {};
  for (const s of watchers) {
    const seen = await until(`${s.name} sees Dũng's lost connection on his seat`, async () => {
      const x = await onSeat(s.page, 3);
      return x.kind === "away" && /\d/.test(x.clock) ? x : undefined;
    });
    lost[s.lang] = { ...seen, expected: wordsFor("presence", "reconnecting", s.lang) };
    await hn.look(s, "presence-1-lost", s === an);
  }
  r.facts.lost = lost;
  r.facts.lostSeenMs = Date.now() - closedAt;
  for (const s of watchers) await until(`${s.name} sees Dũng stood up`, async () => (await onSeat(s.page, 3)).free, 40_000);
  r.facts.stoodMs = Date.now() - closedAt;
  r.facts.seatsAfter = await an.page.evaluate(() => document.querySelectorAll("#table .table-seats .chip:not(.free)").length);
  r.facts.leftExpected = Object.fromEntries(watchers.map((s) => [s.lang, wordsFor("left", "idle", s.lang)]));
  await hn.look(an, "presence-2-stood");
  r.errors = await pageErrors(hn, watchers);
}
