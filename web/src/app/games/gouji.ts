// 够级 (Gouji): six seats round the table in two teams (联邦: seats 0 2 4 and 1 3 5, each facing
// its 对门), four decks with their jokers (大王, 小王). Each other seat shows its name, team, how
// many cards it holds once it is down to ten (报户; above ten the view gives no count, so "over
// 10 cards"), a pass (不要), a place taken (头科 … 大落), 烧 (burning), 无头, 革命; the middle
// shows the set on the table, its owner and whether it is 够级. One's own 36 cards are grouped by
// rank: a click on a rank takes all its cards into the set, each further click one card fewer
// (down to none), then 出牌 plays the set when the view's legal list (or its legal_leads) holds
// exactly that set, 烧 (捎牌) burns with it, 还贡 returns it in the tribute; 不要 / 扣 and 革命
// are buttons for their legal entries. Nothing is enabled that the list lacks.
import { create, type Message } from "@bufbuild/protobuf";
import { PlaySchema, type Command, type View } from "../../../gen/chieu/games/gouji/v1/gouji_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { arrowKeys, button, card, changedAt, dock, fx, h, refuse, ring, seatBadge, whyAt, whyStatus, type Child } from "../ui/kit.js";

export const words: Catalog = {
  en: { "gj.hand": "Your cards by rank: a click takes all of a rank, each next click one fewer", "gj.play": "Play", "gj.pass": "Pass",
    "gj.kou": "扣 — close the round", "gj.burn": "Burn (烧 / 捎牌)", "gj.return": "Return (还贡)", "gj.clear": "Clear",
    "gj.revolt": "革命 — sit out", "gj.decline": "No 革命", "gj.team": "Team {t}", "gj.opposite": "Opposite", "gj.cards": "{n} cards",
    "gj.many": "over 10 cards", "gj.passed": "Pass", "gj.burning": "烧", "gj.wutou": "无头", "gj.sittingOut": "革命 (sits out)",
    "gj.top": "On the table", "gj.nothing": "Nothing on the table: the leader plays any set.", "gj.by": "by {name}",
    "gj.gouji": "够级", "gj.lead": "You lead: choose any set (one rank, with 2s and jokers if you like).",
    "gj.answer": "Beat the set with as many cards, or pass.", "gj.kouHint": "扣牌: close the round (扣), or play on.",
    "gj.returnHint": "还贡: choose {n} card(s) to give back.", "gj.revHint": "革命: you hold no 2s and no jokers — sit this game out?",
    "gj.revWait": "革命 window: waiting for {names}.", "gj.tribute": "进贡 / 还贡: tribute is being paid and returned.",
    "gj.selected": "Selected: {cards}", "gj.noSet": "Not a set you may play now.", "gj.fourWay": "四人乱缠",
    "gj.score": "{n} points", "gj.spectating": "Watching: hands are hidden.", "gj.shown": "Cards left", "gj.mayBurn": "may burn (捎牌)", "gj.you": "you" },
  vi: { "gj.hand": "Bài của bạn theo quân: bấm lần đầu lấy cả loại, mỗi lần sau bớt một lá", "gj.play": "Đánh", "gj.pass": "Bỏ",
    "gj.kou": "扣 — đóng vòng", "gj.burn": "Đốt (烧 / 捎牌)", "gj.return": "Trả bài (还贡)", "gj.clear": "Bỏ chọn",
    "gj.revolt": "革命 — ngồi ngoài", "gj.decline": "Không 革命", "gj.team": "Đội {t}", "gj.opposite": "Đối diện", "gj.cards": "{n} lá",
    "gj.many": "hơn 10 lá", "gj.passed": "Bỏ", "gj.burning": "烧", "gj.wutou": "无头", "gj.sittingOut": "革命 (ngồi ngoài)",
    "gj.top": "Trên bàn", "gj.nothing": "Bàn trống: người đi đầu đánh bộ bất kỳ.", "gj.by": "của {name}",
    "gj.gouji": "够级", "gj.lead": "Bạn đi đầu: chọn một bộ (một loại quân, có thể kèm 2 và phăng teo).",
    "gj.answer": "Chặn bằng bộ cùng số lá, hoặc bỏ.", "gj.kouHint": "扣牌: đóng vòng (扣), hoặc đánh tiếp.",
    "gj.returnHint": "还贡: chọn {n} lá để trả.", "gj.revHint": "革命: bạn không có 2 và phăng teo — ngồi ngoài ván này?",
    "gj.revWait": "Thời gian 革命: chờ {names}.", "gj.tribute": "进贡 / 还贡: đang nộp và trả cống.",
    "gj.selected": "Đã chọn: {cards}", "gj.noSet": "Không phải bộ được đánh lúc này.", "gj.fourWay": "四人乱缠",
    "gj.score": "{n} điểm", "gj.spectating": "Đang xem: bài được giấu.", "gj.shown": "Bài còn lại", "gj.mayBurn": "được đốt (捎牌)", "gj.you": "bạn" },
  zh: { "gj.hand": "你的手牌（按点数）：第一次点选全部，再点每次少一张", "gj.play": "出牌", "gj.pass": "不要",
    "gj.kou": "扣", "gj.burn": "烧（捎牌）", "gj.return": "还贡", "gj.clear": "重选",
    "gj.revolt": "革命", "gj.decline": "不革命", "gj.team": "{t} 联邦", "gj.opposite": "对门", "gj.cards": "{n} 张",
    "gj.many": "10 张以上", "gj.passed": "不要", "gj.burning": "烧", "gj.wutou": "无头", "gj.sittingOut": "革命（不打）",
    "gj.top": "桌上", "gj.nothing": "桌上无牌：首家任出一套。", "gj.by": "{name}出",
    "gj.gouji": "够级", "gj.lead": "你先出：任选一套（同点数，可带 2 和王）。",
    "gj.answer": "出同样张数的更大的牌，或者不要。", "gj.kouHint": "扣牌：扣，或者接着打。",
    "gj.returnHint": "还贡：选 {n} 张还回。", "gj.revHint": "革命：你没有 2 也没有王——这局不打？",
    "gj.revWait": "革命窗口：等待 {names}。", "gj.tribute": "进贡 / 还贡进行中。",
    "gj.selected": "已选：{cards}", "gj.noSet": "现在不能出这套牌。", "gj.fourWay": "四人乱缠",
    "gj.score": "{n} 分", "gj.spectating": "旁观中：手牌不可见。", "gj.shown": "剩余的牌", "gj.mayBurn": "可烧（捎牌）", "gj.you": "你" },
};

/** Ranks highest first, as the view writes the cards. */
const RANKS = ["BJ", "SJ", "2", "A", "K", "Q", "J", "10", "9", "8", "7", "6", "5", "4", "3"];
const ORDER = new Map(RANKS.map((r, i) => [r, i]));
const PLACES = ["", "头科", "二科", "三科", "四科", "二落", "大落"];
const JOKER: Record<string, string> = { BJ: "大王", SJ: "小王" };

/** A multiset of cards as one key: highest first, space separated. */
const keyOf = (cards: readonly string[]) => [...cards].sort((a, b) => (ORDER.get(a) ?? 99) - (ORDER.get(b) ?? 99)).join(" ");

/** A card of 够级 (no suits: rank only; jokers as 大王 / 小王). */
function gCard(rank: string, o: Parameters<typeof card>[1] = {}): HTMLElement {
  const el = card(rank, { ...o, mark: [o.mark, rank === "BJ" ? "red joker" : rank === "SJ" ? "joker" : ""].filter(Boolean).join(" ") || undefined,
    label: o.label ?? JOKER[rank] ?? rank });
  const r = el.querySelector(".rank");
  if (r && JOKER[rank]) r.textContent = JOKER[rank]!;
  return el;
}

/** Home's picture: the two jokers and a 2, 够级's strongest cards. */
export const picture = (): HTMLElement => h("div", { class: "game-pic cards", "aria-hidden": "true" },
  gCard("BJ", { key: "pic:BJ" }), gCard("SJ", { key: "pic:SJ" }), card("2♠", { key: "pic:2" }));

/** Its rounds are dealt hands ("Hand 2"), not games. */
export const rounds = "hands";

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const me = Number(v.seat);
  const mine = me >= 0;
  const sel = ctx.state("gj.sel", () => new Map<string, number>());
  // what the hand holds per rank; the selection never more than that
  const held = new Map<string, number>();
  for (const c of v.hand) held.set(c, (held.get(c) ?? 0) + 1);
  for (const [r, n] of sel) if ((held.get(r) ?? 0) < n) sel.set(r, held.get(r) ?? 0);
  const picked: string[] = [];
  for (const r of RANKS) for (let i = 0; i < (sel.get(r) ?? 0); i++) picked.push(r);
  const pickedKey = keyOf(picked);
  // every command the list offers, by the key of its cards
  const plays = new Map<string, Message>();
  const burns = new Map<string, Command>();
  const returns = new Map<string, Command>();
  let pass: Command | undefined, revolt: Command | undefined, decline: Command | undefined;
  for (const c of v.legal) {
    const x = c.command;
    if (x.case === "play") plays.set(keyOf(x.value.cards), c);
    else if (x.case === "burn") burns.set(keyOf(x.value.cards), c);
    else if (x.case === "returnCards") returns.set(keyOf(x.value.cards), c);
    else if (x.case === "pass") pass = c;
    else if (x.case === "declareRevolution") revolt = c;
    else if (x.case === "declineRevolution") decline = c;
  }
  // leads: Play(w + b) for each wild part w and base part b, both empty excepted
  const leads = v.legalLeads;
  const leadOf = (cards: string[]): Message | undefined => {
    if (!leads || !cards.length) return undefined;
    const w = cards.filter((c) => c === "BJ" || c === "SJ" || c === "2");
    const b = cards.filter((c) => !(c === "BJ" || c === "SJ" || c === "2"));
    const okW = w.length === 0 || leads.wilds.some((x) => keyOf(x.cards) === keyOf(w));
    const okB = b.length === 0 || leads.bases.some((x) => keyOf(x.cards) === keyOf(b));
    return okW && okB ? create(PlaySchema, { cards: keyOf(cards).split(" ") }) : undefined;
  };
  const play = plays.get(pickedKey) ?? leadOf(picked);
  const burn = burns.get(pickedKey);
  const ret = returns.get(pickedKey);
  const go = (c: Message | undefined) => (c ? () => { sel.clear(); ctx.send(c); } : undefined);
  const toAct = Number(v.toAct);
  const name = (s: number) => ctx.name(s);
  const over = v.phase === "over";

  const seatBox = (s: number): HTMLElement => {
    const count = Number(v.counts[s] ?? -1n);
    const place = Number(v.places[s] ?? 0n);
    const team = s % 2 === 0 ? "A" : "B";
    const lines: Child[] = [
      h("span", { class: `gj-team t${team}` }, ctx.t("gj.team", { t: team })),
      mine && s === (me + 3) % 6 ? h("span", { class: "tag" }, ctx.t("gj.opposite")) : null,
      place > 0 ? h("span", { class: "tag gj-place" }, PLACES[place] ?? String(place))
        : s !== me ? h("span", { "data-count": count }, count >= 0 ? ctx.t("gj.cards", { n: count }) : ctx.t("gj.many")) : null,
      v.passed.some((p) => Number(p) === s) ? h("span", { class: "tag gj-pass" }, ctx.t("gj.passed")) : null,
      v.burning.some((p) => Number(p) === s) ? h("span", { class: "tag gj-burn" }, ctx.t("gj.burning")) : null,
      v.wutou.some((p) => Number(p) === s) ? h("span", { class: "tag" }, ctx.t("gj.wutou")) : null,
      Number(v.sittingOut) === s ? h("span", { class: "tag" }, ctx.t("gj.sittingOut")) : null,
      v.mayBurn.some((p) => Number(p) === s) && !over ? h("span", { class: "gj-mayburn" }, ctx.t("gj.mayBurn")) : null,
      over && v.scores.length ? h("span", {}, ctx.t("gj.score", { n: v.scores[s] ?? 0n })) : null,
    ];
    const acting = !over && (toAct === s || v.revolution.some((p) => Number(p) === s));
    return h("div", { class: `gj-seat${s === toAct ? " acting" : ""}${Number(v.topOwner) === s ? " owner" : ""}`, "data-seat": s },
      seatBadge({ name: name(s), initial: ctx.initial(s), me: s === me, toMove: acting, deadlineMs: v.deadlineMs, auto: ctx.autoPlayed(s), key: `seat:${s}`, lines },
        ctx.t("table.auto")));
  };
  // the others in playing order from one's own seat (下家 first), counter-clockwise
  const first = mine ? me : 0;
  const order = Array.from({ length: 6 }, (_, i) => (first + i) % 6);
  const others = mine ? order.slice(1) : order;
  const owner = Number(v.topOwner);
  const middle = h("div", { class: "gj-middle", role: "status" },
    v.top.length ? [h("span", { class: "gj-label" }, ctx.t("gj.top"), owner >= 0 ? ` · ${ctx.t("gj.by", { name: name(owner) })}` : ""),
      // a move's result: the set just played slides onto the table, on every page
      fx(h("div", { class: "gj-top" }, v.top.map((c, i) => gCard(c, { small: true, key: `top:${i}` }))), "arrive",
        changedAt(ctx, "top", `${owner}|${v.top.join(" ")}`), owner === me ? "down" : "up"),
      v.topGouji ? h("span", { class: "tag gj-gouji" }, ctx.t("gj.gouji")) : null]
      : h("span", { class: "gj-label" }, v.phase === "tribute" ? ctx.t("gj.tribute") : ctx.t("gj.nothing")),
    v.fourWay ? h("span", { class: "tag" }, ctx.t("gj.fourWay")) : null);

  const idle = !over && v.legal.length === 0 && !leads;
  const groups = mine ? arrowKeys(h("div", { class: "gj-hand", role: "group", "aria-label": ctx.t("gj.hand"), "data-zone": "hand" },
    RANKS.filter((r) => held.has(r)).map((r, i, all) => {
      const n = held.get(r)!;
      const k = sel.get(r) ?? 0;
      // off one's turn (nothing offered) a click says why beside the card instead of picking it
      const refused = k === 0 && idle;
      const el = gCard(r, { key: `rank:${r}`, selected: k > 0, label: `${JOKER[r] ?? r} ×${n}${k ? ` (${k})` : ""}`,
        attrs: { "data-rank": r, "data-held": n, "data-picked": k, "aria-disabled": refused ? "true" : undefined },
        // the first click takes every card of the rank (the usual set), each next one card fewer
        onclick: refused ? () => refuse(ctx, `rank:${r}`, ctx.word("refusal", "not_your_turn")) : () => { sel.set(r, k === 0 ? n : k - 1); ctx.rerender(); } });
      const bubble = whyAt(ctx, `rank:${r}`, i < 2 ? "from-left" : i >= all.length - 2 ? "from-right" : "");
      if (bubble) el.append(bubble);
      return h("div", { class: `gj-group${k ? " on" : ""}` },
        el,
        h("span", { class: "gj-n", "aria-hidden": "true" }, k ? `${k}/${n}` : `×${n}`));
    }))) : over ? null : h("p", { class: "hint" }, ctx.t("gj.spectating"));
  // once the game is over every seat's cards left are laid open (View.revealed), so each place can be checked
  const shown = over && v.revealed.length ? h("div", { class: "gj-revealed", "data-revealed": v.revealed.length },
    v.revealed.filter((r) => !(mine && Number(r.seat) === me) && r.cards.length).map((r) =>
      h("div", { class: "gj-shown", "data-shown": Number(r.seat), role: "group", "aria-label": `${name(Number(r.seat))}: ${ctx.t("gj.shown")}` },
        h("span", { class: "pill" }, name(Number(r.seat))),
        r.cards.map((c, i) => gCard(c, { small: true, key: `shown:${String(r.seat)}:${i}` }))))) : null;

  const owe = Number(v.oweReturn);
  const waiting = v.revolution.map((s) => name(Number(s))).join(", ");
  const hint: Child = !mine || over ? null
    : revolt || decline ? h("p", { class: "hint" }, ctx.t("gj.revHint"))
      : returns.size ? h("p", { class: "hint" }, ctx.t("gj.returnHint", { n: owe || [...returns.keys()][0]!.split(" ").length }))
        : v.revolution.length ? h("p", { class: "hint" }, ctx.t("gj.revWait", { names: waiting }))
          : toAct === me && v.kou ? h("p", { class: "hint" }, ctx.t("gj.kouHint"))
            : toAct === me && v.leading ? h("p", { class: "hint" }, ctx.t("gj.lead"))
              : toAct === me ? h("p", { class: "hint" }, ctx.t("gj.answer")) : null;
  const actions = mine && !over ? h("div", { class: "actions" },
    revolt ? button(ctx.t("gj.revolt"), go(revolt), { kind: "danger", key: "act:revolt", attrs: { "data-act": "revolt" } }) : null,
    decline ? button(ctx.t("gj.decline"), go(decline), { key: "act:decline", attrs: { "data-act": "decline" } }) : null,
    returns.size ? button(ctx.t("gj.return"), go(ret), { kind: "primary", key: "act:return", attrs: { "data-act": "return" } }) : null,
    plays.size || leads ? button(ctx.t("gj.play"), go(play), { kind: "primary", key: "act:play", attrs: { "data-act": "play" } }) : null,
    burns.size ? button(ctx.t("gj.burn"), go(burn), { kind: "danger", key: "act:burn", attrs: { "data-act": "burn" } }) : null,
    pass ? button(ctx.t(v.kou ? "gj.kou" : "gj.pass"), go(pass), { key: "act:pass", attrs: { "data-act": "pass" } }) : null,
    picked.length ? button(ctx.t("gj.clear"), () => { sel.clear(); ctx.rerender(); }, { kind: "quiet", key: "act:clear", attrs: { "data-act": "clear" } }) : null) : null;
  const chosen = mine && picked.length ? h("p", { class: "gj-chosen" }, ctx.t("gj.selected", { cards: picked.map((c) => JOKER[c] ?? c).join(" ") }),
    play || burn || ret ? null : h("span", { class: "muted" }, " — ", ctx.t("gj.noSet"))) : null;
  return h("div", { class: "gj felt", "data-legal": v.legal.length + (leads ? 1 : 0), "data-phase": v.phase,
    // what the lists offer, for tests that play by clicks (no rule in them either)
    "data-offers": JSON.stringify(v.legal.map((c) => ({ kind: c.command.case, ...(c.command.value as object) }))),
    "data-leads": leads ? JSON.stringify({ wilds: leads.wilds.map((w) => w.cards), bases: leads.bases.map((b) => b.cards) }) : "" },
  ring(others.map(seatBox)),
  h("div", { class: "center" }, middle, shown),
  dock(mine ? seatBox(me) : null, groups, chosen, actions, hint), whyStatus(ctx));
}
