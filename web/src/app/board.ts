// What every game's board module (src/app/games/<key>.ts, one per game, named by its key) exports,
// and how the page finds them: by the keys of the generated registry, never by a hand-kept list.
import type { DescMessage, Message, MessageShape } from "@bufbuild/protobuf";
import { GAMES } from "../client/index.js";

/** Sends one command of the game to the table (TableService.Act). */
export type Send = <D extends DescMessage>(schema: D, command: MessageShape<D>) => void;

export interface BoardContext {
  /** The caller's seat in the hand, undefined for a spectator. */
  mySeat: number | undefined;
  send: Send;
  /** Draws the table again (after a selection changed). */
  rerender: () => void;
}

/** A game's board: its view drawn, with the controls its legal moves allow. */
export type Board = (view: Message, ctx: BoardContext) => HTMLElement;

/** Every game's board that this page has, by key (loaded once, when the page starts). */
export async function loadBoards(): Promise<Map<string, Board>> {
  const found = await Promise.all(GAMES.map(async (g): Promise<[string, Board | undefined]> => {
    try {
      const mod = (await import(`./games/${g.key}.ts`)) as { board?: Board };
      return [g.key, mod.board];
    } catch {
      return [g.key, undefined]; // no board for this game yet: the page says so
    }
  }));
  return new Map(found.filter((e): e is [string, Board] => e[1] !== undefined));
}
