// Bundles the front-end (src/app → dist/) and the node tests and tools (test/, bench/ → build/)
// with esbuild, and ships the fonts (Noto Sans for Latin and Vietnamese, Noto Sans SC for CJK,
// from @fontsource, woff2 only, split by unicode-range so a browser fetches only the pieces its
// text uses) and the favicons. `node scripts/build.mjs` (npm run build).
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import subsetFont from "subset-font";

const web = join(dirname(fileURLToPath(import.meta.url)), "..");
// built aside, then swapped in: a page being served (chieu up, a test) never sees a missing file
const dist = join(web, `.dist-${process.pid}`);
rmSync(dist, { recursive: true, force: true });
mkdirSync(join(dist, "fonts"), { recursive: true });
for (const f of ["index.html", "style.css", "favicon.svg"]) cpSync(join(web, "src/app", f), join(dist, f));

/** A fontsource CSS file's @font-face blocks whose name passes `keep`, woff2 only, from fonts/. */
function fonts(pkg, weights, keep) {
  const out = [];
  for (const w of weights) {
    const css = readFileSync(join(web, "node_modules/@fontsource", pkg, `${w}.css`), "utf8");
    for (const m of css.matchAll(/\/\* ([^*]+) \*\/\s*(@font-face \{[^}]*\})/g)) {
      if (!keep(m[1])) continue;
      const block = m[2].replace(/src: url\(\.\/files\/([^)]+\.woff2)\) format\('woff2'\)[^;]*;/, (_, file) => {
        cpSync(join(web, "node_modules/@fontsource", pkg, "files", file), join(dist, "fonts", file));
        return `src: url(fonts/${file}) format('woff2');`;
      });
      out.push(`/* ${m[1]} */\n${block}`);
    }
  }
  return `/* ${pkg} (@fontsource, SIL Open Font License 1.1) */\n${out.join("\n")}\n`;
}
/** A unicode-range's code points. */
const points = (range) => range.split(",").flatMap((r) => {
  const [a, b = a] = r.trim().replace(/^U\+/, "").split("-").map((x) => parseInt(x, 16));
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
});
/** Code points as a unicode-range. */
const range = (cps) => {
  const out = [], s = [...new Set(cps)].sort((a, b) => a - b);
  for (let i = 0; i < s.length; i++) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j] + 1) j++;
    const hex = (n) => n.toString(16).toUpperCase().padStart(4, "0");
    out.push(j > i ? `U+${hex(s[i])}-${hex(s[j])}` : `U+${hex(s[i])}`);
    i = j;
  }
  return out.join(",");
};
// Noto Sans: Latin Extended's range loses what the Latin and Vietnamese pieces already hold (ỳ ỵ ỷ
// ỹ, ₫, the combining marks): Vietnamese text no longer fetches its 57 kB a weight, only a name
// with a letter of its own (ł, ş) does.
const noto = fonts("noto-sans", [400, 700], (n) => /-(latin|latin-ext|vietnamese)-\d+-normal$/.test(n));
const held = new Set([...noto.matchAll(/\/\* noto-sans-(?:latin|vietnamese)-\d+-normal \*\/[^}]*unicode-range: ([^;]+);/g)]
  .flatMap((m) => points(m[1])));
const notoVi = noto.replace(/(\/\* noto-sans-latin-ext-\d+-normal \*\/[^}]*unicode-range: )([^;]+);/g,
  (_, head, r) => `${head}${range(points(r).filter((c) => !held.has(c)))};`);
// "Chieu Han": Noto Sans SC (400) cut to the hanzi every page draws (src/app/i18n/native.ts: the
// native terms, pieces, tile faces), about 20 kB, so a Vietnamese or English page never fetches
// Noto Sans SC's pieces for them; the pieces (fonts-zh.css) stay for a Chinese page's words and
// any other hanzi (a player's name), the sheet loaded only by a Chinese page or after the first
// screen (main.ts).
const hanText = [...new Set(readFileSync(join(web, "src/app/i18n/native.ts"), "utf8").match(/[\p{Script=Han}\uFF10-\uFF19]/gu))].join("");
const hanFile = "chieu-han-400-normal.woff2";
writeFileSync(join(dist, "fonts", hanFile), await subsetFont(
  readFileSync(join(web, "node_modules/@fontsource/noto-sans-sc/files/noto-sans-sc-chinese-simplified-400-normal.woff2")),
  hanText, { targetFormat: "woff2" }));
const han = `/* Chieu Han: Noto Sans SC cut to the hanzi the boards draw (SIL Open Font License 1.1) */
@font-face {
  font-family: 'Chieu Han';
  font-style: normal;
  font-display: swap;
  font-weight: 400;
  src: url(fonts/${hanFile}) format('woff2');
  unicode-range: ${range([...hanText].map((c) => c.codePointAt(0)))};
}
`;
writeFileSync(join(dist, "fonts-vi.css"), notoVi + han);
writeFileSync(join(dist, "fonts-zh.css"), fonts("noto-sans-sc", [400], (n) => /\[\d+\]/.test(n)));
// "Chieu Han UI": Noto Sans SC (400) cut to every other hanzi and CJK punctuation the client's own
// text holds (src/: the Chinese words; the games' titles in gen/'s registry; "Chieu Han" has the
// native terms and the boards'), about 350 characters, so a Chinese page's first
// screen fetches one file instead of Noto Sans SC's pieces (fonts-zh-ui.css, linked at once only
// by a Chinese page; the pieces follow after the first screen, for a player's name)
const srcFiles = (d) => readdirSync(d, { withFileTypes: true })
  .flatMap((e) => (e.isDirectory() ? srcFiles(join(d, e.name)) : e.name.endsWith(".ts") ? [join(d, e.name)] : []));
const uiText = [...new Set([...srcFiles(join(web, "src")), join(web, "gen/chieu/games/registry.ts")]
  .flatMap((f) => readFileSync(f, "utf8").match(/[\p{Script=Han}\u3000-\u303F\uFF00-\uFFEF]/gu) ?? []))]
  .filter((c) => !hanText.includes(c)).sort().join("");  // what "Chieu Han" has is not fetched twice
const uiFile = "chieu-han-ui-400-normal.woff2";
writeFileSync(join(dist, "fonts", uiFile), await subsetFont(
  readFileSync(join(web, "node_modules/@fontsource/noto-sans-sc/files/noto-sans-sc-chinese-simplified-400-normal.woff2")),
  uiText, { targetFormat: "woff2" }));
writeFileSync(join(dist, "fonts-zh-ui.css"), `/* Chieu Han UI: Noto Sans SC cut to the client's own hanzi (SIL Open Font License 1.1) */
@font-face {
  font-family: 'Chieu Han UI';
  font-style: normal;
  font-display: swap;
  font-weight: 400;
  src: url(fonts/${uiFile}) format('woff2');
  unicode-range: ${range([...uiText].map((c) => c.codePointAt(0)))};
}
`);

// favicon.ico (for clients that ask for it without reading the page): 32×32, the logo's colours
const size = 32, px = Buffer.alloc(size * size * 4), mask = Buffer.alloc(size * 4);
for (let y = 0; y < size; y++) for (let x = 0; x < size; x++) {
  const d = Math.hypot(x - 15.5, y - 15.5), i = ((size - 1 - y) * size + x) * 4;
  const [r, g, b] = d < 9 ? [0x8b, 0x1e, 0x1e] : d < 11 ? [0xd9, 0xa4, 0x41] : d < 14 ? [0xf4, 0xe3, 0xc1] : [0x8b, 0x1e, 0x1e];
  px.set([b, g, r, 255], i);
}
const bmp = Buffer.alloc(40);
bmp.writeUInt32LE(40, 0); bmp.writeInt32LE(size, 4); bmp.writeInt32LE(size * 2, 8); bmp.writeUInt16LE(1, 12); bmp.writeUInt16LE(32, 14);
const image = Buffer.concat([bmp, px, mask]);
const head = Buffer.alloc(22);
head.writeUInt16LE(1, 2); head.writeUInt16LE(1, 4); head.writeUInt8(size, 6); head.writeUInt8(size, 7);
head.writeUInt16LE(1, 10); head.writeUInt16LE(32, 12); head.writeUInt32LE(image.length, 14); head.writeUInt32LE(22, 18);
writeFileSync(join(dist, "favicon.ico"), Buffer.concat([head, image]));

// 连连看's tiles: pictures of animals from Twemoji (@iconify-json/twemoji, graphics CC BY 4.0,
// by Twitter and the jdecked/twemoji contributors), one <symbol> per pattern in one sprite the
// page fetches only when a 连连看 board is shown (its order is the board's FACES, pattern p = #tp).
const ANIMALS = ["mouse-face", "cow-face", "tiger-face", "rabbit-face", "dragon-face", "snake", "horse-face", "ewe",
  "monkey-face", "rooster", "dog-face", "pig-face", "cat-face", "bear", "deer", "flamingo", "turtle", "fish", "eagle",
  "dove", "duck", "swan", "frog", "butterfly", "honeybee", "lion", "elephant", "wolf", "fox", "leopard", "crab",
  "shrimp", "ant", "parrot", "whale", "cricket"];
const twemoji = JSON.parse(readFileSync(join(web, "node_modules/@iconify-json/twemoji/icons.json"), "utf8"));
const icon = twemoji.width ?? 36;
writeFileSync(join(dist, "llk-tiles.svg"), `<svg xmlns="http://www.w3.org/2000/svg">
<!-- Twemoji by Twitter, Inc and other contributors, CC BY 4.0 (https://creativecommons.org/licenses/by/4.0/) -->
${ANIMALS.map((n, i) => `<symbol id="t${i + 1}" viewBox="0 0 ${icon} ${icon}">${twemoji.icons[n].body}</symbol>`).join("\n")}
</svg>
`);

await build({
  entryPoints: [join(web, "src/app/main.ts")],
  outfile: join(dist, "app.js"),
  bundle: true, format: "esm", platform: "browser", target: "es2022",
  minify: true, sourcemap: true, logLevel: "warning",
});
const old = join(web, `.dist-old-${process.pid}`);
if (existsSync(join(web, "dist"))) renameSync(join(web, "dist"), old);
renameSync(dist, join(web, "dist"));
rmSync(old, { recursive: true, force: true });
const node = (dir) => readdirSync(join(web, dir)).filter((f) => f.endsWith(".ts")).map((f) => join(web, dir, f));
rmSync(join(web, "build"), { recursive: true, force: true });
for (const dir of ["test", "bench"]) {
  await build({
    entryPoints: node(dir),
    outdir: join(web, "build", dir), outExtension: { ".js": ".mjs" },
    bundle: true, format: "esm", platform: "node", target: "node20",
    packages: "external", sourcemap: "inline", logLevel: "warning",
  });
}
console.log("web: built dist/ (the page) and build/ (node tests and tools)");
