// The shared drawing kit of every board: buttons with a 40 px target, playing cards, tiles
// (mahjong faces and dominoes), seat badges with their clock, and keyboard focus that survives
// a redraw. Boards build DOM with h() (../dom.ts) and these; the look is in style.css
// (classes .btn, .pcard, .tile, .domino, .seat-badge).
import { h, type Child } from "../dom.js";

export { h, type Child };

export interface ButtonOptions {
  /** A stable key: focus returns to the element with the same key after a redraw. */
  key?: string;
  disabled?: boolean;
  /** "primary" for the one action a player most likely wants, "quiet" for secondary ones. */
  kind?: "primary" | "quiet" | "danger";
  title?: string;
  /** Extra attributes (data-* for tests, aria-pressed …). */
  attrs?: Record<string, string | number | boolean | undefined>;
}

/** A button, at least 40 × 40 px (CSS .btn), disabled when `onclick` is undefined. */
export function button(label: Child, onclick: (() => void) | undefined, o: ButtonOptions = {}): HTMLButtonElement {
  const disabled = o.disabled === true || onclick === undefined;
  return h("button", {
    type: "button", class: `btn${o.kind ? ` ${o.kind}` : ""}`, "data-key": o.key, title: o.title,
    disabled, "aria-disabled": disabled ? "true" : undefined,
    onclick: onclick && !disabled ? () => onclick() : undefined, ...o.attrs,
  }, label);
}

const SUITS: Record<string, string> = { "♠": "spades", "♣": "clubs", "♦": "diamonds", "♥": "hearts" };

export interface CardOptions {
  onclick?: () => void;
  selected?: boolean;
  /** Disabled but drawn face up (a card one may not pick now). */
  dim?: boolean;
  key?: string;
  /** Drawn smaller (rows of discards, melds on the table). */
  small?: boolean;
  /** A card marker (an eaten card, the last one played …): a class on the card. */
  mark?: string;
  label?: string;
  attrs?: Record<string, string | number | boolean | undefined>;
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element (the card faces are drawn, not typed). */
function svg(tag: string, attrs: Record<string, string | number>, ...kids: Node[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
}

/** Each suit's outline in a 10 × 10 box (drawn, so no font is needed for a pip). */
const SUIT_PATH: Record<string, string> = {
  "♥": "M5 9.4 1.2 5.3A2.4 2.4 0 0 1 5 2.2 2.4 2.4 0 0 1 8.8 5.3Z",
  "♦": "M5 .4 8.8 5 5 9.6 1.2 5Z",
  "♠": "M5 .4 8.9 5.2A2.2 2.2 0 0 1 5.6 7.5L6.5 9.6H3.5L4.4 7.5A2.2 2.2 0 0 1 1.1 5.2Z",
  "♣": "M5 .6A2.1 2.1 0 0 1 6.6 4.2 2.1 2.1 0 1 1 5.7 7.3L6.5 9.6H3.5L4.3 7.3A2.1 2.1 0 1 1 3.4 4.2 2.1 2.1 0 0 1 5 .6Z",
};

/** Where the pips of 2–10 lie on a 60 × 84 face (the classic layouts; lower ones turned). */
const PIP_AT: Record<string, [number, number][]> = (() => {
  const L = 19, M = 30, R = 41, T = 17, B = 67, C = 42;
  const six: [number, number][] = [[L, T], [R, T], [L, C], [R, C], [L, B], [R, B]];
  return {
    A: [[M, C]], 2: [[M, T], [M, B]], 3: [[M, T], [M, C], [M, B]], 4: [[L, T], [R, T], [L, B], [R, B]],
    5: [[L, T], [R, T], [M, C], [L, B], [R, B]], 6: six, 7: [...six, [M, 29.5]], 8: [...six, [M, 29.5], [M, 54.5]],
    9: [[L, T], [R, T], [L, 33.7], [R, 33.7], [M, C], [L, 50.3], [R, 50.3], [L, B], [R, B]],
    10: [[L, T], [R, T], [M, 25.3], [L, 33.7], [R, 33.7], [L, 50.3], [R, 50.3], [M, 58.7], [L, B], [R, B]],
  };
})();

/** A pip: the suit's outline at (x, y), `size` units wide, turned when in the lower half. */
function pip(suit: string, x: number, y: number, size: number, turn = false): SVGElement {
  const k = size / 10;
  return svg("path", { d: SUIT_PATH[suit]!, transform: `translate(${x - size / 2} ${y - size / 2}) scale(${k})${turn ? " rotate(180 5 5)" : ""}` });
}

/** A court card's figure (J, Q, K): a framed bust in the suit's colour, told apart by its
 * headwear (the king's crown of three points, the queen's rounded one, the jack's cap), the
 * suit beside it. Drawn in a few shapes, after the classic French-suited portraits. */
function court(rank: string, suit: string): SVGElement[] {
  const head = svg("circle", { cx: 30, cy: 34, r: 7, class: "skin" });
  const body = svg("path", { d: "M17 66C17 52 22 45 30 45S43 52 43 66Z", class: "robe" });
  const collar = svg("path", { d: "M24 46 30 54 36 46", class: "trim" });
  const hat = rank === "K" ? svg("path", { d: "M22 29 22 19 26 24 30 16 34 24 38 19 38 29Z", class: "gold" })
    : rank === "Q" ? svg("path", { d: "M22 29C22 22 25 19 30 19S38 22 38 29Z M26 19 30 14 34 19", class: "gold" })
      : svg("path", { d: "M22 30C22 23 26 21 31 21L40 24 37 27 38 30Z", class: "robe" });
  return [svg("rect", { x: 13, y: 11, width: 34, height: 62, rx: 3, class: "frame" }), body, collar, head, hat,
    pip(suit, 40, 60, 8)];
}

/** A card's face as a picture: the corner index (rank over suit, top left and, turned, bottom
 * right, so an overlapping fan still shows it), and the pips of 2–10, one large pip for an ace,
 * or a court figure. */
function face(rank: string, suit: string): SVGElement {
  const index = (turn: boolean) => svg("g", { class: "index", transform: turn ? "rotate(180 30 42)" : "" },
    svg("text", { x: 7.5, y: 13, "text-anchor": "middle" }, document.createTextNode(rank)),
    pip(suit, 7.5, 20, 7));
  const art = PIP_AT[rank] ? PIP_AT[rank]!.map(([x, y]) => pip(suit, x, y, rank === "A" ? 22 : 11, y > 42))
    : court(rank, suit);
  return svg("svg", { viewBox: "0 0 60 84", class: "face", "aria-hidden": "true" }, index(false), index(true), ...art);
}

/**
 * A playing card from its code: rank then suit ("7♠", "10♥", "Q♦"), drawn as a picture (its
 * corner index, pips or court figure; small cards show the index and one pip); any other code (a
 * joker "RJ"/"BJ", a face-down "?") is drawn as its text. A button when `onclick` is given (then
 * aria-pressed tells whether it is selected), else a plain element.
 */
export function card(code: string, o: CardOptions = {}): HTMLElement {
  const suit = code.slice(-1);
  const name = SUITS[suit];
  const rank = name ? code.slice(0, -1) : code;
  const red = suit === "♦" || suit === "♥" || /^(R|红)/.test(code);
  const drawn = name !== undefined && !o.small;
  const cls = `pcard${red ? " red" : ""}${o.small ? " small" : ""}${o.selected ? " selected" : ""}${o.mark ? ` ${o.mark}` : ""}${name ? "" : " plain"}${drawn ? " drawn" : ""}`;
  // drawn: the text (hidden from sight) is the whole code, as the label says (axe: label = content)
  const face_ = drawn ? [h("span", { class: "rank" }, code), face(rank, suit)]
    : [h("span", { class: "rank" }, rank), name ? h("span", { class: "suit", "aria-hidden": "true" }, suit) : null];
  // a drawn card's button is named by its hidden text (the code), so its name and content agree
  const label = drawn && o.label === undefined && o.onclick !== undefined ? undefined : o.label ?? code;
  const attrs = { class: cls, "data-card": code, "data-key": o.key ?? `card:${code}`, "aria-label": label, ...o.attrs };
  if (o.onclick === undefined) return h("span", { ...attrs, role: "img" }, face_);
  const click = o.onclick;
  return h("button", { ...attrs, type: "button", disabled: o.dim, "aria-pressed": o.selected ? "true" : "false", onclick: () => click() }, face_);
}

/** A card's back (another player's hidden card). */
export function cardBack(small = true): HTMLElement {
  return h("span", { class: `pcard back${small ? " small" : ""}`, "aria-hidden": "true" });
}

/** A hand of cards fanned: one row that overlaps on a narrow screen (CSS .fan, its --n the
 * number of cards), so a phone shows a whole hand in one row, each card's corner index visible. */
export function fan(cards: HTMLElement[], label: string): HTMLElement {
  const el = h("div", { class: "fan", role: "group", "aria-label": label, "data-zone": "hand" }, cards);
  el.style.setProperty("--n", String(Math.max(1, cards.length)));
  return el;
}

/**
 * The player's own corner of a table: their seat, hand and actions. On a phone it stays at the
 * bottom of the screen (CSS .dock: sticky), so what one plays with is never below the fold.
 */
export function dock(...children: Child[]): HTMLElement {
  return h("div", { class: "dock", "data-zone": "dock" }, children);
}

/** The other players around the table, in seat order from one's own (each child one seat:
 * data-zone="seat"); on a phone a row across the top, on a desktop spread around the centre. */
export function ring(seats: HTMLElement[], cls = ""): HTMLElement {
  for (const s of seats) s.dataset.zone = "seat";
  return h("div", { class: `ring${cls ? ` ${cls}` : ""}`, "data-n": seats.length }, seats);
}

/** Seconds as a clock, m:ss ("0:07", "59:58"), in every language. */
export function mmss(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

/** An upright tile (a mahjong face, a 连连看 pattern): its text, clickable when `onclick`. */
export function tile(face: string, o: CardOptions = {}): HTMLElement {
  const cls = `tile${o.small ? " small" : ""}${o.selected ? " selected" : ""}${o.mark ? ` ${o.mark}` : ""}`;
  const attrs = { class: cls, "data-tile": face, "data-key": o.key ?? `tile:${face}`, "aria-label": o.label ?? face, ...o.attrs };
  if (o.onclick === undefined) return h("span", { ...attrs, role: "img" }, face);
  const click = o.onclick;
  return h("button", { ...attrs, type: "button", disabled: o.dim, "aria-pressed": o.selected ? "true" : "false", onclick: () => click() }, face);
}

const PIPS: Record<number, number[]> = { 0: [], 1: [4], 2: [0, 8], 3: [0, 4, 8], 4: [0, 2, 6, 8], 5: [0, 2, 4, 6, 8], 6: [0, 2, 3, 5, 6, 8] };

/** One half's pips on a 3 × 3 grid; `across` (a horizontal tile) turns them a quarter, so a six
 * lies in two rows of three along the tile, as on a real one. A blank half is drawn engraved, so
 * the double blank still reads as a tile and not as an empty place. */
function half(n: number, across: boolean): HTMLElement {
  const on = new Set((PIPS[n] ?? []).map((i) => (across ? (i % 3) * 3 + Math.floor(i / 3) : i)));
  return h("span", { class: `half${n === 0 ? " blank" : ""}` }, Array.from({ length: 9 }, (_, i) => h("i", { class: on.has(i) ? "pip" : "" })));
}

/** A domino [a|b] with its pips; horizontal unless `vertical` (a double across the line). */
export function domino(a: number, b: number, o: CardOptions & { vertical?: boolean } = {}): HTMLElement {
  const cls = `domino${o.vertical ? " vertical" : ""}${o.small ? " small" : ""}${o.selected ? " selected" : ""}${o.mark ? ` ${o.mark}` : ""}`;
  const attrs = { class: cls, "data-tile": `${a}|${b}`, "data-key": o.key ?? `domino:${a}|${b}`, "aria-label": o.label ?? `[${a}|${b}]`, ...o.attrs };
  const face = [half(a, !o.vertical), h("span", { class: "mid" }), half(b, !o.vertical)];
  if (o.onclick === undefined) return h("span", { ...attrs, role: "img" }, face);
  const click = o.onclick;
  return h("button", { ...attrs, type: "button", disabled: o.dim, "aria-pressed": o.selected ? "true" : "false", onclick: () => click() }, face);
}

export interface SeatBadge {
  name: string;
  /** The avatar's letter (ctx.initial: from the player's own name, also for the caller's seat,
   * whose `name` is "you"); by default the name's first letter. */
  initial?: string;
  me?: boolean;
  toMove?: boolean;
  /** This seat's deadline (epoch ms, the view's deadline_ms) while it is to move: the page's
   * ticker counts it down every 250 ms (an element with data-deadline). */
  deadlineMs?: bigint | number;
  /** Or a fixed number of seconds left (not counted down between redraws). */
  secondsLeft?: number;
  auto?: boolean;
  /** Small lines under the name (cards left, a store, a score …). */
  lines?: Child[];
  key?: string;
}

/** A name's first letter (a whole code point: a CJK character or a Vietnamese letter), upper case. */
export function initialOf(name: string): string {
  return ([...name.trim()][0] ?? "?").toUpperCase();
}

/** A player's place at the table: name, whose turn with the clock, 托管, and a few facts. */
export function seatBadge(s: SeatBadge, autoLabel: string): HTMLElement {
  const left = s.secondsLeft;
  return h("div", { class: `seat-badge${s.me ? " me" : ""}${s.toMove ? " to-move" : ""}`, "data-key": s.key },
    h("div", { class: "who" }, h("span", { class: "avatar", "aria-hidden": "true" }, s.initial || initialOf(s.name)),
      h("b", { class: "name" }, s.name),
      s.toMove && s.deadlineMs !== undefined && Number(s.deadlineMs) > 0 ? h("span", { class: "clock", "data-deadline": Number(s.deadlineMs) })
        : s.toMove && left !== undefined ? h("span", { class: `clock${left <= 5 ? " urgent" : ""}` }, mmss(left)) : null),
    s.auto ? h("span", { class: "auto" }, autoLabel) : null,
    s.lines?.length ? h("div", { class: "facts" }, s.lines) : null);
}

/**
 * Arrow keys move the focus among `selector` inside `root` (a hand, a row of squares): one tab
 * stop for the group, Left/Up back and Right/Down forward, Home/End to the ends.
 */
export function arrowKeys(root: HTMLElement, selector = "button:not([disabled])"): HTMLElement {
  root.addEventListener("keydown", (e) => {
    const keys = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "Home", "End"];
    if (!keys.includes(e.key)) return;
    const items = [...root.querySelectorAll<HTMLElement>(selector)];
    if (!items.length) return;
    const at = items.indexOf(document.activeElement as HTMLElement);
    const next = e.key === "Home" ? 0 : e.key === "End" ? items.length - 1
      : e.key === "ArrowLeft" || e.key === "ArrowUp" ? Math.max(0, at - 1) : Math.min(items.length - 1, at + 1);
    items[next]?.focus();
    e.preventDefault();
  });
  return root;
}

/** The data-key of the focused element, to give focus back after `root` is redrawn. */
export function focusedKey(): string | undefined {
  return (document.activeElement as HTMLElement | null)?.dataset?.key;
}

/** Focus the element with data-key `key` under `root` again (after a redraw), if it is there. */
export function refocus(root: HTMLElement, key: string | undefined): void {
  if (!key) return;
  const el = root.querySelector<HTMLElement>(`[data-key="${CSS.escape(key)}"]`);
  if (el && !(el as HTMLButtonElement).disabled) el.focus({ preventScroll: true });
}

/** The per-table state a board keeps (BoardContext.state), as much of it as the kit needs. */
interface Stateful {
  state<T>(key: string, init: () => T): T;
  rerender(): void;
}

/** How long the why of a refused click stays beside the piece. */
export const WHY_MS = 1400;

/**
 * Says why a click was refused, in a word, beside the piece whose data-key is `key`, for WHY_MS:
 * the board draws it with `whyAt(ctx, key)` inside (or beside) that piece. `text` is words
 * already (ctx.word("refusal", code) or ctx.t(key)), never a code.
 */
export function refuse(ctx: Stateful, key: string, text: string): void {
  const w = ctx.state("kit.why", () => ({ key: "", text: "", at: 0 }));
  Object.assign(w, { key, text, at: Date.now() });
  ctx.rerender();
  setTimeout(() => { if (Date.now() - w.at >= WHY_MS) ctx.rerender(); }, WHY_MS + 50);
}

/** The why bubble for the piece `key` while it shows (else null); `side` keeps it inside the
 * board at an edge ("from-left" opens rightwards). Hidden from screen readers: whyStatus says it. */
export function whyAt(ctx: Stateful, key: string, side: "" | "from-left" | "from-right" = ""): HTMLElement | null {
  const w = ctx.state("kit.why", () => ({ key: "", text: "", at: 0 }));
  if (w.key !== key || !w.text || Date.now() - w.at >= WHY_MS) return null;
  return h("span", { class: `why-bubble${side ? ` ${side}` : ""}`, "aria-hidden": "true", "data-why": "" }, w.text);
}

/** The why being shown, for screen readers (a polite live region; one per board). */
export function whyStatus(ctx: Stateful): HTMLElement {
  const w = ctx.state("kit.why", () => ({ key: "", text: "", at: 0 }));
  return h("p", { class: "sr", role: "status" }, w.text && Date.now() - w.at < WHY_MS ? w.text : "");
}

/** How long a move's result animates (CSS .fx-arrive, .fx-pulse: ≤ 300 ms, none when the player
 * asks for reduced motion). */
export const FX_MS = 300;

/**
 * When `sig` (what a move changes: the line's length, a pit's count …) last changed, epoch ms;
 * 0 on the board's first drawing (a table opened, not a move seen). Kept per table under `key`,
 * so every page (the mover's, the others', a spectator's) animates the same change.
 */
export function changedAt(ctx: Stateful, key: string, sig: string): number {
  const s = ctx.state(`kit.fx:${key}`, () => ({ sig, at: 0 }));
  if (s.sig !== sig) { s.sig = sig; s.at = Date.now(); }
  return s.at;
}

/** Marks `el` to animate as `kind` ("arrive": slides and fades in; "pulse": a pit sown) if `since`
 * (changedAt) is under FX_MS ago; a redraw meanwhile continues the animation, not restarts it. */
export function fx<E extends HTMLElement>(el: E, kind: "arrive" | "pulse", since: number, from: "up" | "down" = "down"): E {
  const age = Date.now() - since;
  if (!since || age >= FX_MS) return el;
  el.classList.add(`fx-${kind}`);
  if (kind === "arrive") el.classList.add(`fx-from-${from}`);
  el.dataset.fx = kind;
  if (age > 0) el.style.animationDelay = `-${age}ms`;
  return el;
}
