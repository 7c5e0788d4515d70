// Checks that the checked-in generated code and build are what the sources
// give: regenerates src/gen (buf generate with protoc-gen-es, from
// ../../proto) and rebuilds dist (tsc) into a temporary folder, and fails
// on any difference, naming the files.
//
//   node scripts/check.mjs        (npm run check; needs `npm ci` first)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const bin = join(root, "node_modules", ".bin");
const scratch = mkdtempSync(join(tmpdir(), "recapd-client-check-"));

/** Runs a tool of node_modules/.bin from the package folder; exits on failure. */
function run(tool, args) {
  const result = spawnSync(join(bin, tool), args, {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  if (result.status !== 0) {
    console.error(`check: ${tool} ${args.join(" ")} failed (${result.status ?? result.signal})`);
    rmSync(scratch, { recursive: true, force: true });
    process.exit(1);
  }
}

/** Every file under `dir`, as paths relative to it. */
function files(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...files(path).map((p) => join(name, p)));
    else out.push(name);
  }
  return out.sort();
}

/** The differences between two folders, one line each. */
function compare(expected, actual, label) {
  const want = files(expected);
  const have = files(actual);
  const problems = [];
  for (const f of want) {
    if (!have.includes(f)) problems.push(`${label}/${f} is missing`);
    else if (!readFileSync(join(expected, f)).equals(readFileSync(join(actual, f)))) problems.push(`${label}/${f} differs`);
  }
  for (const f of have) if (!want.includes(f)) problems.push(`${label}/${f} should not be there`);
  return problems;
}

run("buf", ["generate", "--output", scratch]);
const problems = compare(join(scratch, "src", "gen"), join(root, "src", "gen"), "src/gen");
run("tsc", ["-p", "tsconfig.json", "--outDir", join(scratch, "dist")]);
problems.push(...compare(join(scratch, "dist"), join(root, "dist"), "dist"));
rmSync(scratch, { recursive: true, force: true });

if (problems.length > 0) {
  console.error(`check: the checked-in files are not what the sources give (${relative(process.cwd(), root) || "."}):`);
  for (const p of problems) console.error(`  ${p}`);
  console.error("check: run `npm run generate && npm run build` in clients/typescript and commit the result");
  process.exit(1);
}
console.log("check: src/gen and dist are up to date");
