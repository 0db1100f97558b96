// Phỏm (Tá lả): the other seats with their discard rows and eaten cards, the laid phỏm, the
// stock and the card one may eat, and one's own hand fanned. One selects cards, then an action:
// ăn (eat: the partners selected, or none), hạ (lay the selected phỏm), gửi (send: one card
// selected, then a card of the phỏm it goes to), đánh (discard one card), Ù, bốc (draw).
// Every action is enabled only for an entry of the view's legal list, and sends that entry.
import { create, type Message } from "@bufbuild/protobuf";
import { Phase, SortSchema, TurnKind, type Command, type View } from "../../../gen/chieu/games/phom/v1/phom_pb.js";
import type { BoardContext } from "../board.js";
import type { Catalog } from "../i18n/index.js";
import { arrowKeys, button, card, cardBack, changedAt, dock, fan, fx, h, refuse, ring, seatBadge, whyAt, whyStatus, type Child } from "../ui/kit.js";

export const words: Catalog = {
  en: { "phom.draw": "Draw (bốc)", "phom.eat": "Eat (ăn)", "phom.lay": "Lay (hạ)", "phom.discard": "Discard (đánh)",
    "phom.u": "Ù!", "phom.sort": "Sort (xếp)", "phom.window": "Ù window: anyone with Ù may claim it now.",
    "phom.first": "{name} (dealer) opens: Ù or discard.", "phom.laydown": "Lay-down turn (vòng hạ)", "phom.tai": "Tái turn",
    "phom.stock": "Stock {n}", "phom.pot": "Gà {n}", "phom.eatable": "Last discard", "phom.melds": "Phỏm on the table",
    "phom.sendHint": "Select one card, then click a phỏm to send it (gửi).", "phom.hand": "Your hand",
    "phom.selectLay": "Select the cards of a phỏm, then Lay.", "phom.spectating": "Watching: hands are hidden.",
    "phom.balance": "{n} this hand", "phom.eats": "ate {n}", "phom.dealer": "dealer", "phom.sendTo": "Send to this phỏm",
    "phom.cards": "{n} cards", "phom.cards.one": "1 card", "phom.shown": "Cards left" ,
    "phom.noUse": "No use for it now", "phom.cannotEat": "You cannot eat this", "phom.partners": "First pick the cards it goes with" },
  vi: { "phom.draw": "Bốc", "phom.eat": "Ăn", "phom.lay": "Hạ phỏm", "phom.discard": "Đánh",
    "phom.u": "Ù!", "phom.sort": "Xếp bài", "phom.window": "Thời gian báo Ù: ai Ù thì báo ngay.",
    "phom.first": "{name} (cái) đi đầu: Ù hoặc đánh.", "phom.laydown": "Vòng hạ", "phom.tai": "Lượt tái",
    "phom.stock": "Nọc {n}", "phom.pot": "Gà {n}", "phom.eatable": "Lá vừa đánh", "phom.melds": "Phỏm đã hạ",
    "phom.sendHint": "Chọn một lá rồi bấm vào phỏm để gửi.", "phom.hand": "Bài của bạn",
    "phom.selectLay": "Chọn các lá của phỏm rồi bấm Hạ.", "phom.spectating": "Đang xem: bài được giấu.",
    "phom.balance": "{n} ván này", "phom.eats": "ăn {n}", "phom.dealer": "cái", "phom.sendTo": "Gửi vào phỏm này",
    "phom.cards": "{n} lá", "phom.shown": "Bài còn lại" ,
    "phom.noUse": "Lá này chưa dùng được", "phom.cannotEat": "Không ăn được lá này", "phom.partners": "Chọn trước các lá ghép với nó" },
  zh: { "phom.draw": "摸牌 (bốc)", "phom.eat": "吃 (ăn)", "phom.lay": "亮 phỏm (hạ)", "phom.discard": "出牌 (đánh)",
    "phom.u": "Ù!", "phom.sort": "理牌", "phom.window": "Ù 窗口：有 Ù 的玩家现在可以叫。",
    "phom.first": "{name}（庄家）先出：Ù 或出牌。", "phom.laydown": "亮牌轮 (vòng hạ)", "phom.tai": "tái 轮",
    "phom.stock": "牌堆 {n}", "phom.pot": "gà {n}", "phom.eatable": "上家出的牌", "phom.melds": "桌上的 phỏm",
    "phom.sendHint": "选一张牌，再点一个 phỏm 送出 (gửi)。", "phom.hand": "你的手牌",
    "phom.selectLay": "选中一组 phỏm 的牌，再点亮牌。", "phom.spectating": "旁观中：手牌不可见。",
    "phom.balance": "本局 {n}", "phom.eats": "吃 {n}", "phom.dealer": "庄", "phom.sendTo": "送到这个 phỏm",
    "phom.cards": "{n} 张", "phom.shown": "剩余的牌" ,
    "phom.noUse": "这张牌现在用不上", "phom.cannotEat": "不能吃这张", "phom.partners": "先选出与它成 phỏm 的牌" },
};

/** Home's picture: a hand of three cards. */
export const picture = (): HTMLElement => h("div", { class: "game-pic cards", "aria-hidden": "true" },
  ["7♥", "8♥", "9♥"].map((c) => card(c, { key: `pic:${c}` })));

type Case = NonNullable<Command["command"]["case"]>;
const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));

/** Its rounds are dealt hands ("Hand 2"), not games. */
export const rounds = "hands";

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const mine = Number(v.seat) >= 0;
  const sel = ctx.state("phom.selected", () => new Set<string>());
  for (const c of [...sel]) if (!v.hand.includes(c)) sel.delete(c);
  const pick = [...sel];
  const of = (kind: Case) => v.legal.filter((c) => c.command.case === kind);
  const val = <T>(c: Command | undefined) => c?.command.value as T | undefined;
  const eats = of("eat");
  const eat = eats.find((e) => same(val<{ partners: string[] }>(e)!.partners, pick))
    ?? (pick.length === 0 ? eats[0] : undefined);
  const lay = of("lay").find((l) => same(val<{ cards: string[] }>(l)!.cards, pick));
  const discard = pick.length === 1 ? of("discard").find((d) => val<{ card: string }>(d)!.card === pick[0]) : undefined;
  const sendTo = (cards: readonly string[]) =>
    pick.length === 1 ? of("send").find((x) => { const s = val<{ card: string; target: string }>(x)!; return s.card === pick[0] && cards.includes(s.target); }) : undefined;
  const draw = of("draw")[0];
  const claim = of("claimU")[0];
  const go = (c: Command | undefined) => (c ? () => { sel.clear(); ctx.send(c); } : undefined);
  // Cards that take part in some legal command: the others are dimmed in the hand.
  const useful = new Set<string>();
  for (const c of v.legal) {
    const x = c.command.value as { partners?: string[]; cards?: string[]; card?: string } | undefined;
    for (const k of [...(x?.partners ?? []), ...(x?.cards ?? []), ...(x?.card ? [x.card] : [])]) useful.add(k);
  }
  const toMove = Number(v.toMove);
  const seatOf = (s: number) => v.seats.find((x) => Number(x.seat) === s);
  // the others in playing order from one's own seat (the next one first; a spectator from seat 0)
  const n = v.seats.length;
  const from = Math.max(0, Number(v.seat));
  const others = Array.from({ length: n }, (_, i) => (from + i + (mine ? 1 : 0)) % n).slice(0, mine ? n - 1 : n);
  const seatBox = (s: number): HTMLElement => {
    const info = seatOf(s)!;
    return h("div", { class: "phom-seat", "data-seat": s },
      seatBadge({ name: ctx.name(s), initial: ctx.initial(s), me: s === Number(v.seat), toMove: toMove === s, key: `seat:${s}`,
        deadlineMs: v.deadlineMs, auto: ctx.autoPlayed(s),
        lines: [s === Number(v.dealer) ? h("span", { class: "tag" }, ctx.t("phom.dealer")) : null,
          s !== Number(v.seat) ? h("span", {}, ctx.t("phom.cards", { n: info.cards })) : null,
          Number(info.eats) > 0 ? h("span", {}, ctx.t("phom.eats", { n: info.eats })) : null,
          Number(info.balance) !== 0 ? h("span", { class: Number(info.balance) > 0 ? "plus" : "minus" }, ctx.t("phom.balance", { n: signed(info.balance) })) : null] },
      ctx.t("table.auto")),
      // once the hand is over its cards are laid open (SeatInfo.shown), so every score can be checked
      s !== Number(v.seat) && info.shown.length ? h("div", { class: "shown", "data-shown": s, role: "group", "aria-label": `${ctx.name(s)}: ${ctx.t("phom.shown")}` },
        info.shown.map((c) => card(c, { small: true, key: `shown:${s}:${c}` })))
        : s !== Number(v.seat) ? h("div", { class: "backs", "aria-hidden": "true" }, Array.from({ length: Math.min(Number(info.cards), 10) }, () => cardBack())) : null,
      info.eaten.length ? h("div", { class: "eaten" }, info.eaten.map((c) => card(c, { small: true, mark: "eaten", key: `eaten:${c}` }))) : null,
      h("div", { class: "row" }, info.row.map((c, i) => {
        const el = card(c, { small: true, mark: c === v.eatable ? "eatable" : undefined, key: `row:${c}` });
        // a move's result: the card just discarded slides into its row, on every page
        return i === info.row.length - 1 ? fx(el, "arrive", changedAt(ctx, `row:${s}`, String(info.row.length)), s === Number(v.seat) ? "down" : "up") : el;
      })));
  };
  const banner: Child = v.end ? null : v.phase === Phase.WINDOW ? h("p", { class: "banner window" }, ctx.t("phom.window"), " ",
    Number(v.deadlineMs) > 0 ? h("span", { class: "clock", "data-deadline": Number(v.deadlineMs) }) : null)
    : v.turnKind === TurnKind.FIRST ? h("p", { class: "banner" }, ctx.t("phom.first", { name: ctx.name(Number(v.dealer)) }))
      : v.turnKind === TurnKind.LAYDOWN ? h("p", { class: "banner" }, ctx.t("phom.laydown"))
        : v.turnKind === TurnKind.TAI ? h("p", { class: "banner" }, ctx.t("phom.tai")) : null;
  const melds = v.melds.length ? h("div", { class: "melds", "aria-label": ctx.t("phom.melds") }, v.melds.map((m) => {
    const s = sendTo(m.cards);
    const cards = m.cards.map((c) => card(c, { small: true, mark: c === m.eaten ? "eaten" : undefined, key: `meld:${m.id}:${c}` }));
    return s ? h("button", { type: "button", class: "meld sendable", "data-meld": String(m.id), "data-key": `meld:${m.id}`,
      title: ctx.t("phom.sendTo"), "aria-label": `${ctx.t("phom.sendTo")}: ${m.cards.join(" ")}`, onclick: go(s) }, cards)
      : h("div", { class: "meld", "data-meld": String(m.id) }, h("small", {}, ctx.name(Number(m.owner))), cards);
  })) : null;
  // a card one cannot use now says why beside it (off one's turn, or in no legal command)
  const hand = mine ? arrowKeys(fan(v.hand.map((c, i) => {
    const refused = !sel.has(c) && !v.end && (v.legal.length === 0 || !useful.has(c));
    const el = card(c, {
      selected: sel.has(c), mark: useful.has(c) || sel.has(c) ? undefined : "idle", key: `hand:${c}`,
      attrs: refused ? { "aria-disabled": "true" } : undefined,
      onclick: refused ? () => refuse(ctx, `hand:${c}`, toMove !== Number(v.seat) || v.legal.length === 0 ? ctx.word("refusal", "not_your_turn") : ctx.t("phom.noUse"))
        : () => { if (sel.has(c)) sel.delete(c); else sel.add(c); ctx.rerender(); },
    });
    const bubble = whyAt(ctx, `hand:${c}`, i < 2 ? "from-left" : i >= v.hand.length - 2 ? "from-right" : "");
    if (bubble) el.append(bubble);
    return el;
  }), ctx.t("phom.hand"))) : v.end ? null : h("p", { class: "muted" }, ctx.t("phom.spectating"));
  // the card one may eat: a click eats it with the cards picked, else says why beside it
  const eatCard = (): HTMLElement => {
    const el = card(v.eatable, { key: "eatable", mark: "eatable", label: `${ctx.t("phom.eat")}: ${v.eatable}`,
      attrs: eat ? undefined : { "aria-disabled": "true" },
      onclick: !mine || v.end ? undefined : eat ? go(eat) : () => refuse(ctx, "eatable",
        toMove !== Number(v.seat) || v.legal.length === 0 ? ctx.word("refusal", "not_your_turn")
          : of("eat").length ? ctx.t("phom.partners") : ctx.t("phom.cannotEat")) });
    const bubble = whyAt(ctx, "eatable");
    if (bubble) el.append(bubble);
    return el;
  };
  const actions = mine && !v.end ? h("div", { class: "actions" },
    claim ? button(ctx.t("phom.u"), go(claim), { key: "act:u", kind: "danger", attrs: { "data-act": "u" } }) : null,
    button(ctx.t("phom.draw"), go(draw), { key: "act:draw", kind: draw ? "primary" : undefined, attrs: { "data-act": "draw" } }),
    button(v.eatable ? [ctx.t("phom.eat"), " ", card(v.eatable, { small: true, key: "eat-card" })] : ctx.t("phom.eat"), go(eat),
      { key: "act:eat", kind: eat ? "primary" : undefined, attrs: { "data-act": "eat" } }),
    button(ctx.t("phom.lay"), go(lay), { key: "act:lay", kind: lay ? "primary" : undefined, attrs: { "data-act": "lay" } }),
    button(ctx.t("phom.discard"), go(discard), { key: "act:discard", kind: discard ? "primary" : undefined, attrs: { "data-act": "discard" } }),
    button(ctx.t("phom.sort"), () => ctx.send(create(SortSchema)), { key: "act:sort", kind: "quiet", attrs: { "data-act": "sort" } })) : null;
  const hint: Child = !mine || v.end ? null : of("send").length && pick.length <= 1 ? h("p", { class: "hint" }, ctx.t("phom.sendHint"))
    : of("lay").length && !lay ? h("p", { class: "hint" }, ctx.t("phom.selectLay")) : null;
  return h("div", { class: "phom felt", "data-legal": v.legal.length,
    // What the legal list offers, for tests that play by clicks (no rule in them either).
    "data-offers": JSON.stringify(v.legal.map((c) => ({ kind: c.command.case, ...(c.command.value as object) }))) },
  ring(others.map(seatBox)),
  h("div", { class: "center" },
    h("div", { class: "phom-center" },
      h("span", { class: "stock" }, cardBack(false), h("b", {}, ctx.t("phom.stock", { n: v.stockLeft }))),
      v.eatable ? h("span", { class: "eatable" }, h("small", {}, ctx.t("phom.eatable")), eatCard()) : null,
      Number(v.pot) > 0 ? h("span", { class: "pot" }, ctx.t("phom.pot", { n: v.pot })) : null),
    banner, melds),
  dock(mine ? seatBox(Number(v.seat)) : null, hand, actions, hint), whyStatus(ctx));
}

function signed(n: bigint): string {
  return n > 0n ? `+${n}` : String(n);
}
