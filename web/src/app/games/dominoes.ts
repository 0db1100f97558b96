// Đô Mi Nô: the line of tiles as a snake with its two open ends marked, the other seats' tile counts, the
// boneyard, and one's own hand. A tile the legal list lets one play is a button: one click plays
// it where it can only go; where it fits both ends, the two ends become buttons to choose from.
// Bốc (draw) and bỏ lượt (pass) are buttons enabled only when the legal list offers them.
import type { Message } from "@bufbuild/protobuf";
import { End, type Command, type View } from "../../../gen/chieu/games/dominoes/v1/dominoes_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { arrowKeys, button, changedAt, dock, domino, fx, h, refuse, ring, seatBadge, whyAt, whyStatus, type Child } from "../ui/kit.js";

export const words: Catalog = {
  en: { "dom.draw": "Draw (bốc)", "dom.pass": "Pass", "dom.left": "Play on the left end ({n})", "dom.right": "Play on the right end ({n})",
    "dom.boneyard": "Boneyard: {n}", "dom.tiles": "{n} tiles", "dom.tiles.one": "1 tile", "dom.hand": "Your tiles", "dom.lead": "You lead: play any tile.",
    "dom.pick": "Play a tile that matches an open end.", "dom.where": "Which end?", "dom.pips": "{n} pips", "dom.ends": "Open ends {l} · {r}",
    "dom.spectating": "Watching: hands are hidden.", "dom.line": "The line", "dom.noFit": "Fits neither end" },
  vi: { "dom.draw": "Bốc", "dom.pass": "Bỏ lượt", "dom.left": "Đặt đầu trái ({n})", "dom.right": "Đặt đầu phải ({n})",
    "dom.boneyard": "Còn lại: {n}", "dom.tiles": "{n} quân", "dom.hand": "Quân của bạn", "dom.lead": "Bạn đi trước: đặt quân bất kỳ.",
    "dom.pick": "Đặt một quân khớp với một đầu.", "dom.where": "Đặt đầu nào?", "dom.pips": "{n} điểm", "dom.ends": "Hai đầu {l} · {r}",
    "dom.spectating": "Đang xem: bài được giấu.", "dom.line": "Dãy quân", "dom.noFit": "Không khớp đầu nào" },
  zh: { "dom.draw": "摸牌 (bốc)", "dom.pass": "过", "dom.left": "接在左端（{n}）", "dom.right": "接在右端（{n}）",
    "dom.boneyard": "余牌：{n}", "dom.tiles": "{n} 张", "dom.hand": "你的牌", "dom.lead": "你先出：任出一张。",
    "dom.pick": "出一张能接上两端之一的牌。", "dom.where": "接在哪一端？", "dom.pips": "{n} 点", "dom.ends": "两端 {l} · {r}",
    "dom.spectating": "旁观中：手牌不可见。", "dom.line": "牌龙", "dom.noFit": "两端都接不上" },
};

const key = (a: bigint | number, b: bigint | number) => `${a}|${b}`;
/** A phone's width: the snake's rows are shorter there. */
const narrow = typeof matchMedia === "function" ? matchMedia("(max-width: 600px)") : undefined;

/** Home's picture: two tiles joined, a double across. */
export const picture = (): HTMLElement => h("div", { class: "game-pic", "aria-hidden": "true" },
  domino(5, 3, { key: "pic:a" }), domino(3, 3, { vertical: true, key: "pic:b" }));

/** Its rounds are dealt hands ("Hand 2"), not games. */
export const rounds = "hands";

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const mine = Number(v.seat) >= 0;
  const plays = new Map<string, Command[]>();
  for (const c of v.legal) if (c.command.case === "play" && c.command.value.tile) {
    const k = key(c.command.value.tile.a, c.command.value.tile.b);
    plays.set(k, [...(plays.get(k) ?? []), c]);
  }
  const draw = v.legal.find((c) => c.command.case === "draw");
  const pass = v.legal.find((c) => c.command.case === "pass");
  const picked = ctx.state("dom.picked", () => ({ tile: "" }));
  if (!plays.has(picked.tile) || (plays.get(picked.tile)?.length ?? 0) < 2) picked.tile = "";
  const go = (c: Command) => () => { picked.tile = ""; ctx.send(c); };
  const toMove = Number(v.toMove);
  const mover = ctx.state("dom.mover", () => ({ seat: toMove }));
  const toMoveBefore = mover.seat;
  mover.seat = toMove;
  const ends = v.ends;
  const choices = picked.tile ? plays.get(picked.tile)! : [];
  const endButton = (end: End): Child => {
    const c = choices.find((x) => x.command.case === "play" && x.command.value.end === end);
    const n = end === End.LEFT ? ends?.left : ends?.right;
    return c ? button(end === End.LEFT ? "◀" : "▶", go(c), { kind: "primary", key: `end:${end}`,
      attrs: { "data-act": end === End.LEFT ? "left" : "right", "aria-label": ctx.t(end === End.LEFT ? "dom.left" : "dom.right", { n: n ?? 0n }) } }) : null;
  };
  // the line as a snake: rows of `per` tiles, every other row running right to left (its tiles
  // turned, so touching halves still match), each open end marked with its number (or, when a
  // picked tile fits there, the button to play it there)
  const phone = narrow?.matches ?? false;
  const per = phone ? 5 : 10;
  const open = (end: End): Child => endButton(end) ?? (ends && v.line.length
    ? h("span", { class: "dom-open", title: ctx.t(end === End.LEFT ? "dom.left" : "dom.right", { n: end === End.LEFT ? ends.left : ends.right }) },
      String(end === End.LEFT ? ends.left : ends.right)) : null);
  // a move's result: the tile just laid slides into the line (at the end it went to), on every page
  const firstKey = v.line[0] ? key(v.line[0].left, v.line[0].right) : "";
  const laid = ctx.state("dom.laid", () => ({ n: v.line.length, first: firstKey, at: -1 }));
  const since = changedAt(ctx, "line", `${v.line.length}|${firstKey}`);
  if (v.line.length !== laid.n) laid.at = v.line.length > laid.n ? (firstKey !== laid.first ? 0 : v.line.length - 1) : -1;
  Object.assign(laid, { n: v.line.length, first: firstKey });
  const rows: { t: View["line"][number]; i: number }[][] = [];
  v.line.forEach((t, i) => { if (i % per === 0) rows.push([]); rows.at(-1)!.push({ t, i }); });
  const line = h("div", { class: "dom-line snake", role: "group", "aria-label": ctx.t("dom.line") },
    rows.length ? rows.map((row, r) => {
      const back = r % 2 === 1;
      const tiles: Child[] = row.map(({ t, i }) => {
        const el = domino(Number(back ? t.right : t.left), Number(back ? t.left : t.right), {
          small: phone || v.line.length > per, vertical: t.left === t.right, key: `line:${i}`,
          mark: i === 0 || i === v.line.length - 1 ? "end" : undefined });
        return i === laid.at ? fx(el, "arrive", since, toMoveBefore === Number(v.seat) ? "down" : "up") : el;
      });
      if (r === 0) tiles.unshift(open(End.LEFT));
      if (r === rows.length - 1) tiles.push(open(End.RIGHT));
      return h("div", { class: `dom-row${back ? " back" : ""}` }, tiles);
    }) : h("div", { class: "dom-row" }, endButton(End.LEFT), endButton(End.RIGHT)));
  const seat = (s: number): HTMLElement => seatBadge({
    name: ctx.name(s), initial: ctx.initial(s), me: s === Number(v.seat), toMove: toMove === s && !v.finished, deadlineMs: v.deadlineMs, auto: ctx.autoPlayed(s),
    key: `seat:${s}`, lines: [ctx.t("dom.tiles", { n: v.counts[s] ?? 0n }),
      v.finished && v.result ? ` · ${ctx.t("dom.pips", { n: v.result.pips[s] ?? 0n })}` : null],
  }, ctx.t("table.auto"));
  const seats = v.counts.map((_, s) => s);
  const hand = mine ? arrowKeys(h("div", { class: "fan dom-hand", role: "group", "aria-label": ctx.t("dom.hand"), "data-zone": "hand" }, v.hand.map((t, i) => {
    const k = key(t.a, t.b);
    const options = plays.get(k) ?? [];
    const onclick = options.length === 1 ? go(options[0]!)
      : options.length > 1 ? () => { picked.tile = picked.tile === k ? "" : k; ctx.rerender(); } : undefined;
    // a tile that cannot be laid now says why beside it: not one's turn, or it fits neither end
    const why = v.finished ? undefined : () => refuse(ctx, `hand:${k}`,
      toMove !== Number(v.seat) ? ctx.word("refusal", "not_your_turn") : ctx.t("dom.noFit"));
    const el = domino(Number(t.a), Number(t.b), { onclick: onclick ?? why, selected: picked.tile === k, key: `hand:${k}`,
      mark: options.length ? "playable" : "idle", attrs: { "data-playable": options.length ? "1" : "0", "aria-disabled": onclick ? undefined : "true" } });
    const bubble = whyAt(ctx, `hand:${k}`, i < 2 ? "from-left" : i >= v.hand.length - 2 ? "from-right" : "");
    if (bubble) el.append(bubble);
    return el;
  }))) : v.finished ? null : h("p", { class: "muted" }, ctx.t("dom.spectating"));
  const prompt: Child = !mine || v.finished ? null
    : picked.tile ? h("p", { class: "hint" }, ctx.t("dom.where"))
      : plays.size && v.line.length === 0 ? h("p", { class: "hint" }, ctx.t("dom.lead"))
        : plays.size ? h("p", { class: "hint" }, ctx.t("dom.pick")) : null;
  // the others in playing order from one's own seat (the next one first)
  const from = mine ? Number(v.seat) : 0;
  const others = seats.map((_, i) => (from + i + (mine ? 1 : 0)) % seats.length).slice(0, mine ? seats.length - 1 : seats.length);
  return h("div", { class: "dom felt", "data-legal": v.legal.length },
    ring(others.map((s) => h("div", { class: "dom-seat", "data-seat": s }, seat(s)))),
    h("div", { class: "center" },
      h("div", { class: "phom-center" },
        h("span", { class: "pill" }, ctx.t("dom.boneyard", { n: v.boneyard })),
        ends ? h("span", { class: "pill" }, ctx.t("dom.ends", { l: ends.left, r: ends.right })) : null),
      line,
      v.finished && v.revealed.length ? h("div", { class: "revealed" }, v.revealed.map((hd, s) => s === Number(v.seat) ? null
        : h("div", { class: "dom-seats" }, h("span", { class: "pill" }, ctx.name(s)), hd.tiles.map((t) => domino(Number(t.a), Number(t.b), { small: true, key: `rev:${s}:${key(t.a, t.b)}` }))))) : null),
    dock(mine ? seat(Number(v.seat)) : null,
      hand, prompt,
      mine && !v.finished ? h("div", { class: "actions" },
        button(ctx.t("dom.draw"), draw ? go(draw) : undefined, { key: "act:draw", kind: draw ? "primary" : undefined, attrs: { "data-act": "draw" } }),
        button(ctx.t("dom.pass"), pass ? go(pass) : undefined, { key: "act:pass", kind: pass ? "primary" : undefined, attrs: { "data-act": "pass" } })) : null),
    whyStatus(ctx));
}
