// The page's own words in node, with no browser: a count of one is singular in English.
import assert from "node:assert/strict";
import { test } from "node:test";

(globalThis as { document?: unknown }).document = { documentElement: {} };  // setLang marks the page's language
const { setLang, t } = await import("../src/app/i18n/index.js");

test("one coin and two coins, in each language", () => {
  const cases = [["en", "1\u00a0coin", "2\u00a0coins"], ["vi", "1\u00a0xu", "2\u00a0xu"], ["zh", "1\u00a0金币", "2\u00a0金币"]] as const;
  for (const [lang, one, two] of cases) {
    setLang(lang);
    assert.equal(t("money.coins", { n: 1 }), one);
    assert.equal(t("money.coins", { n: 2n }), two);
  }
});
