// Bundles the front-end (src/app → dist/) and the node tests and tools (test/, bench/ → build/)
// with esbuild, and ships the fonts (Noto Sans for Latin and Vietnamese, Noto Sans SC for CJK,
// from @fontsource, woff2 only, split by unicode-range so a browser fetches only the pieces its
// text uses) and the favicons. `node scripts/build.mjs` (npm run build).
import { build } from "esbuild";
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

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
      out.push(block);
    }
  }
  return `/* ${pkg} (@fontsource, SIL Open Font License 1.1) */\n${out.join("\n")}\n`;
}
writeFileSync(join(dist, "fonts-vi.css"), fonts("noto-sans", [400, 700], (n) => /-(latin|latin-ext|vietnamese)-\d+-normal$/.test(n)));
writeFileSync(join(dist, "fonts-zh.css"), fonts("noto-sans-sc", [400], (n) => /\[\d+\]/.test(n)));

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
