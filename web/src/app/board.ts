/**
 * The board contract: what every game's board module exports and what the page gives it.
 *
 * A board lives in src/app/games/<key>.ts, named by the game's key in the generated registry
 * (gen/chieu/games/registry.ts); the page finds it by that key, never by a hand-kept list. It
 * exports:
 *
 *   export const board: Board = (view, ctx) => HTMLElement;   // required
 *   export const words: Catalog = { vi: {…}, zh: {…}, en: {…} }; // optional: the board's own
 *                                                               // strings, read with ctx.t(key)
 *   export const picture = () => HTMLElement;                  // optional: home's picture of it
 *   export const rounds = "hands";                             // optional: its rounds are dealt
 *                                                              // hands ("Hand 2"), not games ("Game 2")
 *
 * `board(view, ctx)` is called with the caller's decoded game view (the game's own View type:
 * cast `view as View`) every time the table changes, and again on ctx.rerender() (a selection
 * changed). It returns a fresh element; the page replaces the old one and gives keyboard focus
 * back to the element with the same `data-key` (the kit's buttons, cards and tiles carry one).
 *
 * Rules of a board:
 * - What may be sent comes from the view's `legal` list only (each entry the game's `Command`
 *   wrapper; xiangqi `legal_moves`, 连连看 `legal_pairs` compact forms): a control is enabled
 *   only for an entry of it, and sends that entry as it is (`ctx.send(entry)`). Never a rule
 *   re-implemented here.
 * - No raw codes, enums, ids or versions on screen: names come from ctx.name(seat), words from
 *   ctx.t (the board's `words`, else the page's catalog src/app/i18n/en.ts), server codes from
 *   ctx.word(kind, code). Native game terms (Ù, phỏm, quan, 杠, 报听 …) stay native.
 * - Phone first: nothing wider than its container at 375 px (use flex-wrap, the .fan hand, the
 *   CSS variables --card-w/--tile-w that shrink on a phone); targets ≥ 40 px (the kit's button).
 * - Keyboard: every control is a <button> (Tab/Enter/Space); a group of many (a hand, a row of
 *   squares, a grid) takes arrowKeys() from the kit.
 * - Per-table UI state (the selected cards) in ctx.state(): it survives redraws and is fresh for
 *   another table; never module-level state.
 * - Clocks: an element with data-deadline="<epoch ms>" (the view's deadline_ms) is counted down
 *   by the page every 250 ms (seatBadge's deadlineMs makes one); ctx.clock() is a still text.
 * - Tests find controls by data attributes: data-card / data-tile / data-square / data-act on
 *   the controls, data-legal="<n>" on the board's root (how many legal entries it offers).
 *
 * The shared kit is src/app/ui/kit.ts (button, card, cardBack, fan, tile, domino, seatBadge,
 * arrowKeys); the table's frame around the board (names, clocks, 托管, the result with its
 * payments, the language switch) is the page's, not the board's.
 */
import { createRegistry, type Message } from "@bufbuild/protobuf";
import type { WordKind } from "../../gen/chieu/words.js";
import { GAMES } from "../client/index.js";
import type { Catalog, Language } from "./i18n/index.js";

/** Vars for a message's {placeholders}. */
export type Vars = Readonly<Record<string, string | number | bigint>>;

export interface BoardContext {
  /** The caller's seat in the hand (an index into the hand's players), undefined for a spectator. */
  readonly mySeat: number | undefined;
  /** How many seats the hand has. */
  readonly seats: number;
  /**
   * Sends one command to the table (TableService.Act): an entry of the view's `legal` list as
   * it is (the game's Command wrapper), or a bare command message (e.g. Sort) — any message of
   * the game's proto package. A refusal is shown by the page, in words.
   */
  send(command: Message): void;
  /** Draws the board again (after a selection changed). */
  rerender(): void;
  /** The page's language (vi, zh or en). */
  readonly lang: Language;
  /** A message of the board's `words`, else of the page's catalog, with {vars} filled. */
  t(key: string, vars?: Vars): string;
  /** A server code (refusal, outcome or payment reason) in words (the contract's catalog). */
  word(kind: WordKind, code: string): string;
  /** A hand seat's player's display name ("you" in the page's language for the caller's own). */
  name(handSeat: number): string;
  /** The first letter of that seat's player's own display name, for an avatar (the caller's
   * own too, where name() says "you"). */
  initial(handSeat: number): string;
  /** Whether that hand seat is played for its player (托管: disconnected or left). */
  autoPlayed(handSeat: number): boolean;
  /** Whole seconds left until `deadlineMs` (epoch ms, as views carry it); undefined for none (0). */
  secondsLeft(deadlineMs: bigint | number): number | undefined;
  /** A clock as text ("12s" in the page's language), "" for none. */
  clock(deadlineMs: bigint | number): string;
  /** Per-table UI state kept across redraws under `key` (made by `init` the first time). */
  state<T>(key: string, init: () => T): T;
}

/** A game's board: its view drawn, with the controls its legal list allows. */
export type Board = (view: Message, ctx: BoardContext) => HTMLElement;

/** A loaded board module. */
export interface BoardModule {
  board: Board;
  words?: Catalog;
  /** A small picture of the game (home shows it on the game's card), drawn with the board's own
   * pieces: no image file to fetch. */
  picture?: () => HTMLElement;
  /** What a round of the game is called: "hands" for dealt cards or tiles ("Hand 2"); a game
   * whose rounds are whole games (中国象棋, Ô ăn quan, 连连看: "Game 2") leaves it out. */
  rounds?: "hands" | "games";
}

/** Every game's board that this page has, by key (bundled; a game without one is absent). */
export async function loadBoards(): Promise<Map<string, BoardModule>> {
  const found = await Promise.all(GAMES.map(async (g): Promise<[string, BoardModule | undefined]> => {
    try {
      const mod = (await import(`./games/${g.key}.ts`)) as Partial<BoardModule>;
      return [g.key, mod.board ? { board: mod.board, words: mod.words, picture: mod.picture, rounds: mod.rounds } : undefined];
    } catch {
      return [g.key, undefined]; // no board for this game yet: the page says so
    }
  }));
  return new Map(found.filter((e): e is [string, BoardModule] => e[1] !== undefined));
}

/** Every message of every game's proto package, to pack a command by its type name. */
export const gameMessages = createRegistry(...GAMES.map((g) => g.view.file));
