// Bundles the inspector's sources into the one script recapd embeds:
// src/inspector/assets/inspector.js (next to the hand-written index.html and
// inspector.css). Deterministic: the same sources and lockfile give the same
// bytes, so CI can rebuild and `git diff --exit-code` the result.
//
// The bundled packages' licences end the file: their copyright notices (the
// comments their files start with, each distinct one once), the licence
// files they ship, and the Apache License's text for those under it (they
// ship none; licenses/Apache-2.0.txt is its standard text).
import { build } from "esbuild";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";

const here = dirname(fileURLToPath(import.meta.url));
const outfile = join(here, "..", "src", "inspector", "assets", "inspector.js");

const result = await build({
  entryPoints: [join(here, "src", "main.js")],
  outfile,
  bundle: true,
  format: "esm",
  target: "es2020",
  platform: "browser",
  minify: true,
  sourcemap: false,
  // Comments marked as legal (/*! */, @license) are kept, at the end.
  legalComments: "eof",
  charset: "utf8",
  logLevel: "warning",
  // No absolute paths or timestamps in the output.
  absWorkingDir: here,
  metafile: true,
  write: false,
});

const [output] = result.outputFiles;
writeFileSync(outfile, output.text.replace(/\n*$/, "\n") + licences(result.metafile));
console.log(`built ${outfile}`);

/**
 * The licence notices of every package with code in the bundle.
 * @param {import("esbuild").Metafile} metafile
 */
function licences(metafile) {
  const used = Object.values(metafile.outputs)
    .flatMap((o) => Object.entries(o.inputs))
    .filter(([, info]) => info.bytesInOutput > 0)
    .map(([path]) => path)
    .filter((path) => path.startsWith("node_modules/"))
    .sort();
  /** @type {Map<string, { version: string, license: string, notices: string[], files: string[] }>} */
  const packages = new Map();
  for (const path of used) {
    const parts = path.split("/");
    const name = parts[1].startsWith("@") ? `${parts[1]}/${parts[2]}` : parts[1];
    if (!packages.has(name)) {
      const dir = join(here, "node_modules", name);
      const meta = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const files = ["LICENSE", "LICENSE.md", "LICENSE.txt", "LICENCE", "NOTICE"]
        .filter((f) => existsSync(join(dir, f)))
        .map((f) => readFileSync(join(dir, f), "utf8").trim());
      packages.set(name, { version: meta.version, license: String(meta.license ?? "see its files"), notices: [], files });
    }
    const notice = leadingCopyright(readFileSync(join(here, path), "utf8"));
    const pkg = /** @type {any} */ (packages.get(name));
    if (notice && !pkg.notices.includes(notice)) pkg.notices.push(notice);
  }
  const names = [...packages.keys()].sort();
  const parts = [
    "Third-party software bundled in this file, and its licences:",
    ...names.map((n) => `  ${n} ${packages.get(n)?.version} (${packages.get(n)?.license})`),
  ];
  for (const n of names) {
    const pkg = /** @type {any} */ (packages.get(n));
    parts.push("", `==== ${n} ${pkg.version}`, ...pkg.notices.flatMap((t) => ["", t]), ...pkg.files.flatMap((t) => ["", t]));
  }
  if (names.some((n) => /Apache-2\.0/.test(packages.get(n)?.license ?? ""))) {
    parts.push("", "==== The Apache License, Version 2.0", "", readFileSync(join(here, "licenses", "Apache-2.0.txt"), "utf8").trim());
  }
  const body = parts.join("\n").replaceAll("*/", "* /");
  return `/*!\n${body}\n*/\n`;
}

/**
 * The copyright notice a source file starts with (its leading comment, up
 * to a blank line or code), or null.
 * @param {string} text
 */
function leadingCopyright(text) {
  const lines = [];
  for (const line of text.split("\n")) {
    const m = /^\s*\/\/ ?(.*)$/.exec(line);
    if (!m) break;
    lines.push(m[1].trimEnd());
  }
  let notice = lines.join("\n").trim();
  // What follows the licence's own last sentence is the file's own comment.
  for (const end of ["limitations under the License.", "OF SUCH DAMAGE."]) {
    const at = notice.indexOf(end);
    if (at >= 0) notice = notice.slice(0, at + end.length);
  }
  return /copyright/i.test(notice) ? notice : null;
}
