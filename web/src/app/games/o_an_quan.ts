// Ô ăn quan: the ring of ten dân squares and two quan squares, and the legal sowings as buttons.
// Ring indices: Q0 = 0, S1..S5 = 1..5, Q6 = 6, N7..N11 = 7..11; seat 0 owns S1–S5. CCW is +1.
import type { Message } from "@bufbuild/protobuf";
import { Direction, SowSchema, type View } from "../../../gen/chieu/games/o_an_quan/v1/o_an_quan_pb.js";
import type { BoardContext } from "../board.js";
import { h, type Child } from "../dom.js";

const NAME = (sq: number) => (sq === 0 ? "Q0" : sq === 6 ? "Q6" : sq < 6 ? `S${sq}` : `N${sq}`);
const ARROW = { [Direction.CW]: "↻", [Direction.CCW]: "↺", [Direction.UNSPECIFIED]: "?" };

export function board(view: Message, ctx: BoardContext): HTMLElement {
  const v = view as View;
  // The view lists the sowings this seat may send now (none off turn, none for a spectator).
  const sowings = v.legal.flatMap((c) => (c.command.case === "sow" ? [c.command.value] : []));
  const cell = (sq: number): HTMLElement => {
    const quan = sq === 0 || sq === 6;
    const moves = sowings.filter((m) => Number(m.square) === sq);
    return h("div", { class: `sq ${quan ? "quan" : "dan"}${moves.length ? " playable" : ""}`, "data-square": sq },
      h("span", { class: "name" }, NAME(sq)),
      h("span", { class: "count" }, String(v.board[sq] ?? 0n)),
      quan && v.quan[sq === 0 ? 0 : 1] ? h("span", { class: "piece", title: "quan" }, "◆") : null,
      moves.length ? h("div", { class: "moves" }, moves.map((m) =>
        h("button", { class: "move", "data-move": `${sq}:${m.direction}`, title: `sow ${NAME(sq)} ${Direction[m.direction]}`,
          onclick: () => ctx.send(SowSchema, m) }, ARROW[m.direction]))) : null);
  };
  const north = [11, 10, 9, 8, 7].map(cell);
  const south = [1, 2, 3, 4, 5].map(cell);
  const store = (seat: number): Child => h("div", { class: "store" },
    `seat ${seat}: ${v.stores[seat] ?? 0n} dân, ${v.quansCaptured[seat] ?? 0n} quan`,
    (v.borrowed[seat] ?? 0n) > 0n ? ` (borrowed ${v.borrowed[seat]})` : "",
    v.finished ? ` — score ${v.scores[seat] ?? 0n}` : "");
  return h("div", { class: "oaq" },
    store(1),
    h("div", { class: "ring" }, cell(0), h("div", { class: "rows" }, h("div", { class: "row" }, north), h("div", { class: "row" }, south)), cell(6)),
    store(0),
    h("p", { class: "position" }, v.position, " · moves ", String(v.movesMade)),
    v.finished ? h("p", { class: "result" }, Number(v.winner) < 0 ? "draw" : `seat ${v.winner} wins`) : null);
}
