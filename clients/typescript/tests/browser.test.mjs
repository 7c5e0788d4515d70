// The installed package in headless Chromium: a page bundled with esbuild
// (the package's `browser` build), served from its own origin, calls a
// live recapd over gRPC-Web: getInjection, and follow yielding an
// injection published after it started, also across a kill -9 and a
// restart of the server.
import { test } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { build } from "esbuild";
import { chromium } from "playwright-core";
import { connect } from "@recapd/client";
import { Recapd, freePort, tempDir, tokensFile } from "./lib/server.mjs";

const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT = 15_000;
const TOKEN = "browser-secret-0123456789";

test("a page calls recapd over gRPC-Web", async (t) => {
  assert.ok(existsSync(CHROMIUM), `no Chromium at ${CHROMIUM}`);
  // The page, bundled for browsers from the installed package.
  const bundled = await build({
    entryPoints: [join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "browser", "page.mjs")],
    bundle: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    write: false,
    metafile: true,
    logLevel: "warning",
  });
  const inputs = Object.keys(bundled.metafile.inputs);
  assert.ok(inputs.some((p) => p.includes("node_modules/@recapd/client/dist/browser.js")), "the browser build is bundled");
  assert.ok(!inputs.some((p) => p.includes("connect-node") || p.includes("dist/node.js")), "nothing of the Node build is bundled");
  const script = bundled.outputFiles[0].text;

  // A static server for the page, on its own origin.
  const pagePort = await freePort();
  const origin = `http://127.0.0.1:${pagePort}`;
  const pages = createServer((request, response) => {
    if (request.url === "/page.js") {
      response.writeHead(200, { "content-type": "text/javascript" }).end(script);
    } else if (request.url === "/") {
      response.writeHead(200, { "content-type": "text/html" }).end('<!doctype html><title>loading</title><script type="module" src="/page.js"></script>');
    } else {
      response.writeHead(404).end();
    }
  });
  await new Promise((resolve) => pages.listen(pagePort, "127.0.0.1", resolve));
  t.after(() => new Promise((resolve) => pages.close(resolve)));

  const tokens = tempDir("recapd-ts-browser-");
  t.after(() => tokens.remove());
  const server = new Recapd({
    args: ["--auth-tokens-file", tokensFile(tokens.path, { web: TOKEN }), "--grpc-web-allowed-origins", origin],
  });
  t.after(() => server.close());
  await server.start();
  const address = `http://${server.address}`;

  // Seed a chat from Node.
  const recapd = connect({ address: server.address, token: TOKEN });
  await recapd.events.publish({
    event: { chatId: "web-1", kind: { case: "chatChanged", value: { messages: [{ id: "m1", name: "Alice", text: "Hi!", isUser: true }] } } },
  });

  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"], timeout: 30_000 });
  t.after(() => browser.close());
  const page = await browser.newPage();
  const pageErrors = [];
  page.on("pageerror", (error) => pageErrors.push(String(error)));
  page.setDefaultTimeout(WAIT);
  await page.goto(`${origin}/`, { timeout: WAIT });
  await page.waitForFunction(() => document.title === "ready", null, { timeout: WAIT });

  const injection = await page.evaluate(([a, k]) => window.recapdTest.getInjection(a, k, "web-1"), [address, TOKEN]);
  assert.deepEqual(injection, { chatId: "web-1", revision: "1", text: "" });
  const refused = await page.evaluate(([a]) => window.recapdTest.codeWithoutToken(a, "web-1"), [address]);
  assert.equal(refused, 16, "UNAUTHENTICATED without the token");

  await page.evaluate(([a, k]) => window.recapdTest.startFollow(a, k, ["web-1"]), [address, TOKEN]);
  await page.waitForFunction(() => window.followed.length >= 1 || window.followError, null, { timeout: WAIT });
  assert.equal(await page.evaluate(() => window.followError), null);
  // Published after follow started: it must arrive in the page.
  await recapd.memory.addRunningRecap({ chatId: "web-1", content: "Alice said hi.", sceneCount: 1 });
  try {
    await page.waitForFunction(() => window.followed.some((i) => i.revision === "2") || window.followError, null, { timeout: WAIT });
  } catch {
    throw new Error(`follow in the page did not yield revision 2: ${JSON.stringify(await page.evaluate(() => window.followed))}`);
  }
  assert.equal(await page.evaluate(() => window.followError), null);
  const followed = await page.evaluate(() => window.followed);
  assert.deepEqual(followed.map((i) => i.revision), ["1", "2"]);
  assert.match(followed[1].text, /Alice said hi\./);

  // kill -9 and a restart on the same port and data directory: follow in
  // the page subscribes again, and a refresh made after it arrives once.
  await server.kill();
  await new Promise((resolve) => setTimeout(resolve, 300));
  await server.start();
  await recapd.events.publish({ event: { chatId: "web-1", kind: { case: "refreshRequested", value: {} } } });
  try {
    await page.waitForFunction(() => window.followed.some((i) => i.revision === "3") || window.followError, null, { timeout: WAIT });
  } catch {
    throw new Error(`follow in the page did not yield revision 3 after the restart: ${JSON.stringify(await page.evaluate(() => [window.followed, window.retries]))}`);
  }
  assert.equal(await page.evaluate(() => window.followError), null);
  assert.deepEqual((await page.evaluate(() => window.followed)).map((i) => i.revision), ["1", "2", "3"]);
  const retries = await page.evaluate(() => window.retries);
  assert.ok(retries.length >= 1, "the page's follow retried");
  console.error(`browser follow retried after the kill: ${JSON.stringify(retries.slice(0, 3))}`);
  await page.evaluate(() => window.stopFollow.abort());
  assert.deepEqual(pageErrors, []);
});
