// Phỏm: the caller's own hand (select cards), the laid phỏm, each seat's discards, and the commands.
// What may be sent comes from the view's legal list (the rules' own), never from guesses here.
import { create } from "@bufbuild/protobuf";
import type { Message } from "@bufbuild/protobuf";
import {
  ClaimUSchema, DiscardSchema, DrawSchema, EatSchema, LaySchema, Phase, SendSchema, SortSchema, TurnKind,
  type Command, type View,
} from "../../../gen/chieu/games/phom/v1/phom_pb.js";
import type { BoardContext } from "../board.js";
import { h } from "../dom.js";

const selected = new Set<string>();

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  const { send, rerender } = ctx;
  const mine = Number(v.seat) >= 0;
  for (const c of [...selected]) if (!v.hand.includes(c)) selected.delete(c);
  const pick = [...selected];
  const legal = <K extends NonNullable<Command["command"]["case"]>>(kind: K) =>
    v.legal.flatMap((c) => (c.command.case === kind ? [c.command.value as Extract<Command["command"], { case: K }>["value"]] : []));
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x));
  const eats = legal("eat");
  const eat = eats.find((e) => same(e.partners, pick)) ?? (pick.length ? undefined : eats[0]);
  const lay = legal("lay").find((l) => same(l.cards, pick));
  const discard = pick.length === 1 ? legal("discard").find((d) => d.card === pick[0]) : undefined;
  const sendTo = (cards: readonly string[]) =>
    pick.length === 1 ? legal("send").find((x) => x.card === pick[0] && cards.includes(x.target)) : undefined;
  const card = (c: string, onclick?: () => void, cls = "") =>
    h("button", { class: `card ${cls}${/[♦♥]/.test(c) ? " red" : ""}`, "data-card": c, onclick, disabled: !onclick }, c);
  const act = (label: string, enabled: boolean, fn: () => void) =>
    h("button", { class: "act", "data-act": label, disabled: !enabled, onclick: fn }, label);
  return h("div", { class: "phom" },
    h("p", {}, `phase ${Phase[v.phase]}, turn ${TurnKind[v.turnKind]}, seat ${v.toMove} to move; stock ${v.stockLeft}; gà pot ${v.pot}`),
    h("div", { class: "seats" }, v.seats.map((s) => h("div", { class: `seat${Number(s.seat) === Number(v.toMove) ? " to-move" : ""}` },
      h("b", {}, `seat ${s.seat}`), ` ${s.cards} cards, eats ${s.eats}, balance ${s.balance}`,
      h("div", { class: "row" }, s.row.map((c) => card(c))),
      s.eaten.length ? h("div", {}, "eaten: ", s.eaten.map((c) => card(c, undefined, "eaten"))) : null))),
    v.melds.length ? h("div", { class: "melds" }, "phỏm: ", v.melds.map((m) => h("span", { class: "meld" },
      `#${m.id} (seat ${m.owner}) `, m.cards.map((c) => {
        const sent = sendTo(m.cards);
        return card(c, sent ? () => send(SendSchema, sent) : undefined);
      })))) : null,
    mine ? h("div", { class: "hand" }, v.hand.map((c) => card(c, () => {
      if (selected.has(c)) selected.delete(c); else selected.add(c);
      rerender();
    }, selected.has(c) ? "selected" : ""))) : h("p", {}, "(spectating: hands are hidden)"),
    mine ? h("div", { class: "actions" },
      act("Draw", legal("draw").length > 0, () => send(DrawSchema, create(DrawSchema))),
      act(`Eat ${v.eatable}`, eat !== undefined, () => send(EatSchema, eat!)),
      act("Lay", lay !== undefined, () => send(LaySchema, lay!)),
      act("Discard", discard !== undefined, () => send(DiscardSchema, discard!)),
      act("Ù", legal("claimU").length > 0, () => send(ClaimUSchema, create(ClaimUSchema))),
      act("Sort", mine, () => send(SortSchema, create(SortSchema))),
      pick.length === 1 ? h("span", { class: "hint" }, " (to send a card, select it and click a phỏm card)") : null) : null,
    v.end ? h("p", { class: "result" }, `end: ${v.end}; winner seat ${v.winner}`) : null);
}
