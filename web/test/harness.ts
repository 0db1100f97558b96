// The reusable browser harness: 2–6 headless Chromium sessions (Debian's chromium, driven by
// playwright-core) sign in, open a game's room by clicks, one opens a table and the others sit
// at it from the room's live list, a spectator watches, and the players play one whole hand by
// clicks only, each with the game's "one move by clicks" function (test/moves/<key>.ts).
// Sessions differ in screen size and language (a desktop 1280×800, a phone 375×667 and, from the
// fourth player on, a phone held sideways 667×375; vi / zh / en), so one hand covers the sizes and
// all three languages; every phone player's first screen is also measured turned sideways. Along the way: no page may
// overflow horizontally, axe-core may find no serious or critical violation, no page error and
// no CSP refusal may happen; screenshots of the table mid-hand and at the end are kept.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { join } from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { HAN, NATIVE_TERMS } from "../src/app/i18n/native.js";

/** One move by clicks on `page` when this page's player may act now; true when it acted. Read
 * what the board offers from the DOM (controls that are enabled, data-* attributes), never a rule. */
export type Move = (page: Page) => Promise<boolean>;

export interface GameSpec {
  /** The game's key (gen/chieu/games/registry.ts). */
  game: string;
  /** The room to play in (default `<game>.points`). */
  room?: string;
  /** Players at the table (default 2). */
  players?: number;
  move: Move;
  /** Optionally, one move by the keyboard alone (Tab, arrows, Enter): played once, by the first
   * player, to show the board is playable without a mouse. */
  keys?: Move;
  /** The screenshot "mid-hand" is taken after this many moves (default 6; at the end when the
   * hand is over sooner). */
  midAfter?: number;
  /** The longest the hand may take, ms (default 150 s). */
  limitMs?: number;
  /** Pieces the board refuses now (a selector): off its turn a player clicks one, and a why
   * bubble ([data-why]) must say why in the page's language (a few times per player). */
  refused?: string;
  /** What is wrong with the board drawn on `page` (e.g. stones drawn ≠ the count): looked at
   * before moves and at the end, on every page. */
  inspect?: (page: Page) => Promise<string[]>;
}

export interface Session { page: Page; name: string; lang: string; phone: boolean; landscape?: boolean; role: "player" | "spectator" }

export interface HandResult {
  ok: boolean; game: string; moves: number; error?: string;
  outcome?: string | null; payments?: string[]; keyboard?: boolean;
  fairness?: { commitment: string; seed: string; next: string };
  coinsBefore?: string[]; coinsAfter?: string[];
  finalVersion?: string | null; spectatorSaw?: string | null;
  /** At the end, on the spectator's page: cards or tiles of other seats laid open (Phỏm's
   * remaining cards, mahjong's concealed hands) by seat, and the wall's end shown (mahjong). */
  revealed?: { seats: Record<string, number>; wallLeft: number };
  overflow: string[]; axe: string[]; errors: string[]; screenshots: string[];
  /** Phone screens (upright and turned sideways) with something needed for play below the fold,
   * and how many were measured. */
  fold: string[]; folds: number; hanzi: string[];
  /** Screens where a seat overlaps the dock, the centre or another seat, or a text of the dock is
   * covered (clashes), and how many were measured. */
  clash: string[]; clashes: number;
  sessions: { name: string; lang: string; phone: boolean; landscape: boolean; role: string }[];
  /** Seconds spent in each part (setup, play, the end's checks). */
  timings: Record<string, number>;
  /** Refused clicks (spec.refused) and the why each page showed; those that showed none. */
  whys: { name: string; lang: string; text: string }[]; whyMissing: string[];
  /** Why refused clicks were not tried or not judged ("pending", "none", "unclicked", "redrawn"), counted. */
  whySkipped: Record<string, number>;
  /** Per page: pieces a move's result animated (data-fx) as they were drawn, and how many had an
   * animation running (the spectator's page asks for reduced motion: none there). */
  fx: Record<string, { n: number; animated: number; reduced: boolean }>;
  /** spec.inspect's findings. */
  drawn: string[];
}

/** Counts on `page` the pieces drawn with a move's animation (data-fx), and those animated; and
 * notes every why bubble drawn (data-why), so a short one is seen on a slow machine too. */
async function watchFx(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = window as unknown as { __fx: { n: number; animated: number; whys: string[] } };
    w.__fx = { n: 0, animated: 0, whys: [] };
    new MutationObserver((ms) => {
      for (const m of ms) for (const node of m.addedNodes) {
        if (!(node instanceof HTMLElement)) continue;
        for (const el of [node, ...node.querySelectorAll<HTMLElement>("[data-fx], [data-why]")]) {
          if (el.dataset.why !== undefined) w.__fx.whys.push(el.textContent ?? "");
          if (!el.dataset.fx) continue;
          w.__fx.n++;
          if (getComputedStyle(el).animationName !== "none") w.__fx.animated++;
        }
      }
    }).observe(document.body, { childList: true, subtree: true });
  });
}

const LAYOUTS = [
  { lang: "vi", phone: false }, { lang: "zh", phone: true }, { lang: "en", phone: false },
  { lang: "en", phone: true, landscape: true }, { lang: "vi", phone: true }, { lang: "zh", phone: false }, { lang: "vi", phone: false },
];
/** A phone upright and turned sideways. */
export const PHONE = { width: 375, height: 667 }, SIDEWAYS = { width: 667, height: 375 };

/** Turns the phone: the new size, then two frames, so a board that redraws when the screen turns
 * (连连看 upright ↔ wide) has redrawn before anything is measured or clicked. */
async function turn(page: Page, size: { width: number; height: number }): Promise<void> {
  await page.setViewportSize(size);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}
const NAMES = ["An", "Bình", "Chi", "Dũng", "Giang", "Hà", "Khoa"];
const LOCALE: Record<string, string> = { vi: "vi-VN", zh: "zh-CN", en: "en-US" };

export async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHIEU_CHROMIUM ?? "/usr/bin/chromium", headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
      "--disable-sync", "--no-first-run", "--font-render-hinting=none"],
  });
}

/** Presses Tab until the focused element matches `selector` (at most `max` times); whether it did. */
export async function tabTo(page: Page, selector: string, max = 80): Promise<boolean> {
  for (let i = 0; i < max; i++) {
    if (await page.evaluate((sel) => document.activeElement?.matches(sel) ?? false, selector)) return true;
    await page.keyboard.press("Tab");
  }
  return false;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
let axeSource: string | undefined;

/** Runs axe-core on the page; its serious and critical violations as "id: target". */
export async function axe(page: Page): Promise<string[]> {
  axeSource ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  // a why bubble gone first (1.4 s): it is aria-hidden (the live region says it), but axe reads its
  // words as the piece's visible label (label-content-name-mismatch)
  await page.waitForFunction(() => !document.querySelector("[data-why]"), undefined, { timeout: 3000 }).catch(() => undefined);
  // a move's animation (≤ 300 ms) finished first: axe reads a piece fading in as low contrast
  await page.evaluate(() => Promise.race([Promise.all(document.getAnimations().map((a) => a.finished.catch(() => undefined))),
    new Promise((r) => setTimeout(r, 2000))]));
  // evaluated through the DevTools protocol: the page's CSP (no inline script) does not apply
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const r = await (window as any).axe.run(document, { resultTypes: ["violations"] });
    return r.violations.filter((v: any) => v.impact === "serious" || v.impact === "critical")
      .flatMap((v: any) => v.nodes.slice(0, 3).map((n: any) => `${v.id}: ${n.target.join(" ")}`));
  });
}

/** Whether the page is wider than its screen (a horizontal scroll bar). */
export async function overflows(page: Page): Promise<boolean> {
  return page.evaluate(() => document.documentElement.scrollWidth > document.documentElement.clientWidth + 1);
}

/**
 * What a phone player needs for play that is not on the first screen: scrolled to the top, every
 * opponent's seat, one's own hand and dock (elements with data-zone) and every offered action
 * (an enabled [data-act]) must lie inside the viewport, as "what top–bottom" strings.
 */
export async function belowFold(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    window.scrollTo(0, 0);
    const vw = window.innerWidth, vh = window.innerHeight, out: string[] = [];
    const els = document.querySelectorAll<HTMLElement>("#table [data-zone], #table [data-act]:not([disabled])");
    for (const el of els) {
      const r = el.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) continue;
      if (r.top < -1 || r.left < -1 || r.bottom > vh + 1 || r.right > vw + 1) {
        const what = el.dataset.zone ? `${el.dataset.zone}${el.dataset.seat ? `:${el.dataset.seat}` : ""}` : `act:${el.dataset.act}`;
        out.push(`${what} ${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)}`);
      }
    }
    return out;
  });
}

/**
 * What lies on what at a table, scrolled to the top: a seat of the ring (.felt > .ring > *) that
 * overlaps the dock, the centre or another seat, and a text of the dock or of the table's title
 * line that something else is drawn over (the element at its middle is not inside it: a seat, a
 * toast, the page's bar), as "what: how" strings. Holds at every size.
 */
export async function clashes(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    window.scrollTo(0, 0);
    const out: string[] = [];
    // the board's root: a .felt (the card and tile games) or a board of its own (象棋, Ô ăn quan, 连连看)
    const felt = document.querySelector<HTMLElement>("#table .board > *") ?? document.createElement("div");
    const vh = window.innerHeight, vw = window.innerWidth;
    const cut = (a: DOMRect, b: DOMRect) => Math.min(a.right, b.right) - Math.max(a.left, b.left) > 2 && Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top) > 2;
    const at = (r: DOMRect) => `${Math.round(r.left)},${Math.round(r.top)}–${Math.round(r.right)},${Math.round(r.bottom)}`;
    const dock = felt.querySelector<HTMLElement>(".dock");
    const center = felt.querySelector<HTMLElement>(":scope > .center") ?? felt.querySelector<HTMLElement>('[data-zone="board"]');
    const seats = [...felt.querySelectorAll<HTMLElement>(".ring > *")];
    const others: [string, HTMLElement | null][] = [["dock", dock], ["centre", center]];
    seats.forEach((seat, i) => {
      const r = seat.getBoundingClientRect();
      if (r.width === 0 || r.height === 0) return;
      for (const [what, el] of [...others, ...seats.slice(i + 1).map((x, j) => [`seat ${i + j + 2}`, x] as [string, HTMLElement])]) {
        const o = el?.getBoundingClientRect();
        if (o && o.width > 0 && cut(r, o)) out.push(`seat ${i + 1} ${at(r)} on ${what} ${at(o)}`);
      }
    });
    // hit-tested as drawn: a board waiting for its command's answer takes no pointer (#table.pending)
    const pending = [...document.querySelectorAll<HTMLElement>("#table.pending .board")];
    for (const el of pending) el.style.pointerEvents = "auto";
    // the dock's texts and the table's title line (a toast once lay over it on a phone)
    for (const [zone, root] of [["dock", dock], ["title", document.querySelector<HTMLElement>("#table .table-top")]] as const) {
      if (!root) continue;
      const walk = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      for (let n = walk.nextNode(); n; n = walk.nextNode()) {
        if (!(n.textContent ?? "").trim() || !n.parentElement || n.parentElement.closest(".sr, [aria-hidden=true] .rank")) continue;
        const range = document.createRange();
        range.selectNodeContents(n);
        for (const r of range.getClientRects()) {
          const x = r.left + r.width / 2, y = r.top + r.height / 2;
          if (r.width < 2 || r.height < 2 || x < 0 || y < 0 || x > vw || y > vh) continue;
          const top = document.elementFromPoint(x, y);
          if (top && !root.contains(top)) {
            const who = top.closest<HTMLElement>("[data-zone], .toast, header, [class]");
            out.push(`${zone} text "${(n.textContent ?? "").trim().slice(0, 20)}" ${at(r)} under ${who?.dataset.zone ?? who?.className ?? top.tagName}`);
          }
        }
      }
    }
    for (const el of pending) el.style.pointerEvents = "";
    return out;
  });
}

/**
 * Hanzi on a Vietnamese or English page outside the native game terms (src/app/i18n/native.ts):
 * every text node of the page, but those under [data-native] (pieces, tile faces, the 象棋 move
 * list) or [lang=zh] (the language switch's 中), and every accessible name (aria-label, .sr), a
 * drawn thing's too, with the native terms taken out; each text that still has a Han character,
 * once.
 */
export async function hanziOutside(page: Page): Promise<string[]> {
  return page.evaluate(([terms, han]) => {
    const re = new RegExp(han, "u");
    const out = new Set<string>();
    const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      const el = n.parentElement;
      if (!el || el.closest("[data-native], [lang=zh], script, style")) continue;
      let text = n.textContent ?? "";
      for (const t of terms as string[]) text = text.split(t).join("");
      if (re.test(text)) out.add((n.textContent ?? "").trim().slice(0, 60));
    }
    // what a screen reader says of a drawn thing is words too: every name (aria-label, a hidden
    // .sr text), under [data-native] as well
    const names = [...document.querySelectorAll<HTMLElement>("[aria-label], .sr")].filter((el) => !el.closest("[lang=zh]"))
      .map((el) => el.getAttribute("aria-label") ?? el.textContent ?? "");
    for (const name of names) {
      let text = name;
      for (const t of terms as string[]) text = text.split(t).join("");
      if (re.test(text)) out.add(`name: ${name.trim().slice(0, 60)}`);
    }
    return [...out];
  }, [NATIVE_TERMS, HAN.source] as const);
}

export class Harness {
  readonly overflow: string[] = [];
  readonly axe: string[] = [];
  readonly errors: string[] = [];
  readonly screenshots: string[] = [];
  /** Phone screens where something needed for play lay below the fold (belowFold). */
  readonly fold: string[] = [];
  /** Screens where a seat lay on the dock or the centre, or a dock's text was covered (clashes). */
  readonly clash: string[] = [];
  /** Hanzi seen on a vi or en page outside the native game terms (hanziOutside). */
  readonly hanzi: string[] = [];
  /** How many phone screens were measured for it. */
  folds = 0;

  constructor(readonly browser: Browser, readonly url: string, readonly out: string) {}

  /** A new signed-in session (a guest) in its own browser context (`url`: another gateway than
   * the harness's, e.g. one a test stops and starts again). */
  async open(name: string, lang: string, phone: boolean, role: Session["role"] = "player", url = this.url, landscape = false): Promise<Session> {
    const ctx = await this.browser.newContext({
      viewport: phone ? (landscape ? SIDEWAYS : PHONE) : { width: 1280, height: 800 },
      deviceScaleFactor: 1, locale: LOCALE[lang], hasTouch: phone, isMobile: phone,
    });
    const page = await ctx.newPage();
    page.on("pageerror", (e) => this.errors.push(`${name}: page error: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error" && !/Failed to load resource: the server responded with a status of 4/.test(m.text())) this.errors.push(`${name}: ${m.text()}`);
    });
    page.on("response", (r) => { if (r.status() === 404) this.errors.push(`${name}: 404 ${r.url()}`); });
    await page.goto(url);
    await page.waitForSelector("#signin");
    await page.fill("#name", name);
    await page.click("#signin");
    await page.waitForSelector('body[data-screen="home"] .stats');
    await page.waitForFunction(() => document.querySelector("#coins")?.getAttribute("data-coins") !== "");
    return { page, name, lang, phone, landscape: phone && landscape, role };
  }

  /** The phone's first screen as it is held and, when `turned`, turned the other way and back:
   * what lies below the fold (belowFold) and what clashes (clashes), each with `label`. */
  async measure(s: Session, label: string, turned = true): Promise<void> {
    const sizes = s.phone ? [s.landscape ? SIDEWAYS : PHONE, s.landscape ? PHONE : SIDEWAYS].slice(0, turned ? 2 : 1) : [undefined];
    for (const [i, size] of sizes.entries()) {
      if (size && i > 0) await turn(s.page, size);
      const how = size ? `${size.width}×${size.height}` : "desktop";
      if (size) for (const f of await belowFold(s.page)) if (this.fold.length < 20) this.fold.push(`${label}/${s.name} ${how}: ${f}`);
      for (const c of await clashes(s.page)) if (this.clash.length < 20) this.clash.push(`${label}/${s.name} ${how}: ${c}`);
    }
    if (s.phone) await turn(s.page, sizes[0]!);
  }

  /** Checks the screen (overflow, and axe when `a11y`) and keeps a screenshot named `label`. */
  async look(s: Session, label: string, a11y = false): Promise<void> {
    if (await overflows(s.page)) this.overflow.push(`${label}/${s.name}`);
    for (const c of await clashes(s.page)) if (this.clash.length < 20) this.clash.push(`${label}/${s.name}: ${c}`);
    if (s.lang !== "zh") for (const x of await hanziOutside(s.page)) if (this.hanzi.length < 20) this.hanzi.push(`${label}/${s.name}: ${x}`);
    if (a11y) for (const v of await axe(s.page)) this.axe.push(`${label}/${s.name}: ${v}`);
    // a spectator's own name: with six players it shares a layout with one of them
    const file = `${label}-${s.lang}-${s.landscape ? "landscape" : s.phone ? "phone" : "desktop"}${s.role === "spectator" ? "-watch" : ""}.png`;
    await s.page.screenshot({ path: join(this.out, file), fullPage: true });
    this.screenshots.push(file);
    if (s.phone && label.includes("-mid")) {  // the first screen as a phone shows it, no scroll
      await s.page.evaluate(() => window.scrollTo(0, 0));
      const first = file.replace(".png", "-screen.png");
      await s.page.screenshot({ path: join(this.out, first) });
      this.screenshots.push(first);
    }
    if (s.phone && !s.landscape && /-(mid|end)$/.test(label)) {  // the same phone turned sideways, its first screen
      await turn(s.page, SIDEWAYS);
      await s.page.evaluate(() => window.scrollTo(0, 0));
      const side = file.replace("-phone", "-sideways").replace(".png", "-screen.png");
      await s.page.screenshot({ path: join(this.out, side) });
      this.screenshots.push(side);
      await turn(s.page, PHONE);
    }
  }

  /** From the home screen to a room, by clicks: Rooms, the game's tab, the room's Enter. */
  async enterRoom(s: Session, game: string, room: string): Promise<void> {
    await s.page.click('[data-nav="rooms"]');
    await s.page.click(`.tab[data-game="${game}"]`);
    await s.page.click(`[data-enter="${room}"]`);
    await s.page.waitForSelector('body[data-screen="room"] #quick-seat');
  }
}

const coinsOf = async (p: Page) => (await p.getAttribute("#coins", "data-coins")) ?? "";
const version = (p: Page) => p.getAttribute("#table .table", "data-version");

/** Plays one hand of `spec.game` in the browser; the result to print (one JSON line). */
export async function playHand(browser: Browser, url: string, out: string, spec: GameSpec): Promise<HandResult> {
  const hn = new Harness(browser, url, out);
  const n = spec.players ?? 2;
  const room = spec.room ?? `${spec.game}.points`;
  const result: HandResult = { ok: false, game: spec.game, moves: 0, overflow: hn.overflow, axe: hn.axe, errors: hn.errors,
    screenshots: hn.screenshots, fold: hn.fold, folds: 0, hanzi: hn.hanzi, clash: hn.clash, clashes: 0, sessions: [], timings: {},
    whys: [], whyMissing: [], whySkipped: {}, fx: {}, drawn: [] };
  const t0 = Date.now();
  const lap = (k: string) => { result.timings[k] = (Date.now() - t0) / 1000; };
  try {
    const players: Session[] = [];
    for (let i = 0; i < n; i++) players.push(await hn.open(NAMES[i]!, LAYOUTS[i]!.lang, LAYOUTS[i]!.phone, "player", url, LAYOUTS[i]!.landscape));
    const watcherLayout = LAYOUTS[n]!;
    const watcher = await hn.open(NAMES[n]!, watcherLayout.lang, watcherLayout.phone, "spectator", url, watcherLayout.landscape);
    const all = [...players, watcher];
    result.sessions = all.map((s) => ({ name: s.name, lang: s.lang, phone: s.phone, landscape: s.landscape ?? false, role: s.role }));
    await hn.look(players[0]!, `${spec.game}-0-home`, true);
    for (const s of all) await hn.enterRoom(s, spec.game, room);
    await hn.look(players[1]!, `${spec.game}-0-room`, true);
    const coinsBefore = await Promise.all(players.map((s) => coinsOf(s.page)));
    const [host, ...guests] = players;
    await host!.page.click("#new-table");
    await host!.page.waitForSelector("#table .table");
    const tableId = decodeURIComponent(await host!.page.evaluate(() => location.hash.split("/")[2] ?? ""));
    for (const s of guests) {
      await s.page.click(`[data-sit="${tableId}"]`);
      await s.page.waitForSelector("#table .table");
      // a phone just seated, the welcome of its sign-in a moment ago perhaps still up: nothing on the title
      if (s.phone) for (const c of await clashes(s.page)) if (hn.clash.length < 20) hn.clash.push(`seated/${s.name}: ${c}`);
    }
    await watcher.page.click(`[data-watch="${tableId}"]`);
    await watcher.page.waitForSelector("#table .table");
    await watcher.page.emulateMedia({ reducedMotion: "reduce" });
    for (const s of all) await watchFx(s.page);
    await host!.page.waitForSelector("#start:not([disabled])", { timeout: 15_000 });
    await host!.page.click("#start");
    for (const s of all) await s.page.waitForSelector('#table .table[data-status="playing"]');
    lap("started");
    // play: each player whose page shows a newer table version than it last acted on moves
    const acted = new Map<Page, string | null>();
    const until = Date.now() + (spec.limitMs ?? 150_000);
    let midShot = false;
    while (Date.now() < until) {
      const done = await Promise.all(players.map((s) => s.page.$("#outcome")));
      if (done.every(Boolean)) break;
      let any = false;
      for (const s of players) {
        const v = await version(s.page);
        if (v === null || acted.get(s.page) === v) continue;
        if (await s.page.$('#table .table[data-status="playing"]') === null) continue;
        if (s.phone && result.folds < 12) {  // the first screen holds all one plays with, upright and sideways
          result.folds++; result.clashes++;
          // turned every third time (a turn redraws 连连看's board twice: time on a busy machine)
          await hn.measure(s, `move ${result.moves}`, result.folds % 3 === 1);
        } else if (!s.phone && result.clashes < 12) {  // nothing lies on anything
          result.clashes++;
          await hn.measure(s, `move ${result.moves}`);
        }
        if (spec.inspect && result.drawn.length < 20) result.drawn.push(...(await spec.inspect(s.page)).map((x) => `move ${result.moves}/${s.name}: ${x}`));
        const byKeys = spec.keys !== undefined && !result.keyboard && s === players[0];
        if (await tryMove(() => (byKeys ? spec.keys! : spec.move)(s.page))) {
          acted.set(s.page, v); result.moves++; any = true;
          if (byKeys) result.keyboard = true;
        } else if (spec.refused && result.whys.filter((w) => w.name === s.name).length + result.whyMissing.length < 2) {
          await refusedClick(hn, s, spec.refused, result);  // off its turn: a refused click says why
        }
        if (!midShot && result.moves >= (spec.midAfter ?? 6)) {
          midShot = true;
          const m0 = Date.now();
          for (const x of all) await hn.look(x, `${spec.game}-1-mid`, x === players[0] || x === watcher);
          result.timings.midLook = (Date.now() - m0) / 1000;
        }
      }
      if (!any) await sleep(40);
    }
    for (const s of all) await s.page.waitForSelector("#outcome", { timeout: 15_000 });
    lap("ended");
    // a hand over before `midAfter` moves (random play ends Ô ăn quan in 4 now and then): its
    // "mid-hand" look is taken at the end
    if (!midShot) for (const x of all) await hn.look(x, `${spec.game}-1-mid`, x === players[0] || x === watcher);
    result.outcome = await host!.page.textContent("#outcome .verdict");
    await host!.page.click("#fairness summary");  // the hand's fairness: its commitment and revealed seed
    result.fairness = {
      commitment: (await host!.page.textContent("#fair-commitment")) ?? "",
      seed: (await host!.page.textContent("#fair-seed")) ?? "",
      next: (await host!.page.textContent("#fair-next")) ?? "",
    };
    await host!.page.$eval("#fairness", (el) => el.scrollIntoView());
    await hn.look(host!, `${spec.game}-3-fair`, true);
    result.payments = await host!.page.$$eval("tr.payment", (rows) => rows.map((r) => r.textContent ?? ""));
    // coins change once the ledger has posted the settlement (coin rooms)
    if (room.includes(".coins.") && result.payments.length) {
      const t0 = Date.now();
      let after = coinsBefore;
      while (Date.now() - t0 < 15_000 && after.some((c, i) => c === coinsBefore[i])) {
        await sleep(200);
        after = await Promise.all(players.map((s) => coinsOf(s.page)));
      }
      result.coinsAfter = after;
    }
    result.coinsBefore = coinsBefore;
    result.finalVersion = await version(host!.page);
    await watcher.page.waitForFunction((v) => document.querySelector("#table .table")?.getAttribute("data-version") === v,
      result.finalVersion, { timeout: 10_000 }).catch(() => undefined);
    result.spectatorSaw = await version(watcher.page);
    result.revealed = await watcher.page.evaluate(() => ({
      seats: Object.fromEntries([...document.querySelectorAll("[data-shown], [data-concealed]")].map((e) =>
        [e.getAttribute("data-shown") ?? e.getAttribute("data-concealed") ?? "", e.querySelectorAll(":scope > :not(small)").length])),
      wallLeft: Number(document.querySelector("[data-wall-left]")?.getAttribute("data-wall-left") ?? 0),
    }));
    for (const x of all) await hn.look(x, `${spec.game}-2-end`, x === players[0] || x === watcher);
    if (spec.inspect) for (const x of all) result.drawn.push(...(await spec.inspect(x.page)).map((d) => `end/${x.name}: ${d}`));
    for (const x of all) {
      const { n, animated } = await x.page.evaluate(() => (window as unknown as { __fx: { n: number; animated: number } }).__fx);
      result.fx[x.name] = { n, animated, reduced: x === watcher };
    }
    for (const s of all) hn.errors.push(...(await s.page.evaluate(() => (window as any).__chieu.errors as string[])).map((e) => `${s.name}: toast: ${e}`));
    lap("checked");
    result.ok = true;
  } catch (e) {
    result.error = String(e);
  }
  return result;
}

export interface WeightResult {
  ok: boolean; error?: string; lang: string;
  /** Every file the first screen fetched: its path and its size gzipped (woff2 as it is: already
   * compressed), bytes; and the sum in kB (1000 bytes). */
  files: { path: string; bytes: number }[]; kB: number;
}

/**
 * The weight of a first screen: a fresh phone in `lang` opens the portal, signs in as a guest and
 * waits for home to be drawn with its fonts loaded; every file fetched on the way (the page, its
 * script and styles, the font files and @font-face sheets its text needs; the calls to the
 * services aside), each counted gzipped as a server sends it.
 */
export async function weigh(browser: Browser, url: string, lang: string): Promise<WeightResult> {
  const r: WeightResult = { ok: false, lang, files: [], kB: 0 };
  const ctx = await browser.newContext({ viewport: { width: 375, height: 667 }, locale: LOCALE[lang], isMobile: true, hasTouch: true });
  const pending: Promise<void>[] = [];
  try {
    const page = await ctx.newPage();
    const origin = new URL(url).origin;
    page.on("response", (res) => {
      const u = new URL(res.url());
      if (u.origin !== origin || res.request().method() !== "GET") return;  // gRPC-Web calls are POSTs
      pending.push(res.body().then((b) => {
        const bytes = u.pathname.endsWith(".woff2") ? b.length : Math.min(b.length, gzipSync(b, { level: 9 }).length);
        r.files.push({ path: u.pathname, bytes });
      }).catch(() => undefined));
    });
    await page.goto(url);
    await page.waitForSelector("#signin");
    await page.fill("#name", "Lan");
    await page.click("#signin");
    await page.waitForSelector('body[data-screen="home"] .stats');
    await page.evaluate(() => document.fonts.ready);
    await sleep(500);  // a font asked for late (a lazy sheet) still counts
    await page.evaluate(() => document.fonts.ready);
    await Promise.all(pending);
    r.files.sort((a, b) => b.bytes - a.bytes);
    r.kB = r.files.reduce((n, f) => n + f.bytes, 0) / 1000;
    r.ok = true;
  } catch (e) {
    r.error = String(e);
  } finally {
    await ctx.close();
  }
  return r;
}

export interface TourResult {
  ok: boolean; error?: string; overflow: string[]; axe: string[]; errors: string[]; screenshots: string[]; hanzi: string[];
  memberDays?: string; leaders?: number; leaderNames?: string[]; prices?: string[]; coinsBeforeBuy?: string; coinsAfterBuy?: string;
}

/** The portal's own screens, by clicks, in each language and at both sizes: home, every game's
 * rooms, leaderboards, the services (buying a membership day shows on the home screen). */
export async function tour(browser: Browser, url: string, out: string): Promise<TourResult> {
  const hn = new Harness(browser, url, out);
  const r: TourResult = { ok: false, overflow: hn.overflow, axe: hn.axe, errors: hn.errors, screenshots: hn.screenshots, hanzi: hn.hanzi };
  try {
    for (const [i, { lang, phone }] of [{ lang: "vi", phone: true }, { lang: "zh", phone: false }, { lang: "en", phone: true }].entries()) {
      const s = await hn.open(["Lan", "Minh", "Quân"][i]!, lang, phone);
      const a11y = i < 2;
      await hn.look(s, "portal-home", a11y);
      await s.page.click('[data-nav="rooms"]');
      await s.page.waitForSelector(".room-card");
      await hn.look(s, "portal-rooms", a11y);
      for (const tab of await s.page.$$eval(".tab[data-game]", (els) => els.map((e) => e.getAttribute("data-game")!))) {
        await s.page.click(`.tab[data-game="${tab}"]`);
        await s.page.waitForSelector(`.room-card[data-room^="${tab}."]`);
        if (await overflows(s.page)) hn.overflow.push(`rooms-${tab}/${s.name}`);
      }
      await s.page.click('[data-nav="leaders"]');
      await s.page.waitForSelector('body[data-screen="leaders"] .leaders');
      await hn.look(s, "portal-leaders", a11y);
      r.leaders = await s.page.$$eval(".ranks tbody tr", (rows) => rows.length);
      await sleep(800);  // the names asked of the lobby (GetProfiles) have come
      r.leaderNames = [...(r.leaderNames ?? []), ...await s.page.$$eval(".ranks tbody td:nth-child(2)", (tds) => tds.map((td) => td.textContent ?? ""))];
      await s.page.click('[data-nav="shop"]');
      await s.page.waitForSelector(".services");
      await s.page.waitForSelector('[data-price="membership"]');  // the prices, from ListPrices
      await hn.look(s, "portal-shop", a11y);
      if (i === 0) {
        r.prices = await s.page.$$eval("[data-price]", (els) => els.map((e) => `${e.getAttribute("data-price")}=${e.textContent}`));
        r.coinsBeforeBuy = (await s.page.getAttribute("#coins", "data-coins")) ?? "";
      }
      await s.page.click('[data-buy="membership"]');
      await s.page.waitForSelector('.toast[role="status"]');
      if (i === 0) {
        await s.page.waitForFunction((before) => document.querySelector("#coins")?.getAttribute("data-coins") !== before,
          r.coinsBeforeBuy);
        r.coinsAfterBuy = (await s.page.getAttribute("#coins", "data-coins")) ?? "";
      }
      await s.page.click('[data-nav="home"]');
      await s.page.waitForSelector('body[data-screen="home"] #home-member', { timeout: 60_000 });
      r.memberDays = (await s.page.textContent("#home-member b")) ?? "";
      hn.errors.push(...(await s.page.evaluate(() => (window as any).__chieu.errors as string[])).map((e) => `${s.name}: toast: ${e}`));
      await s.page.context().close();
    }
    r.ok = true;
  } catch (e) {
    r.error = String(e);
  }
  return r;
}

/** Clicks one of the pieces `selector` finds (one the board refuses now) and reads the why that
 * shows beside it; none shown is noted in `whyMissing`. */
async function refusedClick(hn: Harness, s: Session, selector: string, result: HandResult): Promise<void> {
  // not while the page waits for the table's answer to its own command (the board takes no click then)
  const skip = (why: string) => { result.whySkipped[why] = (result.whySkipped[why] ?? 0) + 1; };
  if (!(await s.page.waitForSelector("#table:not(.pending)", { timeout: 2000 }).then(() => true, () => false))) return skip("pending");
  const pieces = await s.page.$$(`#table ${selector}`);
  if (!pieces.length) return skip("none");
  const piece = pieces[Math.floor(Math.random() * pieces.length)]!;
  const seen = () => s.page.evaluate(() => (window as unknown as { __fx: { whys: string[] } }).__fx.whys.length);
  const before = await seen();
  const v0 = await version(s.page);
  // forced: Playwright waits for an aria-disabled element to become enabled (the browser itself
  // does not refuse the click); near its top left corner: in a fan that overlaps on a phone, the
  // part of a card one sees
  const clicked = await tryMove(async () => { await piece.click({ timeout: 2000, force: true, position: { x: 6, y: 10 } }); return true; })
    .catch(() => false);
  if (!clicked) return skip("unclicked");
  const text = await s.page.waitForFunction((n) => {
    const whys = (window as unknown as { __fx: { whys: string[] } }).__fx.whys;
    return whys.length > n ? whys[whys.length - 1] : false;
  }, before, { timeout: 6000 }).then((h) => h.jsonValue() as Promise<string>, () => null);
  // a newer view meanwhile may have made the piece playable (the click then picked it), or a
  // redraw replaced the piece clicked: no verdict; a piece still there, still refused, on the
  // same view, that said nothing, is a miss
  const stillRefused = await piece.evaluate((el, sel) => el.isConnected && el.matches(`#table ${sel}`), selector)
    .catch(() => false);
  if (text === null && stillRefused && (await version(s.page)) === v0) result.whyMissing.push(`${s.name}: ${selector}`);
  if (text === null) return skip(stillRefused ? "newer view" : "redrawn");
  result.whys.push({ name: s.name, lang: s.lang, text });
  // the first why of each page, as it shows (the screen, not the whole page)
  const file = `${result.game}-why-${s.lang}-${s.phone ? "phone" : "desktop"}.png`;
  if (!hn.screenshots.includes(file)) {
    await s.page.screenshot({ path: join(hn.out, file) });
    hn.screenshots.push(file);
  }
}

/** A move by clicks, where the board was redrawn between finding a control and clicking it (every
 * view update redraws the board whole, so a handle taken a moment before may be detached): not a
 * failure, the player simply tries again on the next look. Anything else is thrown. */
async function tryMove(move: () => Promise<boolean>): Promise<boolean> {
  try {
    return await move();
  } catch (e) {
    if (/not attached to the DOM|detached from document|Element is not attached/i.test(String(e))) return false;
    throw e;
  }
}
