// A seat's presence in words (issue 34): here, reconnecting (with the seconds left, counted down
// by the page's clock: an element with data-deadline), played for them (托管), or left. One small
// function a board or the table's status line places where it shows the seat.
import { SeatPresence, type SeatInfo } from "../../../gen/chieu/table/v1/table_service_pb.js";
import { t } from "../i18n/index.js";
import { h } from "./kit.js";

/** The presence's CSS class and words, or undefined when the view does not say (an older server). */
export function presenceWords(seat: SeatInfo): { kind: string; words: string } | undefined {
  switch (seat.presence) {
    case SeatPresence.HERE: return { kind: "here", words: t("seat.here") };
    case SeatPresence.RECONNECTING: return { kind: "away", words: t("seat.reconnecting") };
    case SeatPresence.AUTO_PLAYED: return { kind: "auto", words: t("table.auto") };
    case SeatPresence.LEFT: return { kind: "left", words: t("seat.left") };
    default: return undefined;
  }
}

/** A pill "<name>: <presence>" (a reconnecting seat's seconds left after it), or null when the
 *  player is simply here (`always`: shown then too) or the view does not say. */
export function presencePill(seat: SeatInfo, name: string, always = false): HTMLElement | null {
  const p = presenceWords(seat);
  if (!p || (p.kind === "here" && !always)) return null;
  return h("span", { class: `pill presence ${p.kind}`, "data-presence": p.kind }, `${name}: ${p.words}`,
    seat.presence === SeatPresence.RECONNECTING && seat.untilMs > 0n
      ? [" ", h("span", { "data-deadline": Number(seat.untilMs) })] : null);
}
