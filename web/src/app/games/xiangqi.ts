// 中国象棋 (Cờ tướng): the board of nine files and ten ranks with its river (楚河 汉界) and
// palaces, the pieces in Chinese characters (red 帥仕相傌俥炮兵, black 將士象馬車砲卒), seen
// from the viewer's side (flipped for Black), the last move marked and a king in check (将军)
// ringed. One clicks a piece the view's legal_moves lets move, then one of its destinations;
// the keyboard walks the 90 points with the arrow keys and Enter does the same. 提和 (offer a
// draw) is enabled when the view says it may be offered, the answers to an offer come from
// its legal list, and 认输 (resign) asks once more before it is sent.
import { create, type Message } from "@bufbuild/protobuf";
import { MoveSchema, OfferDrawSchema, ResignSchema, type Command, type View } from "../../../gen/chieu/games/xiangqi/v1/xiangqi_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { button, dock, h, ring, seatBadge } from "../ui/kit.js";

export const words: Catalog = {
  en: { "xq.red": "Red", "xq.black": "Black", "xq.check": "Check!", "xq.pick": "Pick a piece to move.",
    "xq.notTurn": "Not your turn", "xq.stuck": "This piece has no move", "xq.notThere": "It cannot go there",
    "xq.notYours": "Not your piece",
    "xq.to": "Pick where it goes, or another piece.", "xq.wait": "Waiting for {name}.", "xq.moves": "Moves",
    "xq.offer": "Offer a draw", "xq.offered": "{name} offers a draw.", "xq.accept": "Accept the draw",
    "xq.decline": "Decline", "xq.resign": "Resign", "xq.sure": "Resign now?", "xq.yes": "Yes, resign",
    "xq.no": "Keep playing", "xq.board": "Board: arrow keys move, Enter picks", "xq.empty": "empty point",
    "xq.dest": "move here", "xq.capture": "capture", "xq.last": "last move", "xq.clock": "{s} left",
    "xq.spectating": "Watching.", "xq.time": "{m}:{s}" },
  vi: { "xq.red": "Đỏ", "xq.black": "Đen", "xq.check": "Chiếu tướng!", "xq.pick": "Chọn một quân để đi.",
    "xq.notTurn": "Chưa đến lượt bạn", "xq.stuck": "Quân này không đi được", "xq.notThere": "Không đi tới đó được",
    "xq.notYours": "Không phải quân của bạn",
    "xq.to": "Chọn ô đến, hoặc quân khác.", "xq.wait": "Chờ {name} đi.", "xq.moves": "Nước đã đi",
    "xq.offer": "Cầu hòa", "xq.offered": "{name} cầu hòa.", "xq.accept": "Đồng ý hòa",
    "xq.decline": "Từ chối", "xq.resign": "Xin thua", "xq.sure": "Xin thua ngay?", "xq.yes": "Xin thua",
    "xq.no": "Đánh tiếp", "xq.board": "Bàn cờ: phím mũi tên để di chuyển, Enter để chọn", "xq.empty": "điểm trống",
    "xq.dest": "đi đến đây", "xq.capture": "ăn quân", "xq.last": "nước vừa đi", "xq.clock": "còn {s}",
    "xq.spectating": "Đang xem.", "xq.time": "{m}:{s}" },
  zh: { "xq.red": "红方", "xq.black": "黑方", "xq.check": "将军！", "xq.pick": "选一个要走的棋子。",
    "xq.notTurn": "还没轮到你", "xq.stuck": "这个棋子无路可走", "xq.notThere": "不能走到这里", "xq.notYours": "不是你的棋子",
    "xq.to": "选目标点，或换一个棋子。", "xq.wait": "等待{name}走棋。", "xq.moves": "着法",
    "xq.offer": "提和", "xq.offered": "{name}提和。", "xq.accept": "同意和棋",
    "xq.decline": "拒绝", "xq.resign": "认输", "xq.sure": "确定认输？", "xq.yes": "确定认输",
    "xq.no": "继续下棋", "xq.board": "棋盘：方向键移动，回车选择", "xq.empty": "空点",
    "xq.dest": "走到这里", "xq.capture": "吃子", "xq.last": "上一步", "xq.clock": "剩 {s}",
    "xq.spectating": "旁观中。", "xq.time": "{m}:{s}" },
};

/** FEN letters as the pieces are written: upper case Red, lower case Black. Red's chariot and
 * horse are 車 and 馬 as on many sets: 俥 and 傌 are not in the Noto Sans SC the page ships, and
 * a player's machine may have no other CJK font (the colour tells the sides apart). */
const GLYPH: Record<string, string> = {
  K: "帥", A: "仕", B: "相", E: "相", N: "馬", H: "馬", R: "車", C: "炮", P: "兵",
  k: "將", a: "士", b: "象", e: "象", n: "馬", h: "馬", r: "車", c: "砲", p: "卒",
};
/** A piece's name for a screen reader: its glyph in Chinese, words in vi and en (the drawn glyph is
 * aria-hidden). */
const PIECE_WORD: Record<"vi" | "en", Record<string, string>> = {
  vi: { k: "Tướng", a: "Sĩ", b: "Tượng", e: "Tượng", n: "Mã", h: "Mã", r: "Xe", c: "Pháo", p: "Tốt" },
  en: { k: "General", a: "Advisor", b: "Elephant", e: "Elephant", n: "Horse", h: "Horse", r: "Chariot", c: "Cannon", p: "Soldier" },
};
function pieceName(p: string, lang: string): string {
  return lang === "vi" || lang === "en" ? PIECE_WORD[lang][p.toLowerCase()] ?? p : GLYPH[p] ?? p;
}
const FILES = "abcdefghi";
/** How long the why of a refused click stays beside the point. */
const WHY_MS = 1400;

/** The FEN's placement as square → letter (ICCS squares: files a–i, ranks 0–9 from Red's side). */
export function placement(fen: string): Map<string, string> {
  const out = new Map<string, string>();
  const rows = (fen.split(" ")[0] ?? "").split("/");
  rows.forEach((row, i) => {
    let file = 0;
    for (const ch of row) {
      if (/\d/.test(ch)) file += Number(ch);
      else out.set(`${FILES[file++]}${9 - i}`, ch);
    }
  });
  return out;
}

/** Home's picture: the two generals face to face. */
export const picture = (): HTMLElement => h("div", { class: "game-pic", "aria-hidden": "true" },
  h("span", { class: "xq-piece red", "data-native": "" }, "帥"), h("span", { class: "xq-piece black", "data-native": "" }, "將"));

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const me = ctx.mySeat;
  const black = me === 1;
  const pieces = placement(v.fen);
  const sel = ctx.state("xq.sel", () => ({ square: "", confirm: false, why: { square: "", text: "", at: 0 } }));
  const moves = new Map(v.legalMoves.map((p) => [p.square, p.to]));
  if (sel.square && !moves.has(sel.square)) sel.square = "";
  const dests = new Set(sel.square ? moves.get(sel.square) : []);
  const last = v.moves.at(-1)?.move ?? "";
  const lastSquares = new Set(last.length === 4 ? [last.slice(0, 2), last.slice(2)] : []);
  const toMove = v.toMove === undefined ? -1 : Number(v.toMove);
  const checked = v.inCheck && toMove >= 0 ? [...pieces].find(([, p]) => p === (toMove === 0 ? "K" : "k"))?.[0] : undefined;
  const playing = !v.finished && me !== undefined;
  const legalOf = (kind: NonNullable<Command["command"]["case"]>) => v.legal.find((c) => c.command.case === kind);

  const pick = (square: string) => {
    if (sel.square && dests.has(square)) {
      const from = sel.square;
      sel.square = "";
      ctx.send(create(MoveSchema, { move: from + square }));
    } else if (moves.has(square)) {
      sel.square = sel.square === square ? "" : square;
      ctx.rerender();
    }
  };
  // a click the rules refuse says why, in a word, beside the point (the legal list decides which)
  const refuse = (square: string, piece: string | undefined) => {
    if (me === undefined || v.finished) return;
    const own = piece !== undefined && (piece === piece.toUpperCase()) === (me === 0);
    const text = toMove !== me ? "xq.notTurn" : own ? "xq.stuck" : sel.square ? "xq.notThere" : piece ? "xq.notYours" : "";
    if (!text) return;
    sel.why = { square, text: ctx.t(text), at: Date.now() };
    ctx.rerender();
    setTimeout(ctx.rerender, WHY_MS + 50);
  };
  const why = sel.why.text && Date.now() - sel.why.at < WHY_MS ? sel.why : undefined;
  // the points in display order: Red's view has rank 9 on top and file a on the left
  const points: HTMLElement[] = [];
  let bubble: HTMLElement | undefined;
  const focusable = sel.square || [...moves.keys()][0] || (black ? "i0" : "a9");
  for (let row = 0; row < 10; row++) for (let col = 0; col < 9; col++) {
    const file = black ? 8 - col : col;
    const rank = black ? row : 9 - row;
    const sq = `${FILES[file]}${rank}`;
    const p = pieces.get(sq);
    const movable = moves.has(sq);
    const dest = dests.has(sq);
    const red = p !== undefined && p === p.toUpperCase();
    const label = [p ? `${pieceName(p, ctx.lang)} (${ctx.t(red ? "xq.red" : "xq.black")})` : ctx.t("xq.empty"), sq,
      dest ? ctx.t(p ? "xq.capture" : "xq.dest") : "", lastSquares.has(sq) ? ctx.t("xq.last") : "",
      sq === checked ? ctx.t("xq.check") : ""].filter(Boolean).join(", ");
    const cls = ["xq-pt", movable ? "movable" : "", dest ? "dest" : "", sq === sel.square ? "picked" : "",
      lastSquares.has(sq) ? "last" : "", sq === checked ? "check" : ""].filter(Boolean).join(" ");
    const active = movable || dest;
    points.push(h("button", { type: "button", class: cls, "data-square": sq, "data-key": `sq:${sq}`,
      "data-row": row, "data-col": col, tabindex: sq === focusable ? 0 : -1, "aria-label": label,
      "aria-disabled": active ? undefined : "true", "aria-pressed": movable ? String(sq === sel.square) : undefined,
      onclick: active ? () => pick(sq) : () => refuse(sq, p) },
    p ? h("span", { class: `xq-piece ${red ? "red" : "black"}`, "aria-hidden": "true", "data-native": "" }, GLYPH[p] ?? p) : null));
    if (why?.square === sq) {  // beside the point, on the board (not inside the button: its name stays the point's)
      const b = h("span", { class: `why-bubble${col < 3 ? " from-left" : col > 5 ? " from-right" : ""}`, role: "status" }, why.text);
      b.style.left = `${((col + (col < 3 ? 0 : col > 5 ? 1 : 0.5)) / 9) * 100}%`;
      b.style.top = `${(row / 10) * 100}%`;
      bubble = b;
    }
  }
  const grid = h("div", { class: "xq-grid", role: "group", "aria-label": ctx.t("xq.board"), "data-zone": "board" }, lines(), points, bubble);
  gridKeys(grid, 9);

  const seat = (s: number) => {
    const clock = Number(v.clocksMs[s] ?? 0n);
    return seatBadge({ name: ctx.name(s), initial: ctx.initial(s), me: s === me, toMove: s === toMove && !v.finished, deadlineMs: v.deadlineMs,
      auto: ctx.autoPlayed(s), key: `seat:${s}`,
      lines: [h("span", { class: `xq-side ${s === 0 ? "red" : "black"}` }, ctx.t(s === 0 ? "xq.red" : "xq.black")),
        clock > 0 && s !== toMove ? h("span", {}, ctx.t("xq.clock", { s: mmss(clock, ctx) })) : null] }, ctx.t("table.auto"));
  };
  const top = black ? 0 : 1;
  const accept = legalOf("acceptDraw");
  const decline = legalOf("declineDraw");
  const offerer = v.drawOffer === undefined ? undefined : Number(v.drawOffer);
  const prompt = v.finished || me === undefined ? null
    : toMove === me ? h("p", { class: "hint" }, ctx.t(sel.square ? "xq.to" : "xq.pick"))
      : h("p", { class: "hint" }, ctx.t("xq.wait", { name: ctx.name(toMove < 0 ? 1 - me : toMove) }));
  const go = (c: Message) => () => { sel.confirm = false; ctx.send(c); };
  const controls = playing ? h("div", { class: "actions" },
    offerer !== undefined && offerer !== me && (accept || decline) ? [
      h("p", { class: "banner window" }, ctx.t("xq.offered", { name: ctx.name(offerer) })),
      button(ctx.t("xq.accept"), accept ? go(accept) : undefined, { kind: "primary", key: "act:accept", attrs: { "data-act": "accept" } }),
      button(ctx.t("xq.decline"), decline ? go(decline) : undefined, { key: "act:decline", attrs: { "data-act": "decline" } })] : null,
    button(ctx.t("xq.offer"), v.mayOfferDraw ? go(create(OfferDrawSchema)) : undefined, { key: "act:offer", attrs: { "data-act": "offer" } }),
    sel.confirm ? [h("span", { class: "xq-sure" }, ctx.t("xq.sure")),
      button(ctx.t("xq.yes"), go(create(ResignSchema)), { kind: "danger", key: "act:resign-yes", attrs: { "data-act": "resign-yes" } }),
      button(ctx.t("xq.no"), () => { sel.confirm = false; ctx.rerender(); }, { key: "act:resign-no", attrs: { "data-act": "resign-no" } })]
      : button(ctx.t("xq.resign"), () => { sel.confirm = true; ctx.rerender(); }, { kind: "quiet", key: "act:resign", attrs: { "data-act": "resign" } })) : null;
  const played = v.moves.length ? h("ol", { class: "xq-moves", "aria-label": ctx.t("xq.moves"), "data-native": "" },
    v.moves.slice(-12).map((m, i, arr) => h("li", { class: i === arr.length - 1 ? "last" : "", value: v.moves.length - arr.length + i + 1 }, m.chinese || m.move))) : null;
  return h("div", { class: `xq${black ? " flipped" : ""}`, "data-legal": v.legalMoves.reduce((n, p) => n + p.to.length, 0) + v.legal.length,
    "data-turn": toMove === me && !v.finished ? "mine" : "", "data-plies": v.moves.length },
  ring([h("div", { class: "xq-seat", "data-seat": top }, seat(top))]),
  v.inCheck && !v.finished ? h("p", { class: "banner window xq-checkline", role: "status" }, ctx.t("xq.check")) : null,
  h("div", { class: "xq-wrap" }, grid, played),
  dock(h("div", { class: "me-line" }, seat(1 - top), me === undefined ? h("p", { class: "hint" }, ctx.t("xq.spectating")) : prompt),
    controls));
}

/** A clock's milliseconds as m:ss. */
function mmss(ms: number, ctx: BoardContext): string {
  const s = Math.ceil(ms / 1000);
  return ctx.t("xq.time", { m: Math.floor(s / 60), s: String(s % 60).padStart(2, "0") });
}

const SVG = "http://www.w3.org/2000/svg";

function svg(tag: string, attrs: Record<string, string | number>, ...kids: (Element | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const k of kids) el.append(k);
  return el;
}

/** The board's lines in units of one point (centres at .5): ranks, files broken by the river,
 * the palaces' diagonals, the river's words. The same drawing from either side. */
function lines(): SVGElement {
  const ls: SVGElement[] = [];
  const line = (x1: number, y1: number, x2: number, y2: number) => ls.push(svg("line", { x1, y1, x2, y2 }));
  for (let r = 0; r < 10; r++) line(0.5, r + 0.5, 8.5, r + 0.5);
  for (let c = 0; c < 9; c++) {
    if (c === 0 || c === 8) line(c + 0.5, 0.5, c + 0.5, 9.5);
    else { line(c + 0.5, 0.5, c + 0.5, 4.5); line(c + 0.5, 5.5, c + 0.5, 9.5); }
  }
  line(3.5, 0.5, 5.5, 2.5); line(5.5, 0.5, 3.5, 2.5); line(3.5, 7.5, 5.5, 9.5); line(5.5, 7.5, 3.5, 9.5);
  return svg("svg", { class: "xq-lines", viewBox: "0 0 9 10", preserveAspectRatio: "none", "aria-hidden": "true" },
    svg("g", { class: "ln" }, ...ls),
    svg("text", { x: 2.5, y: 5.18, class: "river", "data-native": "" }, "楚 河"), svg("text", { x: 6.5, y: 5.18, class: "river", "data-native": "" }, "汉 界"));
}

/** Arrow keys move the focus over a grid of `cols` columns (one tab stop: roving tabindex). */
function gridKeys(root: HTMLElement, cols: number): void {
  root.addEventListener("keydown", (e) => {
    const step: Record<string, number> = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -cols, ArrowDown: cols };
    if (!(e.key in step)) return;
    const items = [...root.querySelectorAll<HTMLElement>("button")];
    const at = items.indexOf(document.activeElement as HTMLElement);
    if ((e.key === "ArrowLeft" && at % cols === 0) || (e.key === "ArrowRight" && at % cols === cols - 1)) return;
    const next = items[at < 0 ? 0 : at + step[e.key]!];
    if (!next) return;
    for (const b of items) b.tabIndex = -1;
    next.tabIndex = 0;
    next.focus();
    e.preventDefault();
  });
}
