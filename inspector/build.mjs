// Bundles the inspector's sources into the one script recapd embeds:
// src/inspector/assets/inspector.js (next to the hand-written index.html and
// inspector.css). Deterministic: the same sources and lockfile give the same
// bytes, so CI can rebuild and `git diff --exit-code` the result.
import { build } from "esbuild";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const outfile = join(here, "..", "src", "inspector", "assets", "inspector.js");

await build({
  entryPoints: [join(here, "src", "main.js")],
  outfile,
  bundle: true,
  format: "esm",
  target: "es2020",
  platform: "browser",
  minify: true,
  sourcemap: false,
  // The licences of the bundled packages stay in the output, at its end.
  legalComments: "eof",
  charset: "utf8",
  logLevel: "warning",
  // No absolute paths or timestamps in the output.
  absWorkingDir: here,
});
console.log(`built ${outfile}`);
