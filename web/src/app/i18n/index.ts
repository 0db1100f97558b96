// The page's words: its own catalog (en.ts, vi.ts, zh.ts — the same keys, checked by the types),
// the contract's catalog for the server's codes (gen/chieu/words.ts), and the current language.
// Native game terms (Ù, phỏm, quan, 金币, 过关斩将, 托管 …) stay native in every language.
import { LANGUAGES, languageOf, wordsFor, type Language, type WordKind } from "../../../gen/chieu/words.js";
import { en, type Key } from "./en.js";
import { vi } from "./vi.js";
import { zh } from "./zh.js";

export { LANGUAGES, type Language, type Key };

/** A catalog: every key in every language (a board's own words are one too, see board.ts). */
export type Catalog<K extends string = string> = Readonly<Record<Language, Readonly<Record<K, string>>>>;

export const PAGE: Catalog<Key> = { en, vi, zh };

const STORE = "chieu.lang";
let current: Language = initial();

function initial(): Language {
  const saved = globalThis.localStorage?.getItem(STORE);
  if (saved && (LANGUAGES as readonly string[]).includes(saved)) return saved as Language;
  return languageOf(globalThis.navigator?.languages ?? ["en"]);
}

export function lang(): Language {
  return current;
}

export function setLang(l: Language): void {
  current = l;
  globalThis.localStorage?.setItem(STORE, l);
  document.documentElement.lang = l === "zh" ? "zh-Hans" : l;
}

/** `{name}` in a message replaced by vars.name. */
export function fill(msg: string, vars?: Readonly<Record<string, string | number | bigint>>): string {
  return vars ? msg.replace(/\{(\w+)\}/g, (m, k: string) => (k in vars ? String(vars[k]) : m)) : msg;
}

/** `key.one` instead of `key` when vars.n is 1 and the catalog has it (English plurals). */
function one(cat: Readonly<Record<string, string>> | undefined, key: string, vars?: Readonly<Record<string, string | number | bigint>>): string | undefined {
  return vars && String(vars.n) === "1" ? cat?.[`${key}.one`] : undefined;
}

/** The page's message `key` in the current language. */
export function t(key: Key, vars?: Readonly<Record<string, string | number | bigint>>): string {
  const cat = PAGE[current] as Readonly<Record<string, string>>;
  return fill(one(cat, key, vars) ?? cat[key] ?? en[key], vars);
}

/** A catalog's message (a board's own words), falling back to the page's, then to the key. */
export function tIn(cat: Catalog | undefined, key: string, vars?: Readonly<Record<string, string | number | bigint>>): string {
  const own = one(cat?.[current], key, vars) ?? cat?.[current]?.[key] ?? cat?.en?.[key];
  if (own !== undefined) return fill(own, vars);
  const mine = PAGE[current] as Readonly<Record<string, string>>;
  const page = one(mine, key, vars) ?? mine[key] ?? (en as Record<string, string>)[key];
  return page !== undefined ? fill(page, vars) : key;
}

/** A server code (a refusal's reason, an outcome's or a payment's) in words, never the code. */
export function word(kind: WordKind, code: string): string {
  return wordsFor(kind, code, current) ?? t(kind === "refusal" ? "err.generic" : "outcome.other");
}
