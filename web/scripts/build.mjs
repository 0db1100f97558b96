// Bundles the front-end (src/app → dist/) and the node tests and tools (test/, bench/ → build/)
// with esbuild. `node scripts/build.mjs` (npm run build).
import { build } from "esbuild";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const web = join(dirname(fileURLToPath(import.meta.url)), "..");
rmSync(join(web, "dist"), { recursive: true, force: true });
mkdirSync(join(web, "dist"), { recursive: true });
for (const f of ["index.html", "style.css"]) cpSync(join(web, "src/app", f), join(web, "dist", f));
await build({
  entryPoints: [join(web, "src/app/main.ts")],
  outfile: join(web, "dist/app.js"),
  bundle: true, format: "esm", platform: "browser", target: "es2022",
  minify: true, sourcemap: true, logLevel: "warning",
});
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
