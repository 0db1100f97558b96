// Ô ăn quan: the board of ten dân squares between two quan half-moons, seen from the viewer's
// side (seat 1 sees the board turned). A sowing is two steps: pick one of one's own squares the
// legal list offers, then the direction (an arrow: which way the stones go on screen).
// Ring indices: Q0 = 0, S1..S5 = 1..5, Q6 = 6, N7..N11 = 7..11; seat 0 owns S1–S5; CCW is +1.
import type { Message } from "@bufbuild/protobuf";
import { Direction, type Command, type View } from "../../../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { arrowKeys, button, dock, h, ring, seatBadge, type Child } from "../ui/kit.js";

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
  h("span", { class: "sq quan left" }, h("span", { class: "quan-piece" })),
  [5, 5].map((n) => h("span", { class: "sq" }, h("span", { class: "stones" }, Array.from({ length: n }, () => h("i"))))));

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

  const stones = (n: number): Child => h("span", { class: "stones", "aria-hidden": "true" },
    Array.from({ length: Math.min(n, 12) }, () => h("i")));
  const square = (sq: number): HTMLElement => {
    const quan = sq === 0 || sq === 6;
    const n = Number(v.board[sq] ?? 0n);
    const label = ctx.t("oaq.square", { name: NAME(sq), n });
    const content = [h("span", { class: "count" }, String(n)), stones(n),
      quan && v.quan[sq === 0 ? 0 : 1] ? h("span", { class: "quan-piece", "aria-hidden": "true" }) : null];
    const cls = `sq ${quan ? "quan" : "dan"}${sq === L.left ? " left" : sq === L.right ? " right" : ""}`;
    if (!sowings.has(sq)) return h("div", { class: cls, "data-square": sq, role: "img", "aria-label": label }, content);
    return h("button", { type: "button", class: `${cls} playable${picked.sq === sq ? " picked" : ""}`, "data-square": sq,
      "data-key": `sq:${sq}`, "aria-label": label, "aria-pressed": picked.sq === sq ? "true" : "false",
      onclick: () => { picked.sq = picked.sq === sq ? -1 : sq; ctx.rerender(); } }, content);
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
    dock(prompt, store(me)),
    h("p", { class: "muted small" }, ctx.t("oaq.moves", { n: v.movesMade })));
}
