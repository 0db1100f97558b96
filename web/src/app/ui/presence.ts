// A seat's presence in words (issue 34): here, connection lost and waiting (with the seconds left,
// counted down by the page's clock: an element with data-deadline), played for them (托管), or
// left. The words are the contract's catalog (kind "presence", services/kit/words/catalog.toml).
// Small functions a board or the table's layout places where it shows the seat: presencePill for a
// status line, seatPresence for inside a seat's own element, onSeats for a drawn board whose seat
// elements carry data-seat (the hand seat's index).
import { SeatPresence, type SeatInfo } from "../../../gen/chieu/table/v1/table_service_pb.js";
import { word } from "../i18n/index.js";
import { h } from "./kit.js";

/** The presence's CSS class and words, or undefined when the view does not say (an older server). */
export function presenceWords(seat: SeatInfo): { kind: string; words: string } | undefined {
  switch (seat.presence) {
    case SeatPresence.HERE: return { kind: "here", words: word("presence", "here") };
    case SeatPresence.RECONNECTING: return { kind: "away", words: word("presence", "reconnecting") };
    case SeatPresence.AUTO_PLAYED: return { kind: "auto", words: word("presence", "auto_played") };
    case SeatPresence.LEFT: return { kind: "left", words: word("presence", "left") };
    default: return undefined;
  }
}

function countdown(seat: SeatInfo): HTMLElement | null {
  return seat.presence === SeatPresence.RECONNECTING && seat.untilMs > 0n
    ? h("span", { class: "presence-clock", "data-deadline": Number(seat.untilMs) }) : null;
}

/** A pill "<name>: <presence>" (a reconnecting seat's seconds left after it), or null when the
 *  player is simply here (`always`: shown then too) or the view does not say. */
export function presencePill(seat: SeatInfo, name: string, always = false): HTMLElement | null {
  const p = presenceWords(seat);
  if (!p || (p.kind === "here" && !always)) return null;
  const clock = countdown(seat);
  return h("span", { class: `pill presence ${p.kind}`, "data-presence": p.kind }, `${name}: ${p.words}`,
    clock ? [" ", clock] : null);
}

/** The presence to show inside the seat's own element (no name: the seat shows it), or null when
 *  the player is here or the view does not say. */
export function seatPresence(seat: SeatInfo | undefined): HTMLElement | null {
  const p = seat ? presenceWords(seat) : undefined;
  if (!seat || !p || p.kind === "here") return null;
  const clock = countdown(seat);
  return h("span", { class: `seat-presence ${p.kind}`, "data-presence": p.kind }, p.words, clock ? [" ", clock] : null);
}

/** On a drawn board, each hand seat's element (`[data-seat="i"]`, the first one) gets its
 *  player's presence: the attribute data-presence and, when not here, seatPresence inside it. */
export function onSeats(board: HTMLElement, handSeats: readonly SeatInfo[]): void {
  for (const seat of handSeats) {
    const el = board.querySelector<HTMLElement>(`[data-seat="${Number(seat.seat)}"]`);
    const p = presenceWords(seat);
    if (!el || !p) continue;
    el.dataset.presence = p.kind;
    const badge = seatPresence(seat);
    if (badge) el.append(badge);
  }
}
