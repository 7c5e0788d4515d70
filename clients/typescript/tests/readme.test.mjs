// The README's first-injection example, run as written against a live
// recapd (only its address, 127.0.0.1:50051, is replaced by the test
// server's), and type-checked as TypeScript with the package's types.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Recapd } from "./lib/server.mjs";

const PACKAGE_DIR = process.env.RECAPD_CLIENT_DIR;
if (!PACKAGE_DIR) throw new Error("RECAPD_CLIENT_DIR is not set (the clients/typescript folder)");
// The test folder: @recapd/client is installed in its node_modules.
const WORK = process.cwd();

/** The code block after `<!-- example: first-injection -->` in the README. */
function example() {
  const readme = readFileSync(join(PACKAGE_DIR, "README.md"), "utf8");
  const match = /<!-- example: first-injection -->\s*```js\n([\s\S]*?)```/.exec(readme);
  assert.ok(match, "README.md has the first-injection example");
  return match[1];
}

test("the README example is at most ten lines", () => {
  const lines = example().trimEnd().split("\n");
  assert.ok(lines.length <= 10, `${lines.length} lines`);
});

test("the README example runs as written", async (t) => {
  const server = new Recapd();
  t.after(() => server.close());
  await server.start();
  const code = example();
  assert.ok(code.includes('"127.0.0.1:50051"'));
  const file = join(WORK, "readme-first-injection.mjs");
  writeFileSync(file, code.replaceAll('"127.0.0.1:50051"', JSON.stringify(server.address)));
  const run = spawnSync(process.execPath, [file], { cwd: WORK, encoding: "utf8", timeout: 30_000 });
  assert.equal(run.status, 0, `node ${file} failed: ${run.stderr}`);
  assert.match(run.stdout, /^revision 2, position 4:\n/);
  assert.match(run.stdout, /Alice and Bob met\./);
});

test("the README example type-checks as TypeScript", () => {
  writeFileSync(join(WORK, "readme-first-injection.mts"), example());
  writeFileSync(
    join(WORK, "tsconfig.readme.json"),
    JSON.stringify({
      compilerOptions: {
        target: "ES2022",
        module: "NodeNext",
        moduleResolution: "NodeNext",
        lib: ["ES2022", "DOM"],
        types: [],
        strict: true,
        noEmit: true,
        skipLibCheck: true,
      },
      files: ["readme-first-injection.mts"],
    }),
  );
  const tsc = join(PACKAGE_DIR, "node_modules", ".bin", "tsc");
  const check = spawnSync(tsc, ["-p", "tsconfig.readme.json"], { cwd: WORK, encoding: "utf8", timeout: 60_000 });
  assert.equal(check.status, 0, `tsc: ${check.stdout}${check.stderr}`);
});
