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

/**
 * A playing card from its code: rank then suit ("7♠", "10♥", "Q♦"); any other code (a joker
 * "RJ"/"BJ", a face-down "?") is drawn as its text. A button when `onclick` is given (then
 * aria-pressed tells whether it is selected), else a plain element.
 */
export function card(code: string, o: CardOptions = {}): HTMLElement {
  const suit = code.slice(-1);
  const name = SUITS[suit];
  const rank = name ? code.slice(0, -1) : code;
  const red = suit === "♦" || suit === "♥" || /^(R|红)/.test(code);
  const cls = `pcard${red ? " red" : ""}${o.small ? " small" : ""}${o.selected ? " selected" : ""}${o.mark ? ` ${o.mark}` : ""}${name ? "" : " plain"}`;
  const face = [h("span", { class: "rank" }, rank), name ? h("span", { class: "suit", "aria-hidden": "true" }, suit) : null];
  const attrs = { class: cls, "data-card": code, "data-key": o.key ?? `card:${code}`, "aria-label": o.label ?? code, ...o.attrs };
  if (o.onclick === undefined) return h("span", { ...attrs, role: "img" }, face);
  const click = o.onclick;
  return h("button", { ...attrs, type: "button", disabled: o.dim, "aria-pressed": o.selected ? "true" : "false", onclick: () => click() }, face);
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
