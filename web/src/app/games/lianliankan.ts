// 连连看 (Nối thú): one's own copy of the layout, tiles drawn as pictures of animals (Twemoji), the
// empty ring around the board where a link may run, and every seat's remaining count (a race:
// everybody plays at once). One clicks a tile, then its partner: when the two are a pair of the
// view's legal_pairs the removal is sent and the pair's path (the one its Removed event carries)
// is drawn across the board while the tiles vanish. As the game is played: every tile may be
// clicked and nothing shows which tiles pair (the rules have no hint: "Hints/undo are not part of
// the competitive game"); a second click that is no legal pair says why next to that tile ("not
// the same" / "no line with two turns or fewer") and picks it instead. On a narrow screen the
// board stands upright (rows and columns swapped) and fills the screen's height. 离开 (leave) is
// in the legal list; it asks once more.
import { create, type Message } from "@bufbuild/protobuf";
import { RemoveSchema, type Command, type Pair, type View } from "../../../gen/chieu/games/lianliankan/v1/lianliankan_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { button, h, ring, seatBadge } from "../ui/kit.js";

export const words: Catalog = {
  en: { "llk.board": "Your board: arrow keys move, Enter picks a tile", "llk.left": "{n} tiles left", "llk.cell": "{p}, row {r}, column {c}",
    "llk.pick": "Click a tile, then its twin: a line of at most two turns must join them.", "llk.partner": "Now its twin.",
    "llk.leave": "Leave the game", "llk.sure": "Leave and rank last?", "llk.yes": "Yes, leave", "llk.no": "Keep playing",
    "llk.gone": "left", "llk.done": "cleared", "llk.spectating": "Watching: every player clears a copy of the same board.",
    "llk.timeLeft": "Time left", "llk.race": "Race", "llk.notSame": "Not the same", "llk.noPath": "No line with ≤ 2 turns" },
  vi: { "llk.board": "Bàn của bạn: phím mũi tên để di chuyển, Enter để chọn", "llk.left": "còn {n} quân", "llk.cell": "{p}, hàng {r}, cột {c}",
    "llk.pick": "Chọn một quân rồi chọn quân giống nó: đường nối rẽ tối đa hai lần.", "llk.partner": "Giờ chọn quân giống nó.",
    "llk.leave": "Rời ván", "llk.sure": "Rời ván và xếp cuối?", "llk.yes": "Rời ván", "llk.no": "Chơi tiếp",
    "llk.gone": "đã rời", "llk.done": "đã xong", "llk.spectating": "Đang xem: mỗi người chơi xoá một bản của cùng một bàn.",
    "llk.timeLeft": "Thời gian còn", "llk.race": "Cuộc đua", "llk.notSame": "Không giống nhau", "llk.noPath": "Không nối được (quá 2 lần rẽ)" },
  zh: { "llk.board": "你的棋盘：方向键移动，回车选牌", "llk.left": "剩 {n} 张", "llk.cell": "{p}，第 {r} 行第 {c} 列",
    "llk.pick": "先点一张牌，再点与它相同的牌：连线最多拐两个弯。", "llk.partner": "再点与它相同的牌。",
    "llk.leave": "离开本局", "llk.sure": "离开并排在最后？", "llk.yes": "确定离开", "llk.no": "继续",
    "llk.gone": "已离开", "llk.done": "已消完", "llk.spectating": "旁观中：每位玩家消同一盘牌的一份。",
    "llk.timeLeft": "剩余时间", "llk.race": "比赛", "llk.notSame": "图案不同", "llk.noPath": "连不上（超过两个弯）" },
};

/** The patterns' names for screen readers: animals (连连看's classic theme); the tile shows the
 * animal's picture (picture(), in the same order). */
const FACES = "鼠牛虎兔龙蛇马羊猴鸡狗猪猫熊鹿鹤龟鱼鹰燕鸭鹅蛙蝶蜂狮象狼狐豹蟹虾蚁雀鲸蝉";
const face = (p: number) => FACES[(p - 1) % FACES.length] ?? "?";
/** The animals drawn (the sprite's order, scripts/build.mjs) named in vi and en for a screen reader. */
const ANIMAL: Record<"vi" | "en", string[]> = {
  vi: ["Chuột", "Bò", "Hổ", "Thỏ", "Rồng", "Rắn", "Ngựa", "Cừu", "Khỉ", "Gà trống", "Chó", "Lợn", "Mèo", "Gấu", "Hươu", "Hồng hạc",
    "Rùa", "Cá", "Đại bàng", "Bồ câu", "Vịt", "Thiên nga", "Ếch", "Bướm", "Ong", "Sư tử", "Voi", "Sói", "Cáo", "Báo", "Cua", "Tôm",
    "Kiến", "Vẹt", "Cá voi", "Dế"],
  en: ["Mouse", "Cow", "Tiger", "Rabbit", "Dragon", "Snake", "Horse", "Sheep", "Monkey", "Rooster", "Dog", "Pig", "Cat", "Bear", "Deer",
    "Flamingo", "Turtle", "Fish", "Eagle", "Dove", "Duck", "Swan", "Frog", "Butterfly", "Bee", "Lion", "Elephant", "Wolf", "Fox",
    "Leopard", "Crab", "Shrimp", "Ant", "Parrot", "Whale", "Cricket"],
};
const faceName = (p: number, lang: string) =>
  lang === "vi" || lang === "en" ? ANIMAL[lang][(p - 1) % FACES.length] ?? "?" : face(p);

/** A pattern's picture: an animal from Twemoji (CC BY 4.0), a symbol of the sprite llk-tiles.svg
 * the build writes from @iconify-json/twemoji (fetched once, only where a 连连看 board shows). */
function picture_(p: number): SVGElement {
  const el = document.createElementNS(SVG, "svg");
  el.setAttribute("class", "pic");
  el.setAttribute("aria-hidden", "true");
  const use = document.createElementNS(SVG, "use");
  use.setAttribute("href", `llk-tiles.svg#t${((p - 1) % FACES.length) + 1}`);
  el.append(use);
  return el;
}
const cellKey = (r: bigint | number, c: bigint | number) => `${r},${c}`;
/** Which way a tile's "why" opens, so it never reaches past the board's sides. */
const edge = (i: number, n: number) => (i < n / 3 ? " from-left" : i >= (2 * n) / 3 ? " from-right" : "");

/** Boards drawn since the page loaded redraw when the screen turns (upright ↔ wide). */
const narrow = typeof matchMedia === "function" ? matchMedia("(max-width: 640px)") : undefined;
let redrawOnTurn: (() => void) | undefined;
narrow?.addEventListener("change", () => redrawOnTurn?.());

/** Home's picture: two twin tiles joined by a line. */
export const picture = (): HTMLElement => h("div", { class: "game-pic llk-pic", "aria-hidden": "true" },
  h("span", { class: "llk-tile" }, picture_(10)), h("span", { class: "llk-link" }), h("span", { class: "llk-tile" }, picture_(10)));

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const rows = Number(v.rows);
  const cols = Number(v.cols);
  const me = Number(v.seat);
  const upright = narrow?.matches ?? false;
  redrawOnTurn = ctx.rerender;
  const st = ctx.state("llk", () => ({ picked: "", confirm: false, path: [] as { r: number; c: number }[], at: 0,
    why: { cell: "", text: "", at: 0 }, paths: 0 }));
  // each tile's partners among the legal pairs
  const partners = new Map<string, Map<string, Pair>>();
  for (const p of v.legalPairs) {
    if (!p.first || !p.second) continue;
    const a = cellKey(p.first.row, p.first.col);
    const b = cellKey(p.second.row, p.second.col);
    if (!partners.has(a)) partners.set(a, new Map());
    if (!partners.has(b)) partners.set(b, new Map());
    partners.get(a)!.set(b, p);
    partners.get(b)!.set(a, p);
  }
  const at = (r: number, c: number) => (r < 0 || c < 0 || r >= rows || c >= cols ? 0 : Number(v.board[r * cols + c] ?? 0n));
  const patternOf = (k: string) => { const [r, c] = k.split(",").map(Number); return at(r!, c!); };
  if (st.picked && patternOf(st.picked) === 0) st.picked = "";
  const leave = v.legal.find((c: Command) => c.command.case === "leave");
  const click = (k: string) => {
    const pair = st.picked ? partners.get(st.picked)?.get(k) : undefined;
    if (pair) {
      st.picked = "";
      st.path = pair.path.map((pt) => ({ r: Number(pt.row), c: Number(pt.col) }));
      st.at = Date.now();
      if (st.path.length >= 2) st.paths++;  // drawn with this very redraw (pathLine)
      ctx.send(create(RemoveSchema, { first: pair.first, second: pair.second }));  // what the Pair stands for
      ctx.rerender();  // the path at once, over the two tiles until the next view takes them away
      return;
    }
    if (st.picked && st.picked !== k) {  // no legal pair: say why, next to the tile, and pick it instead
      st.why = { cell: k, text: ctx.t(patternOf(st.picked) === patternOf(k) ? "llk.noPath" : "llk.notSame"), at: Date.now() };
      setTimeout(ctx.rerender, WHY_MS + 50);
    }
    st.picked = st.picked === k ? "" : k;
    ctx.rerender();
  };
  const grid: HTMLElement | null = me >= 0 && rows > 0 ? (() => {
    // (rows + 2) × (cols + 2): the empty ring around the board, where paths may run
    const cells: HTMLElement[] = [];
    const firstFull = v.board.findIndex((p) => p > 0n);
    const focusable = st.picked || (firstFull >= 0 ? cellKey(Math.floor(firstFull / cols), firstFull % cols) : "");
    const why = st.why.text && Date.now() - st.why.at < WHY_MS ? st.why : undefined;
    // upright: the display's rows are the board's columns (CSS grid-auto-flow: column)
    for (let r = -1; r <= rows; r++) for (let c = -1; c <= cols; c++) {
      const p = at(r, c);
      const k = cellKey(r, c);
      const ring = r < 0 || c < 0 || r >= rows || c >= cols;
      if (ring || p === 0) { cells.push(h("span", { class: ring ? "llk-ring" : "llk-gap", "aria-hidden": "true" })); continue; }
      cells.push(h("button", { type: "button", class: `llk-tile p${(p - 1) % 9}${k === st.picked ? " picked" : ""}`,
        "data-tile": String(p), "data-cell": k, "data-key": `cell:${k}`, tabindex: k === focusable ? 0 : -1,
        "aria-label": ctx.t("llk.cell", { p: faceName(p, ctx.lang), r: r + 1, c: c + 1 }) + (why?.cell === k ? `, ${why.text}` : ""), "aria-pressed": String(k === st.picked),
        onclick: () => click(k) }, picture_(p),
        why?.cell === k ? h("span", { class: `why${edge(upright ? r : c, upright ? rows : cols)}` }, why.text) : null));
    }
    const g = h("div", { class: `llk-grid${upright ? " upright" : ""}`, role: "group", "aria-label": ctx.t("llk.board"), "data-zone": "board",
      "data-rows": rows, "data-cols": cols }, cells, pathLine(st, rows, cols, upright));
    // sizes through the CSSOM (the CSP allows no style attribute): tiles 5:6, the ring half a tile
    g.style.setProperty("--llk-c", String(cols));
    g.style.setProperty("--llk-r", String(rows));
    // upright (a phone) the board takes the screen's height left (CSS), wide it keeps its shape
    if (!upright) g.style.aspectRatio = `${cols + 2 * RING} / ${(rows + 2 * RING) * TALL}`;
    cellKeys(g, upright ? rows + 2 : cols + 2);
    return g;
  })() : null;
  const finished = v.finished;
  const seats = v.remaining.map((n, s) => seatBadge({
    name: ctx.name(s), initial: ctx.initial(s), me: s === me, auto: ctx.autoPlayed(s), key: `seat:${s}`,
    lines: [h("span", { class: "llk-count", "data-seat": s }, v.active[s] === false && Number(n) > 0 ? ctx.t("llk.gone")
      : Number(n) === 0 ? ctx.t("llk.done") : ctx.t("llk.left", { n })),
    h("progress", { max: rows * cols || 1, value: rows * cols - Number(n), "aria-label": `${ctx.name(s)}: ${ctx.t("llk.left", { n })}` })],
  }, ctx.t("table.auto")));
  const clock = Number(v.deadlineMs) > 0 && !finished
    ? h("span", { class: "pill llk-clock" }, ctx.t("llk.timeLeft"), " ", h("span", { class: "clock", "data-deadline": Number(v.deadlineMs) })) : null;
  const go = () => { st.confirm = false; if (leave) ctx.send(leave); };
  return h("div", { class: "llk", "data-legal": v.legalPairs.length + v.legal.length, "data-pairs": v.legalPairs.length,
    "data-paths": st.paths,  // how many removals this page sent with their path drawn (tests)
    // the legal pairs, for tests that play by clicks (the board itself shows none of them)
    "data-offers": JSON.stringify(v.legalPairs.map((p) => [cellKey(p.first?.row ?? 0, p.first?.col ?? 0), cellKey(p.second?.row ?? 0, p.second?.col ?? 0)])) },
    h("div", { class: "llk-top" },
      ring(seats.map((b, s) => h("div", { class: "llk-seat", "data-seat": s }, b)), "llk-seats"),
      clock,
      me >= 0 && !finished && leave ? h("div", { class: "actions llk-leave" }, st.confirm
        ? [h("span", { class: "xq-sure" }, ctx.t("llk.sure")),
          button(ctx.t("llk.yes"), go, { kind: "danger", key: "act:leave-yes", attrs: { "data-act": "leave-yes" } }),
          button(ctx.t("llk.no"), () => { st.confirm = false; ctx.rerender(); }, { key: "act:leave-no", attrs: { "data-act": "leave-no" } })]
        : button(ctx.t("llk.leave"), () => { st.confirm = true; ctx.rerender(); }, { kind: "quiet", key: "act:leave", attrs: { "data-act": "leave" } })) : null),
    grid ?? h("p", { class: "hint" }, ctx.t("llk.spectating")),
    me >= 0 && !finished ? h("p", { class: "hint" }, ctx.t(st.picked ? "llk.partner" : "llk.pick")) : null);
}

const SVG = "http://www.w3.org/2000/svg";
const SHOW_MS = 900;
/** How long the why of a refused pair stays next to the tile. */
const WHY_MS = 1400;
/** The ring's width in tiles (CSS .llk-grid: .5fr) and a tile's height over its width. */
const RING = 0.5;
const TALL = 1.2;

/** The centre of line i of n on the drawing (the ring at -1 and n is RING wide). */
const centre = (i: number, n: number) => (i < 0 ? RING / 2 : i >= n ? RING + n + RING / 2 : RING + i + 0.5);

/** The last removal's path (its corner points, from the legal pair the removal was sent as),
 * drawn over the board for a moment: a polyline through the centres of the cells, in a viewBox
 * of one unit per cell with the ring around (so ring points at -1 and rows/cols fit). */
function pathLine(st: { path: { r: number; c: number }[]; at: number }, rows: number, cols: number, upright: boolean): SVGElement | null {
  const age = Date.now() - st.at;
  if (st.path.length < 2 || age > SHOW_MS) return null;
  const w = (upright ? rows : cols) + 2 * RING;
  const hgt = (upright ? cols : rows) + 2 * RING;
  const points = st.path.map(({ r, c }) => (upright ? `${centre(r, rows)},${centre(c, cols)}` : `${centre(c, cols)},${centre(r, rows)}`)).join(" ");
  const el = document.createElementNS(SVG, "svg");
  el.setAttribute("class", "llk-path");
  el.setAttribute("viewBox", `0 0 ${w} ${hgt}`);
  el.setAttribute("preserveAspectRatio", "none");
  el.setAttribute("aria-hidden", "true");
  el.style.animationDelay = `-${age}ms`;
  const line = document.createElementNS(SVG, "polyline");
  line.setAttribute("points", points);
  line.setAttribute("vector-effect", "non-scaling-stroke");
  el.append(line);
  return el;
}

/** Arrow keys move the focus among the tiles that may be picked, by their place on screen (one
 * tab stop for the board). */
function cellKeys(root: HTMLElement, across: number): void {
  root.addEventListener("keydown", (e) => {
    const dir: Record<string, [number, number]> = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
    const d = dir[e.key];
    if (!d) return;
    const all = [...root.children].filter((x) => x instanceof HTMLElement && !(x instanceof SVGElement)) as HTMLElement[];
    const upright = root.classList.contains("upright");
    const down = Number(root.dataset[upright ? "cols" : "rows"]) + 2;
    // the display position of child i: row-major, or column-major when upright
    const pos = (i: number): [number, number] => (upright ? [Math.floor(i / down), i % down] : [i % across, Math.floor(i / across)]);
    const index = (x: number, y: number) => (upright ? x * down + y : y * across + x);
    const at = all.indexOf(document.activeElement as HTMLElement);
    if (at < 0) return;
    let [x, y] = pos(at);
    for (;;) {
      x += d[0]; y += d[1];
      if (x < 0 || y < 0 || x >= across || y >= down) return;
      const next = all[index(x, y)];
      if (next instanceof HTMLButtonElement && !next.disabled) {
        for (const b of all) if (b instanceof HTMLButtonElement) b.tabIndex = -1;
        next.tabIndex = 0;
        next.focus();
        e.preventDefault();
        return;
      }
    }
  });
}
