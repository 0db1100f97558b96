// 洪洞王牌麻将 (Hongdong mahjong with wild tiles): every seat's melds (碰, 明杠, 补杠, 暗杠 face down
// for the others), its pond of discards and its declaration (报听, 硬扣), the wall and the
// indicator, the claim window on the tile just discarded, and one's own hand with the drawn tile
// apart. The wild tiles (赖子 / laizi: the seat's laizi where it is public, and 王) carry a mark.
// One clicks a tile, then 打 (discard), 报听 or 硬扣 — each enabled only when the view's legal
// list holds that discard; 胡 (自摸), 杠, 碰 and 过 are buttons for their legal entries, and the
// 对王大将报 choice is one button per pair offered.
import type { Message } from "@bufbuild/protobuf";
import { Declare, MeldType, Phase, type Command, type MeldView, type View } from "../../../gen/chieu/games/mahjong/v1/mahjong_pb.js";
import type { BoardContext } from "../board.js";
import { lang, type Catalog, type Language } from "../i18n/index.js";
import { arrowKeys, button, changedAt, dock, fx, h, refuse, ring, seatBadge, whyAt, whyStatus, type Child } from "../ui/kit.js";

export const words: Catalog = {
  en: { "mj.hand": "Your tiles", "mj.drawn": "Drawn", "mj.discard": "Discard", "mj.ting": "报听 — declare ready", "mj.yingkou": "硬扣",
    "mj.win": "胡 — win (自摸)", "mj.peng": "碰", "mj.gang": "杠 {t}", "mj.pass": "Pass", "mj.pair": "对王: pair {t}",
    "mj.claim": "{name} discarded {t}: 碰 or 杠 it, or pass.", "mj.claimOthers": "Claim window on {t}.",
    "mj.pick": "Pick a tile to discard.", "mj.pickPair": "对王大将报: choose the pair that becomes your laizi.",
    "mj.wall": "Wall {n}", "mj.live": "{n} draws left", "mj.indicator": "Indicator", "mj.laizi": "Laizi",
    "mj.waits": "Waiting on", "mj.dealer": "Dealer", "mj.tiles": "{n} tiles", "mj.pond": "Discards",
    "mj.concealed": "Hand", "mj.wallLeft": "Left in the wall",
    "mj.wild": "wild", "mj.ting.tag": "报听", "mj.yingkou.tag": "硬扣", "mj.won": "{name} won on {t} (自摸): {n} points",
    "mj.drawnGame": "荒庄 — nobody won.", "mj.spectating": "Watching: hands are hidden.", "mj.hidden": "face down",
    "mj.peng.m": "碰", "mj.minggang.m": "明杠", "mj.bugang.m": "补杠", "mj.angang.m": "暗杠", "mj.from": "from {name}",
    "mj.winning": "Winning hand", "mj.other": "other" ,
    "mj.cannot": "Not this tile now", "mj.answerFirst": "Claim it or pass first" },
  vi: { "mj.hand": "Bài của bạn", "mj.drawn": "Vừa bốc", "mj.discard": "Đánh", "mj.ting": "报听 — báo sẵn", "mj.yingkou": "硬扣",
    "mj.win": "胡 — ù (自摸)", "mj.peng": "碰", "mj.gang": "杠 {t}", "mj.pass": "Bỏ qua", "mj.pair": "对王: đôi {t}",
    "mj.claim": "{name} đánh {t}: 碰 hoặc 杠, hoặc bỏ qua.", "mj.claimOthers": "Đang chờ 碰/杠 quân {t}.",
    "mj.pick": "Chọn một quân để đánh.", "mj.pickPair": "对王大将报: chọn đôi làm laizi của bạn.",
    "mj.wall": "Tường {n}", "mj.live": "còn {n} lượt bốc", "mj.indicator": "Quân chỉ", "mj.laizi": "Laizi",
    "mj.waits": "Đang chờ", "mj.dealer": "Cái", "mj.tiles": "{n} quân", "mj.pond": "Quân đã đánh",
    "mj.concealed": "Bài trên tay", "mj.wallLeft": "Còn trong tường",
    "mj.wild": "quân tự do", "mj.ting.tag": "报听", "mj.yingkou.tag": "硬扣", "mj.won": "{name} ù quân {t} (自摸): {n} điểm",
    "mj.drawnGame": "荒庄 — không ai ù.", "mj.spectating": "Đang xem: bài được giấu.", "mj.hidden": "úp",
    "mj.peng.m": "碰", "mj.minggang.m": "明杠", "mj.bugang.m": "补杠", "mj.angang.m": "暗杠", "mj.from": "của {name}",
    "mj.winning": "Bài ù", "mj.other": "khác" ,
    "mj.cannot": "Chưa đánh được quân này", "mj.answerFirst": "Hãy ăn quân vừa đánh hoặc bỏ qua" },
  zh: { "mj.hand": "你的手牌", "mj.drawn": "摸到", "mj.discard": "打出", "mj.ting": "报听", "mj.yingkou": "硬扣",
    "mj.win": "胡（自摸）", "mj.peng": "碰", "mj.gang": "杠 {t}", "mj.pass": "过", "mj.pair": "对王：{t} 对",
    "mj.claim": "{name}打出 {t}：碰、杠或过。", "mj.claimOthers": "等待碰杠 {t}。",
    "mj.pick": "选一张牌打出。", "mj.pickPair": "对王大将报：选一对作为你的赖子。",
    "mj.wall": "牌墙 {n}", "mj.live": "还可摸 {n} 张", "mj.indicator": "翻牌", "mj.laizi": "赖子",
    "mj.waits": "听牌", "mj.dealer": "庄", "mj.tiles": "{n} 张", "mj.pond": "弃牌", "mj.concealed": "手牌", "mj.wallLeft": "牌墙余牌",
    "mj.wild": "赖子", "mj.ting.tag": "报听", "mj.yingkou.tag": "硬扣", "mj.won": "{name}自摸 {t}：{n} 分",
    "mj.drawnGame": "荒庄，无人胡牌。", "mj.spectating": "旁观中：手牌不可见。", "mj.hidden": "扣着",
    "mj.peng.m": "碰", "mj.minggang.m": "明杠", "mj.bugang.m": "补杠", "mj.angang.m": "暗杠", "mj.from": "来自{name}",
    "mj.winning": "胡牌", "mj.other": "其他" ,
    "mj.cannot": "现在不能打这张", "mj.answerFirst": "先碰、杠或过" },
};

/** The scoring items' native names (番种), from the rules file's codes. */
const ITEMS: Record<string, string> = {
  pinghu: "平胡", qidui: "七对", diaowang: "吊王", danyuanhu: "单元胡", full_flush: "清一色", half_flush: "混一色",
  loushanglou: "楼上楼", yitiaolong: "一条龙", ziyise: "字一色", dragon_runs: "中发白", wind_runs: "东南西北",
  peng: "碰", ming_gang: "明杠", bu_gang: "补杠", an_gang: "暗杠",
};
const NUM = "一二三四五六七八九";
const SUIT: Record<string, string> = { m: "万", s: "条", p: "筒" };
const HONOR: Record<string, string> = { E: "东", S: "南", W: "西", N: "北", "中": "中", "发": "发", "白": "白", "王": "王" };

/** A tile's name as players write it (五万, 三条, 东, 中, 王). */
const SUIT_WORD: Record<"vi" | "en", Record<string, string>> = {
  vi: { m: "vạn", s: "sách", p: "đồng" }, en: { m: "Characters", s: "Bamboo", p: "Dots" } };
/** The numbers of a suit tile as Vietnamese players say them (Nhất vạn, Ngũ sách, Cửu đồng). */
const VI_NUM = ["Nhất", "Nhị", "Tam", "Tứ", "Ngũ", "Lục", "Thất", "Bát", "Cửu"];
const HONOR_WORD: Record<"vi" | "en", Record<string, string>> = {
  vi: { E: "Đông", S: "Nam", W: "Tây", N: "Bắc", "中": "Trung", "发": "Phát", "白": "Bạch", "王": "Vương" },
  en: { E: "East", S: "South", W: "West", N: "North", "中": "Red dragon", "发": "Green dragon", "白": "White dragon", "王": "King" } };

/** A tile's name in words: hanzi in Chinese ("五万"), "Ngũ vạn" / "5 Characters" in vi and en. */
export function tileName(t: string, lang: Language = "zh"): string {
  if (lang !== "zh") {
    const suit = SUIT_WORD[lang][t.slice(-1)];
    const n = lang === "vi" ? VI_NUM[Number(t[0]) - 1] ?? t[0] : t[0];
    return suit ? `${n} ${suit}` : HONOR_WORD[lang][t] ?? t;
  }
  const suit = SUIT[t.slice(-1)];
  return suit ? `${NUM[Number(t[0]) - 1] ?? t[0]}${suit}` : HONOR[t] ?? t;
}

const SVG_NS = "http://www.w3.org/2000/svg";
function svgEl(tag: string, attrs: Record<string, string | number>, ...kids: Node[]): SVGElement {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  el.append(...kids);
  return el;
}

/** Where the dots of 1–9 筒 lie on a 30 × 40 face, and their radius (the classic layouts). */
const DOTS: Record<number, { r: number; at: [number, number][] }> = {
  1: { r: 9, at: [[15, 20]] }, 2: { r: 5, at: [[15, 10.5], [15, 29.5]] }, 3: { r: 4.3, at: [[7.5, 8.5], [15, 20], [22.5, 31.5]] },
  4: { r: 5, at: [[9, 12], [21, 12], [9, 28], [21, 28]] }, 5: { r: 4.3, at: [[8.5, 9.5], [21.5, 9.5], [15, 20], [8.5, 30.5], [21.5, 30.5]] },
  6: { r: 4.2, at: [[9, 8.5], [21, 8.5], [9, 20], [21, 20], [9, 31.5], [21, 31.5]] },
  7: { r: 3.5, at: [[6.5, 6], [15, 10], [23.5, 14], [9, 24], [21, 24], [9, 33], [21, 33]] },
  8: { r: 3.6, at: [[9, 6.5], [21, 6.5], [9, 15.5], [21, 15.5], [9, 24.5], [21, 24.5], [9, 33.5], [21, 33.5]] },
  9: { r: 3.7, at: [[7, 8.5], [15, 8.5], [23, 8.5], [7, 20], [15, 20], [23, 20], [7, 31.5], [15, 31.5], [23, 31.5]] },
};
/** Where the sticks of 1–9 条 stand (centre x, centre y) and how tall they are. */
const STICKS: Record<number, { h: number; at: [number, number][] }> = {
  1: { h: 26, at: [[15, 20]] }, 2: { h: 13, at: [[15, 11], [15, 29]] }, 3: { h: 13, at: [[15, 11], [9, 29], [21, 29]] },
  4: { h: 13, at: [[9, 11], [21, 11], [9, 29], [21, 29]] }, 5: { h: 13, at: [[8, 11], [22, 11], [15, 20], [8, 29], [22, 29]] },
  6: { h: 13, at: [[7, 11], [15, 11], [23, 11], [7, 29], [15, 29], [23, 29]] },
  7: { h: 9, at: [[15, 7], [7, 20], [15, 20], [23, 20], [7, 32], [15, 32], [23, 32]] },
  8: { h: 9, at: [[6, 8], [12, 8], [18, 8], [24, 8], [6, 32], [12, 32], [18, 32], [24, 32]] },
  9: { h: 9, at: [[7, 8], [15, 8], [23, 8], [7, 20], [15, 20], [23, 20], [7, 32], [15, 32], [23, 32]] },
};
const LETTER: Record<string, string> = { E: "E", S: "S", W: "W", N: "N" };

/** A suit tile's picture: dots (筒) as rings, bamboo (条) as jointed sticks, so they read
 * without any hanzi; 万 keeps its numeral and character, with the number in the corner. */
function tileArt(t: string): SVGElement | null {
  const n = Number(t[0]);
  const suit = t.slice(-1);
  if (suit === "p" && DOTS[n]) {
    const d = DOTS[n]!;
    return svgEl("svg", { viewBox: "0 0 30 40", class: "art", "aria-hidden": "true" }, ...d.at.map(([x, y], i) =>
      svgEl("g", { class: `dot c${(i + n) % 3}` }, svgEl("circle", { cx: x, cy: y, r: d.r }), svgEl("circle", { cx: x, cy: y, r: d.r * 0.45, class: "in" }))));
  }
  if (suit === "s" && STICKS[n]) {
    const b = STICKS[n]!;
    return svgEl("svg", { viewBox: "0 0 30 40", class: "art", "aria-hidden": "true" }, ...b.at.map(([x, y], i) =>
      svgEl("g", { class: `stick${n === 1 || (n === 5 && i === 2) || (n === 7 && i === 0) || (n === 9 && i % 3 === 1) ? " red" : ""}` },
        svgEl("rect", { x: x - 1.9, y: y - b.h / 2, width: 3.8, height: b.h, rx: 1.6 }),
        svgEl("line", { x1: x - 1.9, x2: x + 1.9, y1: y, y2: y }))));
  }
  return null;
}

interface TileOpts { onclick?: () => void; selected?: boolean; wild?: boolean; small?: boolean; key: string; label?: string; mark?: string;
  /** The click is refused (it says why): aria-disabled, drawn idle. */
  refused?: boolean }

/** A mahjong tile drawn as a tile: 筒 as rings and 条 as sticks (pictures), 万 as its numeral
 * over 万 in red, the winds with their letter in the corner, 中 red, 发 green, 白 an empty blue
 * frame; every suit tile with its number in the corner. A wild tile (laizi, 王) with its corner
 * mark. A button when clickable. */
function mjTile(t: string, o: TileOpts, wildWord: string): HTMLElement {
  const suitKey = t.slice(-1);
  const suit = SUIT[suitKey];
  const art = t === "" ? null : tileArt(t);
  // the corner index: the number of a suit tile, a wind's letter (E S W N), so no hanzi is needed
  const corner = t === "" ? null : suit ? t[0]! : LETTER[t] ?? null;
  const face: Child[] = t === "" ? [] : art ? [art, h("span", { class: "corner", "aria-hidden": "true" }, corner)]
    : suit ? [h("span", { class: "n", "aria-hidden": "true" }, NUM[Number(t[0]) - 1] ?? t[0]), h("span", { class: "s", "aria-hidden": "true" }, suit), h("span", { class: "corner", "aria-hidden": "true" }, corner)]
      : t === "白" ? [h("span", { class: "white-frame", "aria-hidden": "true" })]
        : [h("span", { class: "h", "aria-hidden": "true" }, HONOR[t] ?? t), corner ? h("span", { class: "corner", "aria-hidden": "true" }, corner) : null];
  const cls = `mj-tile${suit ? ` suit-${suitKey}` : t === "中" ? " red" : t === "发" ? " green" : t === "王" ? " king" : t === "白" ? " white" : ""}${art ? " pictured" : ""}`
    + `${t === "" ? " back" : ""}${o.small ? " small" : ""}${o.selected ? " selected" : ""}${o.wild ? " wild" : ""}${o.mark ? ` ${o.mark}` : ""}`;
  // its name in the page's words (a screen reader's "Ngũ vạn", "5 Characters"), hanzi in Chinese
  const label = o.label ?? (t ? `${tileName(t, lang())}${o.wild ? ` (${wildWord})` : ""}` : "");
  const attrs = { class: cls, "data-tile": t, "data-key": o.key, "aria-label": label || undefined, "data-native": "" };
  if (!o.onclick) return h("span", { ...attrs, role: label ? "img" : undefined, "aria-hidden": label ? undefined : "true" }, face);
  const click = o.onclick;
  // a button is named by a hidden text (its face is aria-hidden), so name and content agree
  return h("button", { ...attrs, "aria-label": undefined, type: "button", "aria-pressed": o.refused ? undefined : o.selected ? "true" : "false",
    "aria-disabled": o.refused ? "true" : undefined, onclick: () => click() },
    face, h("span", { class: "sr" }, label));
}

/** Home's picture: three tiles: 筒, 条 and 中. */
export const picture = (): HTMLElement => h("div", { class: "game-pic", "aria-hidden": "true" },
  mjTile("5p", { key: "pic:p" }, ""), mjTile("3s", { key: "pic:s" }, ""), mjTile("中", { key: "pic:z" }, ""));

/** Its rounds are dealt hands ("Hand 2"), not games. */
export const rounds = "hands";

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const me = Number(v.seat);
  const mine = me >= 0;
  const sel = ctx.state("mj.sel", () => ({ tile: "" }));
  const of = (k: NonNullable<Command["command"]["case"]>) => v.legal.filter((c) => c.command.case === k);
  const discards = of("discard").map((c) => c.command.value as { tile: string; declare: Declare });
  const discardOf = (t: string, d: Declare) => of("discard").find((c) => {
    const x = c.command.value as { tile: string; declare: Declare };
    return x.tile === t && (x.declare === d || (d === Declare.NONE && x.declare === Declare.UNSPECIFIED));
  });
  const discardable = new Set(discards.map((d) => d.tile));
  if (sel.tile && !discardable.has(sel.tile)) sel.tile = "";
  // only one tile may be discarded: it is picked at once
  if (!sel.tile && discardable.size === 1) sel.tile = [...discardable][0]!;
  const myView = v.players.find((p) => Number(p.seat) === me);
  const myLaizi = myView?.laizi ?? "";
  const wild = (t: string, laizi: string) => t === "王" || (laizi !== "" && t === laizi);
  const wildWord = ctx.t("mj.wild");
  const name = (s: number) => ctx.name(s);
  const send = (c: Command | undefined) => (c ? () => { sel.tile = ""; ctx.send(c); } : undefined);
  const turn = Number(v.turn);
  const over = v.phase === Phase.OVER;

  const meldView = (m: MeldView, s: number, i: number) => {
    const type = m.meldType;
    const n = type === MeldType.PENG ? 3 : 4;
    const kind = type === MeldType.PENG ? "mj.peng.m" : type === MeldType.MING_GANG ? "mj.minggang.m" : type === MeldType.BU_GANG ? "mj.bugang.m" : "mj.angang.m";
    const from = Number(m.fromSeat);
    return h("span", { class: "mj-meld", "data-meld": kind.slice(3, -2), title: ctx.t(kind) },
      h("small", {}, ctx.t(kind), from >= 0 && from !== s ? ` · ${ctx.t("mj.from", { name: name(from) })}` : ""),
      Array.from({ length: n }, (_, j) => mjTile(type === MeldType.AN_GANG && (j === 0 || j === 3) ? "" : m.tile, {
        small: true, key: `meld:${s}:${i}:${j}`, wild: m.tile !== "" && wild(m.tile, s === me ? myLaizi : ""),
        label: m.tile === "" ? ctx.t("mj.hidden") : undefined }, wildWord)));
  };
  const seatBox = (p: View["players"][number]) => {
    const s = Number(p.seat);
    const tag = p.declared === Declare.TING ? "mj.ting.tag" : p.declared === Declare.YING_KOU ? "mj.yingkou.tag" : "";
    const claimFrom = v.phase === Phase.CLAIM && Number(v.claimFrom) === s;
    return h("div", { class: `mj-seat${s === me ? " me" : ""}`, "data-seat": s },
      seatBadge({ name: name(s), initial: ctx.initial(s), me: s === me, toMove: !over && turn === s && v.phase === Phase.TURN, deadlineMs: v.deadlineMs,
        auto: ctx.autoPlayed(s), key: `seat:${s}`,
        lines: [s === Number(v.dealer) ? h("span", { class: "tag" }, ctx.t("mj.dealer")) : null,
          tag ? h("span", { class: "tag ting" }, ctx.t(tag)) : null,
          s !== me ? h("span", {}, ctx.t("mj.tiles", { n: p.concealedCount })) : null,
          p.laizi ? h("span", { class: "mj-laizi-line" }, `${ctx.t("mj.laizi")}: `, mjTile(p.laizi, { small: true, wild: true, key: `lz:${s}` }, wildWord)) : null] },
      ctx.t("table.auto")),
      p.melds.length || p.exposedLaizi.length ? h("div", { class: "mj-melds" }, p.melds.map((m, i) => meldView(m, s, i)),
        p.exposedLaizi.length ? h("span", { class: "mj-meld" }, h("small", {}, ctx.t("mj.laizi")),
          p.exposedLaizi.map((t, j) => mjTile(t, { small: true, wild: true, key: `ex:${s}:${j}` }, wildWord))) : null) : null,
      // once the hand is over the concealed tiles are laid open (PlayerView.concealed)
      s !== me && p.concealed.length ? h("div", { class: "mj-concealed", "data-concealed": s, role: "group", "aria-label": `${name(s)}: ${ctx.t("mj.concealed")}` },
        h("small", {}, ctx.t("mj.concealed")), p.concealed.map((t, j) => mjTile(t, { small: true, key: `open:${s}:${j}`, wild: wild(t, p.laizi) }, wildWord))) : null,
      h("div", { class: "mj-pond", role: "group", "aria-label": `${name(s)}: ${ctx.t("mj.pond")}` },
        p.discards.map((t, j) => {
          const el = mjTile(t, { small: true, key: `pond:${s}:${j}`, mark: claimFrom && j === p.discards.length - 1 ? "claim" : undefined }, wildWord);
          // a move's result: the tile just discarded slides into its pond, on every page
          return j === p.discards.length - 1 ? fx(el, "arrive", changedAt(ctx, `pond:${s}`, String(p.discards.length)), s === me ? "down" : "up") : el;
        })));
  };
  // the others in playing order from one's own seat (the next one first)
  const np = v.players.length;
  const others = Array.from({ length: np }, (_, i) => v.players.find((p) => Number(p.seat) === ((mine ? me : 0) + i + (mine ? 1 : 0)) % np))
    .filter((p): p is View["players"][number] => p !== undefined && Number(p.seat) !== me);
  // the hand, the drawn tile apart (one copy of it taken out of the sorted hand)
  const hand = [...v.hand];
  if (v.drawn) { const i = hand.lastIndexOf(v.drawn); if (i >= 0) hand.splice(i, 1); }
  // a tile one may not discard now says why beside it (the server's words where it has them)
  const whyNot = (t: string): string => v.phase === Phase.CLAIM ? (of("pass").length ? ctx.t("mj.answerFirst") : ctx.word("refusal", "claim_window"))
    : turn !== me || v.phase !== Phase.TURN ? ctx.word("refusal", "not_your_turn")
      : wild(t, myLaizi) && discards.length ? ctx.word("refusal", "locked_laizi")
        : myView?.declared === Declare.TING ? ctx.word("refusal", "hand_frozen") : ctx.t("mj.cannot");
  const handTile = (t: string, i: number, drawn: boolean) => {
    const k = drawn ? "drawn" : `hand:${i}:${t}`;
    const ok = discardable.has(t);
    const el = mjTile(t, {
      key: k, selected: sel.tile === t && (drawn ? !hand.includes(t) : i === hand.indexOf(t)),
      wild: wild(t, myLaizi), mark: ok ? "playable" : "idle", refused: !ok && !over,
      onclick: ok ? () => { sel.tile = sel.tile === t ? "" : t; ctx.rerender(); } : over ? undefined : () => refuse(ctx, k, whyNot(t)) }, wildWord);
    const bubble = whyAt(ctx, k, i < 3 ? "from-left" : i >= hand.length - 2 ? "from-right" : "");
    if (bubble) el.append(bubble);
    return el;
  };
  const handRow = mine ? arrowKeys(h("div", { class: "mj-hand", role: "group", "aria-label": ctx.t("mj.hand"), "data-zone": "hand" },
    hand.map((t, i) => handTile(t, i, false)),
    v.drawn ? h("span", { class: "mj-drawn" }, h("small", {}, ctx.t("mj.drawn")), handTile(v.drawn, hand.length, true)) : null)) : null;

  const claim = v.phase === Phase.CLAIM && v.claimTile ? h("div", { class: "mj-claim banner window", role: "status" },
    mjTile(v.claimTile, { key: "claim", wild: wild(v.claimTile, myLaizi) }, wildWord), " ",
    of("pass").length ? ctx.t("mj.claim", { name: name(Number(v.claimFrom)), t: tileName(v.claimTile, ctx.lang) })
      : ctx.t("mj.claimOthers", { t: tileName(v.claimTile, ctx.lang) }),
    Number(v.deadlineMs) > 0 ? h("span", { class: "clock", "data-deadline": Number(v.deadlineMs) }) : null) : null;
  const pairs = of("choosePair");
  const actions = mine && !over ? h("div", { class: "actions" },
    of("win").map((c) => button(ctx.t("mj.win"), send(c), { kind: "danger", key: "act:win", attrs: { "data-act": "win" } })),
    pairs.map((c) => { const t = (c.command.value as { tile: string }).tile;
      return button(ctx.t("mj.pair", { t: tileName(t, ctx.lang) }), send(c), { kind: "primary", key: `act:pair:${t}`, attrs: { "data-act": "pair", "data-tile": t } }); }),
    of("peng").map((c) => button(ctx.t("mj.peng"), send(c), { kind: "primary", key: "act:peng", attrs: { "data-act": "peng" } })),
    of("gang").map((c) => { const t = (c.command.value as { tile: string }).tile;
      return button(ctx.t("mj.gang", { t: tileName(t, ctx.lang) }), send(c), { kind: "primary", key: `act:gang:${t}`, attrs: { "data-act": "gang", "data-tile": t } }); }),
    of("pass").map((c) => button(ctx.t("mj.pass"), send(c), { key: "act:pass", attrs: { "data-act": "pass" } })),
    discards.length ? [
      button(ctx.t("mj.discard"), send(sel.tile ? discardOf(sel.tile, Declare.NONE) : undefined), { kind: "primary", key: "act:discard", attrs: { "data-act": "discard" } }),
      discards.some((d) => d.declare === Declare.TING)
        ? button(ctx.t("mj.ting"), send(sel.tile ? discardOf(sel.tile, Declare.TING) : undefined), { kind: "danger", key: "act:ting", attrs: { "data-act": "ting" } }) : null,
      discards.some((d) => d.declare === Declare.YING_KOU)
        ? button(ctx.t("mj.yingkou"), send(sel.tile ? discardOf(sel.tile, Declare.YING_KOU) : undefined), { key: "act:yingkou", attrs: { "data-act": "yingkou" } }) : null] : null) : null;
  const hint: Child = !mine || over ? null : pairs.length ? h("p", { class: "hint" }, ctx.t("mj.pickPair"), " ",
    Number(v.deadlineMs) > 0 ? h("span", { class: "clock", "data-deadline": Number(v.deadlineMs) }) : null)
    : discards.length && !sel.tile ? h("p", { class: "hint" }, ctx.t("mj.pick")) : null;
  const winner = Number(v.winner);
  const result = over ? h("div", { class: "mj-result" }, winner >= 0
    ? [h("p", {}, h("b", {}, ctx.t("mj.won", { name: name(winner), t: tileName(v.winTile, ctx.lang), n: v.total }))),
      v.winningHand.length ? h("div", { class: "mj-hand", role: "group", "aria-label": ctx.t("mj.winning") },
        v.winningHand.map((t, i) => mjTile(t, { small: true, key: `win:${i}`, mark: t === v.winTile && i === v.winningHand.lastIndexOf(t) ? "claim" : undefined }, wildWord))) : null,
      v.items.length ? h("ul", { class: "mj-items" }, v.items.map((it) => h("li", {}, `${ITEMS[it.code] ?? ctx.t("mj.other")} +${it.points}`))) : null]
    : h("p", {}, h("b", {}, ctx.t("mj.drawnGame")))) : null;

  return h("div", { class: "mj felt", "data-legal": v.legal.length,
    "data-offers": JSON.stringify(v.legal.map((c) => ({ kind: c.command.case, ...(c.command.value as object) }))) },
  ring(others.map(seatBox)),
  h("div", { class: "center" },
    h("div", { class: "mj-center" },
      h("span", { class: "pill" }, ctx.t("mj.wall", { n: v.wallCount })), h("span", { class: "pill" }, ctx.t("mj.live", { n: v.liveCount })),
      v.indicator ? h("span", { class: "mj-ind" }, h("small", {}, ctx.t("mj.indicator")), mjTile(v.indicator, { small: true, key: "ind" }, wildWord)) : null,
      myLaizi ? h("span", { class: "mj-ind" }, h("small", {}, ctx.t("mj.laizi")), mjTile(myLaizi, { small: true, wild: true, key: "mylz" }, wildWord)) : null,
      v.waits.length ? h("span", { class: "mj-ind" }, h("small", {}, ctx.t("mj.waits")), v.waits.map((t, i) => mjTile(t, { small: true, key: `wait:${i}` }, wildWord))) : null,
      v.wallLeft.length ? h("span", { class: "mj-ind mj-wall-left", "data-wall-left": v.wallLeft.length }, h("small", {}, ctx.t("mj.wallLeft")),
        v.wallLeft.map((t, i) => mjTile(t, { small: true, key: `wl:${i}` }, wildWord))) : null),
    claim, result),
  dock(myView ? seatBox(myView) : null,
    handRow ?? (over ? null : h("p", { class: "hint" }, ctx.t("mj.spectating"))),
    actions, hint), whyStatus(ctx));
}
