// Plays one hand of each game named on the command line in headless Chromium (the harness,
// harness.ts) with its moves from test/moves/<key>.ts; prints one JSON line per game ("portal":
// the portal's own screens instead; "weight-<lang>": the first screen's weight in that language).
//   CHIEU_WEB_URL=http://127.0.0.1:8080 CHIEU_ARTIFACTS=dir node build/test/play.mjs o_an_quan phom
import { mkdirSync } from "node:fs";
import { launch, playHand, tour, weigh, type GameSpec, type HandResult } from "./harness.js";

const URL = process.env.CHIEU_WEB_URL ?? "http://127.0.0.1:8080";
const OUT = process.env.CHIEU_ARTIFACTS ?? "build/artifacts/web";
mkdirSync(OUT, { recursive: true });
const browser = await launch();
let ok = true;
try {
  for (const game of process.argv.slice(2)) {
    if (game === "portal") {  // the portal's own screens
      const r = await tour(browser, URL, OUT);
      ok &&= r.ok;
      console.log(JSON.stringify({ game, ...r }));
      continue;
    }
    if (game.startsWith("weight-")) {  // the first screen's weight in a language: weight-vi
      const r = await weigh(browser, URL, game.slice("weight-".length));
      ok &&= r.ok;
      console.log(JSON.stringify({ game, ...r }));
      continue;
    }
    let spec: GameSpec;
    try {
      spec = ((await import(`./moves/${game}.ts`)) as { spec: GameSpec }).spec;
    } catch (e) {
      console.log(JSON.stringify({ ok: false, game, error: `no moves for ${game}: ${e}` }));
      ok = false;
      continue;
    }
    const r: HandResult = await playHand(browser, URL, OUT, spec);
    ok &&= r.ok;
    console.log(JSON.stringify(r));
  }
} finally {
  await browser.close();
}
process.exit(ok ? 0 : 1);
