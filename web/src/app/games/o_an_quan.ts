// Ô ăn quan: the board of ten dân squares between two quan half-moons, seen from the viewer's
// side (seat 1 sees the board turned). A sowing is two steps: pick one of one's own squares the
// legal list offers, then the direction (an arrow: which way the stones go on screen).
// Ring indices: Q0 = 0, S1..S5 = 1..5, Q6 = 6, N7..N11 = 7..11; seat 0 owns S1–S5; CCW is +1.
import type { Message } from "@bufbuild/protobuf";
import { Direction, type Command, type View } from "../../../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { arrowKeys, button, changedAt, dock, fx, h, refuse, ring, seatBadge, whyAt, whyStatus, type Child } from "../ui/kit.js";

export const words: Catalog = {
  en: { "oaq.pick": "Pick one of your squares to sow.", "oaq.dir": "Sow which way?", "oaq.dan": "{n} dân",
    "oaq.quan": "{n} quan", "oaq.owes": "owes {n}", "oaq.score": "{n} points in all (with the stones left on one's side)", "oaq.moves": "Move {n}",
    "oaq.square": "Square {name}: {n} stones", "oaq.left": "Sow to the left", "oaq.right": "Sow to the right",
    "oaq.cancel": "Cancel", "oaq.wait": "Waiting for {name}…" },
  vi: { "oaq.pick": "Chọn một ô của bạn để rải.", "oaq.dir": "Rải về phía nào?", "oaq.dan": "{n} dân",
    "oaq.quan": "{n} quan", "oaq.owes": "nợ {n}", "oaq.score": "Tổng {n} điểm (cả dân còn bên mình)", "oaq.moves": "Nước {n}",
    "oaq.square": "Ô {name}: {n} quân", "oaq.left": "Rải sang trái", "oaq.right": "Rải sang phải",
    "oaq.cancel": "Bỏ chọn", "oaq.wait": "Chờ {name}…" },
  zh: { "oaq.pick": "选一个自己的格子播子。", "oaq.dir": "往哪边播？", "oaq.dan": "{n} 个 dân",
    "oaq.quan": "{n} 个 quan", "oaq.owes": "欠 {n}", "oaq.score": "共 {n} 分（含己方剩余的 dân）", "oaq.moves": "第 {n} 手",
    "oaq.square": "{name} 格：{n} 子", "oaq.left": "向左播", "oaq.right": "向右播",
    "oaq.cancel": "取消", "oaq.wait": "等待 {name}…" },
};

const NAME = (sq: number) => (sq === 0 ? "Q0" : sq === 6 ? "Q6" : sq < 6 ? `S${sq}` : `N${sq}`);

/** Where each square is drawn: the top and bottom rows left to right, the quan at each end. */
function layout(flip: boolean) {
  return flip
    ? { top: [5, 4, 3, 2, 1], bottom: [7, 8, 9, 10, 11], left: 6, right: 0 }
    : { top: [11, 10, 9, 8, 7], bottom: [1, 2, 3, 4, 5], left: 0, right: 6 };
}

/** Home's picture: a quan's half-moon and two squares of stones. */
export const picture = (): HTMLElement => h("div", { class: "game-pic oaq-pic", "aria-hidden": "true" },
  h("span", { class: "sq quan left" }, pebbles(0, true, false)), [5, 5].map((n) => h("span", { class: "sq" }, pebbles(n, false))));

const SVG_NS = "http://www.w3.org/2000/svg";
function svg(tag: string, attrs: Record<string, string | number>, ...kids: Node[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
}

/**
 * A square's stones drawn, every one of them: `n` pebbles as a cluster (a sunflower spiral, so
 * any count packs evenly and the pebbles shrink as it grows). A quan square (`tall`: its picture
 * is upright, as the half-moon is) still holding its mandarin shows it as a big stone above its
 * pebbles. Each pebble has its own shade and a highlight, so the cluster reads as stones, not
 * dots; the number is written beside it (the square's .count).
 */
export function pebbles(n: number, quan: boolean, tall = quan): SVGElement {
  const H = tall ? 150 : 100;
  const cx = 50, cy = quan ? 104 : H / 2, R = quan ? 40 : tall ? 46 : 44;
  const c = R / (Math.sqrt(Math.max(n - 1, 0)) + 1.05);
  const r = Math.min(12, 0.84 * c);
  const kids: SVGElement[] = [];
  const sy = tall ? 36 : 50;  // the big stone: above the pebbles, or alone (home's picture)
  if (quan) kids.push(svg("ellipse", { class: "quan-stone", cx: 50, cy: sy, rx: 32, ry: 27 }),
    svg("ellipse", { class: "shine", cx: 39, cy: sy - 11, rx: 10, ry: 6 }));
  for (let i = 0; i < n; i++) {
    const d = c * Math.sqrt(i), a = i * 2.39996;  // the golden angle
    const x = cx + d * Math.cos(a), y = cy + d * Math.sin(a);
    kids.push(svg("circle", { class: `pebble s${(i * 7) % 4}`, cx: x.toFixed(1), cy: y.toFixed(1), r: r.toFixed(1) }));
    if (r >= 3.5) kids.push(svg("circle", { class: "shine", cx: (x - r * 0.35).toFixed(1), cy: (y - r * 0.35).toFixed(1), r: (r * 0.3).toFixed(1) }));
  }
  return svg("svg", { class: `stones${tall ? " tall" : ""}`, viewBox: `0 0 100 ${H}`, "aria-hidden": "true", "data-pebbles": n }, ...kids);
}

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const flip = ctx.mySeat === 1;
  const L = layout(flip);
  const x = (sq: number) => (sq === L.left ? -1 : sq === L.right ? 5 : Math.max(L.top.indexOf(sq), L.bottom.indexOf(sq)));
  // The legal sowings by square (none off turn, none for a spectator).
  const sowings = new Map<number, Command[]>();
  for (const c of v.legal) if (c.command.case === "sow") {
    const sq = Number(c.command.value.square);
    sowings.set(sq, [...(sowings.get(sq) ?? []), c]);
  }
  const picked = ctx.state("oaq.picked", () => ({ sq: -1 }));
  if (!sowings.has(picked.sq)) picked.sq = -1;
  if (sowings.size === 1 && picked.sq < 0) picked.sq = [...sowings.keys()][0]!;

  // a move's result: the squares whose count changed pulse (the sown ones, the emptied one, the
  // captured ones), on every page, for FX_MS
  const before = ctx.state("oaq.before", () => ({ board: v.board.map(Number), quan: [...v.quan] }));
  const moved = new Set<number>();
  v.board.forEach((b, i) => { if (Number(b) !== before.board[i]) moved.add(i); });
  v.quan.forEach((q, i) => { if (q !== before.quan[i]) moved.add(i === 0 ? 0 : 6); });
  const since = changedAt(ctx, "board", v.position);
  before.board = v.board.map(Number);
  before.quan = [...v.quan];
  const playing = ctx.mySeat !== undefined && !v.finished;
  // a square the rules do not let one sow now says why, beside it (the server's own words)
  const whyNot = (sq: number, n: number): string =>
    ctx.word("refusal", Number(v.toMove) !== ctx.mySeat ? "not_your_turn" : sq === 0 || sq === 6 ? "quan_square"
      : (sq < 6) !== (ctx.mySeat === 0) ? "not_your_square" : n === 0 ? "empty_square" : "not_your_turn");
  const square = (sq: number): HTMLElement => {
    const quan = sq === 0 || sq === 6;
    const n = Number(v.board[sq] ?? 0n);
    const label = ctx.t("oaq.square", { name: NAME(sq), n });
    const side = sq === L.left || L.top.indexOf(sq) === 0 || L.bottom.indexOf(sq) === 0 ? "from-left"
      : sq === L.right || L.top.indexOf(sq) === 4 || L.bottom.indexOf(sq) === 4 ? "from-right" : "";
    const content = [h("span", { class: "count" }, String(n)), pebbles(n, quan && v.quan[sq === 0 ? 0 : 1] === true, quan), whyAt(ctx, `sq:${sq}`, side)];
    const cls = `sq ${quan ? "quan" : "dan"}${sq === L.left ? " left" : sq === L.right ? " right" : ""}`;
    const mark = (el: HTMLElement) => (moved.has(sq) ? fx(el, "pulse", since) : el);
    if (!sowings.has(sq)) {
      if (!playing) return mark(h("div", { class: cls, "data-square": sq, "data-count": n, role: "img", "aria-label": label }, content));
      return mark(h("button", { type: "button", class: `${cls} refused`, "data-square": sq, "data-count": n, "data-key": `sq:${sq}`,
        "aria-label": label, "aria-disabled": "true", onclick: () => refuse(ctx, `sq:${sq}`, whyNot(sq, n)) }, content));
    }
    return mark(h("button", { type: "button", class: `${cls} playable${picked.sq === sq ? " picked" : ""}`, "data-square": sq, "data-count": n,
      "data-key": `sq:${sq}`, "aria-label": label, "aria-pressed": picked.sq === sq ? "true" : "false",
      onclick: () => { picked.sq = picked.sq === sq ? -1 : sq; ctx.rerender(); } }, content));
  };
  const arrowFor = (sq: number, dir: Direction): "left" | "right" => {
    const next = (sq + (dir === Direction.CCW ? 1 : 11)) % 12;
    const sameRow = L.top.includes(sq) ? L.top : L.bottom;
    if (sameRow.includes(next)) return x(next) > x(sq) ? "right" : "left";
    return next === L.right ? "right" : "left";
  };
  const store = (seat: number): HTMLElement => {
    const owes = Number(v.borrowed[seat] ?? 0n);
    return seatBadge({
      name: ctx.name(seat), initial: ctx.initial(seat), me: ctx.mySeat === seat, toMove: !v.finished && Number(v.toMove) === seat,
      deadlineMs: v.deadlineMs, auto: ctx.autoPlayed(seat),
      key: `seat:${seat}`,
      // at the end the score alone: it counts the stones swept to each side and the refills too,
      // so "28 dân · 1 quan · 40 điểm" read as a sum that does not add up (issue 35)
      lines: v.finished ? [h("b", { class: "score" }, ctx.t("oaq.score", { n: v.scores[seat] ?? 0n }))]
        : [h("span", {}, ctx.t("oaq.dan", { n: v.stores[seat] ?? 0n })), " · ", h("span", {}, ctx.t("oaq.quan", { n: v.quansCaptured[seat] ?? 0n })),
          owes > 0 ? h("span", { class: "owes" }, ` · ${ctx.t("oaq.owes", { n: owes })}`) : null],
    }, ctx.t("table.auto"));
  };
  const me = ctx.mySeat ?? 0;
  const other = 1 - me;
  const choices = picked.sq >= 0 ? (sowings.get(picked.sq) ?? []) : [];
  const dirButtons = (["left", "right"] as const).map((side) => {
    const c = choices.find((e) => e.command.case === "sow" && arrowFor(picked.sq, e.command.value.direction) === side);
    return button(side === "left" ? "⟵" : "⟶", c ? () => { picked.sq = -1; ctx.send(c); } : undefined, {
      key: `dir:${side}`, kind: "primary", title: ctx.t(side === "left" ? "oaq.left" : "oaq.right"),
      attrs: { "data-act": `sow-${side}`, "aria-label": ctx.t(side === "left" ? "oaq.left" : "oaq.right") } });
  });
  const prompt: Child = v.finished ? null
    : sowings.size === 0 ? h("p", { class: "prompt" }, Number(v.toMove) >= 0 ? ctx.t("oaq.wait", { name: ctx.name(Number(v.toMove)) }) : "")
      : picked.sq < 0 ? h("p", { class: "prompt mine" }, ctx.t("oaq.pick"))
        : h("div", { class: "prompt mine dirs" }, h("span", {}, ctx.t("oaq.dir")), dirButtons,
          button(ctx.t("oaq.cancel"), () => { picked.sq = -1; ctx.rerender(); }, { kind: "quiet", key: "dir:cancel" }));
  return h("div", { class: "oaq", "data-legal": v.legal.length, "data-flip": flip ? "1" : "0" },
    ring([h("div", { class: "oaq-seat", "data-seat": other }, store(other))]),
    arrowKeys(h("div", { class: "oaq-board", "data-zone": "board" }, square(L.left),
      h("div", { class: "rows" }, h("div", { class: "row top" }, L.top.map(square)), h("div", { class: "row bottom" }, L.bottom.map(square))),
      square(L.right)), "button"),
    dock(prompt, store(me)), whyStatus(ctx),
    h("p", { class: "muted small" }, ctx.t("oaq.moves", { n: v.movesMade })));
}
