// Runs one browser scene (test/scenes/<name>.ts) in headless Chromium and prints its result as
// one JSON line; a scene may ask the Python test that runs it to act on the stack meanwhile (a
// line "@what" on stdout, answered on stdin: tests/web/harness.py `scene`). With no scene named
// (node --test runs every file under build/test/) it does nothing.
//   CHIEU_WEB_URL=http://127.0.0.1:8080 node build/test/scenes.mjs xiangqi_draw
import { mkdirSync } from "node:fs";
import type { Browser } from "playwright-core";
import { launch } from "./harness.js";
import { OUT, type SceneResult } from "./scenes/kit.js";
import { dominoes } from "./scenes/dominoes.js";
import { gouji } from "./scenes/gouji.js";
import { mahjong } from "./scenes/mahjong.js";
import { presence } from "./scenes/presence.js";
import { reconnect } from "./scenes/reconnect.js";
import { xiangqiDraw } from "./scenes/xiangqi.js";

const SCENES: Record<string, (browser: Browser, r: SceneResult) => Promise<void>> = {
  reconnect, xiangqi_draw: xiangqiDraw, mahjong_declare: mahjong, gouji_controls: gouji, dominoes_blank: dominoes,
  presence,
};

const name = process.argv[2];
if (name) {
  mkdirSync(OUT, { recursive: true });
  const r: SceneResult = { ok: false, scene: name, facts: {}, errors: [], overflow: [], axe: [], screenshots: [], timings: {} };
  const run = SCENES[name];
  const browser = await launch();
  const t0 = Date.now();
  try {
    if (!run) throw new Error(`no scene ${name}`);
    await run(browser, r);
    r.ok = true;
  } catch (e) {
    r.error = String((e as Error)?.stack ?? e);
  } finally {
    r.timings.total = (Date.now() - t0) / 1000;
    await browser.close();
  }
  console.log(JSON.stringify(r, (_, v) => (typeof v === "bigint" ? String(v) : v)));
  process.exit(r.ok ? 0 : 1);
}
