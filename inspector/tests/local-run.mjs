// Runs the browser test (browser.mjs) by hand, without the Rust test: starts
// a recapd (with tokens, an inspector listener and a fake LLM whose answers
// it holds on demand), seeds a chat through the public API over gRPC-Web
// (the descriptors from /recap.v1.binpb, as the page does), then answers
// browser.mjs's STEP lines as the Rust test would.
//
//   node inspector/tests/local-run.mjs [path/to/recapd] [--serve]
//
// --serve: start and seed, print the page's address and token, and keep
// serving (until interrupted) instead of running browser.mjs.
//
// Default binary: $CARGO_TARGET_DIR/debug/recapd, else target/debug/recapd.
// Screenshots go to $SCREENSHOT_DIR (default: a fresh temporary folder).
import { spawn } from "node:child_process";
import { createServer } from "node:http";
import { mkdtempSync, writeFileSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { createServer as netServer } from "node:net";
import { fromBinary, createFileRegistry } from "@bufbuild/protobuf";
import { FileDescriptorSetSchema } from "@bufbuild/protobuf/wkt";
import { createClient } from "@connectrpc/connect";
import { createGrpcWebTransport } from "@connectrpc/connect-web";

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, "..", "..");
const serveOnly = process.argv.includes("--serve");
const bin = process.argv.slice(2).find((a) => !a.startsWith("--")) ?? join(process.env.CARGO_TARGET_DIR ?? join(repo, "target"), "debug", "recapd");
const TOKEN = "inspector-test-token-0123456789";
const CHAT = "inn-chat-1";
/** The error of m1's last recap attempt: the page's hand edit removes it. */
const RECAP_ERROR = "The LLM timed out.";
const log = (...a) => console.error("[local-run]", ...a);

function freePort() {
  return new Promise((resolve) => {
    const s = netServer().listen(0, "127.0.0.1", () => {
      const { port } = /** @type {any} */ (s.address());
      s.close(() => resolve(port));
    });
  });
}

// ---- a fake OpenAI-compatible LLM whose answers can be held
let held = false;
/** @type {Array<() => void>} */
let waiting = [];
const llm = createServer((req, res) => {
  let body = "";
  req.on("data", (c) => (body += c));
  req.on("end", () => {
    const answer = () => {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({
        id: "fake", object: "chat.completion", model: "fake",
        choices: [{ index: 0, finish_reason: "stop", message: { role: "assistant", content: JSON.stringify({ recap: "Bob greets Alice warmly at the inn." }) } }],
        usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
      }));
    };
    log(`LLM asked (${held ? "held" : "answered"})`);
    if (held) waiting.push(answer);
    else answer();
  });
});

async function main() {
  const [grpcPort, inspectorPort, llmPort] = [await freePort(), await freePort(), await freePort()];
  await new Promise((r) => llm.listen(llmPort, "127.0.0.1", () => r(undefined)));
  const dir = mkdtempSync(join(tmpdir(), "inspector-run-"));
  writeFileSync(join(dir, "tokens"), `alice ${TOKEN}\nbob other-tenant-token-0123456789\n`);
  const shots = process.env.SCREENSHOT_DIR ?? join(dir, "screenshots");
  mkdirSync(shots, { recursive: true });
  const recapd = spawn(bin, [
    "--listen", `127.0.0.1:${grpcPort}`,
    "--inspector-listen", `127.0.0.1:${inspectorPort}`,
    "--data-dir", join(dir, "data"),
    "--auth-tokens-file", join(dir, "tokens"),
    "--llm-url", `http://127.0.0.1:${llmPort}/v1`,
    "--llm-model", "fake",
    "--metrics-listen", "off",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  recapd.stderr.on("data", (d) => process.env.VERBOSE && process.stderr.write(d));
  const stop = () => recapd.kill("SIGTERM");
  process.on("exit", stop);

  const base = `http://127.0.0.1:${inspectorPort}`;
  let bytes;
  for (let i = 0; ; i++) {
    try {
      const r = await fetch(`${base}/recap.v1.binpb`);
      if (r.ok) { bytes = new Uint8Array(await r.arrayBuffer()); break; }
    } catch {}
    if (i > 100) throw new Error("recapd did not start");
    await new Promise((r) => setTimeout(r, 200));
  }
  const registry = createFileRegistry(fromBinary(FileDescriptorSetSchema, bytes));
  const transport = createGrpcWebTransport({
    baseUrl: base,
    interceptors: [(next) => (req) => { req.header.set("authorization", `Bearer ${TOKEN}`); return next(req); }],
  });
  const c = (name) => createClient(registry.getService(`recap.v1.${name}`), transport);
  const events = c("EventService"), memory = c("MemoryService"), injection = c("InjectionService"), recap = c("RecapService");
  const settings = c("SettingsService"), lorebook = c("LorebookService");

  // ---- the seeded chat
  const m = (id, name, text, extra = {}) => ({ id, name, text, ...extra });
  await events.publish({ event: { chatId: CHAT, kind: { case: "chatChanged", value: { messages: [
    m("m0", "Alice", "(out of character) brb, getting tea", { isUser: true, hidden: true }),
    m("m1", "Bob", "Welcome to the Crooked Lantern, Alice. Sit, the stew is hot."),
    m("m2", "Alice", "Thanks, Bob. Did anyone leave a letter for me?", { isUser: true }),
    m("m3", "Bob", "A courier came at dawn. He hid the letter somewhere in this room and left."),
    m("m4", "Alice", "Then I will search the room tonight.", { isUser: true }),
  ] } } } });
  await memory.setMessageData({ chatId: CHAT, messageId: "m1", data: { memory: "Bob welcomes Alice to the Crooked Lantern inn.", error: RECAP_ERROR } });
  await memory.setMessageData({ chatId: CHAT, messageId: "m2", data: { memory: "Alice asks about a letter.", exclude: true } });
  await memory.setMessageData({ chatId: CHAT, messageId: "m3", data: { memory: "A courier hid a letter in the room.", sceneBreak: true, sceneBreakName: "Arrival at the inn", sceneRecapMemory: "Alice arrives at the inn; a courier hid a letter for her in the room." } });
  // A book that applies, the message-recap and recall tiers on: every view has something to show.
  await lorebook.importLorebook({ name: "Crooked Lantern", json: JSON.stringify({ entries: {
    0: { uid: 0, key: ["letter"], comment: "The letter", content: "The letter is sealed with green wax and smells of pine.", position: 0, order: 100 },
    1: { uid: 1, key: ["Bob"], comment: "Bob", content: "Bob keeps the Crooked Lantern and owes the courier a favour.", position: 4, depth: 2, role: 0, order: 90 },
    2: { uid: 2, key: ["dragon"], comment: "Dragons", content: "No dragon has been seen for a century.", position: 1, order: 50 },
  } }) });
  await settings.updateSettings({ chatId: CHAT, settings: {
    worldInfoGlobalBooks: { values: ["Crooked Lantern"] },
    messageRecapsEnabled: true,
    recallEnabled: true,
    recallExcludeRecent: 0,
  } });
  const first = "Alice came to the Crooked Lantern inn, where a letter waits for her.";
  await memory.addRunningRecap({ chatId: CHAT, content: first, sceneCount: 1, newSceneMessageId: "m3" });
  for (let i = 0; i < 5; i++) {
    await events.publish({ event: { chatId: `other-chat-${i}`, kind: { case: "chatChanged", value: { messages: [m("x0", "Carol", `Hello ${i}`)] } } } });
  }
  log(`recapd on ${grpcPort}, inspector on ${base}, screenshots in ${shots}`);
  if (serveOnly) {
    console.log(JSON.stringify({ url: `${base}/`, token: TOKEN, grpc: `127.0.0.1:${grpcPort}`, chatId: CHAT }));
    process.on("SIGINT", () => process.exit(0));
    process.on("SIGTERM", () => process.exit(0));
    return;
  }

  // ---- the browser test, answered as the Rust test would
  const child = spawn(process.execPath, [join(here, "browser.mjs")], {
    env: { ...process.env, INSPECTOR_URL: `${base}/`, RECAPD_TOKEN: TOKEN, CHROMIUM: process.env.CHROMIUM ?? "/usr/bin/chromium", SCREENSHOT_DIR: shots },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const answer = (obj) => child.stdin.write(`${JSON.stringify(obj)}\n`);
  let done = false;
  for await (const line of createInterface({ input: child.stdout })) {
    log(`browser says: ${line}`);
    const [, name, rest] = /^STEP (\S+) ?(.*)$/.exec(line) ?? [];
    if (line === "DONE") done = true;
    else if (name === "ready") {
      answer({
        chatId: CHAT, includedMessageId: "m1", excludedMessageId: "m2", hiddenMessageId: "m0", injectionText: first,
        sceneMessageId: "m4", editMessageId: "m1", editError: RECAP_ERROR, branchMessageId: "m3",
      });
    } else if (name === "publish") {
      const next = "Alice came to the inn; Bob told her the courier hid the letter in her room.";
      await memory.addRunningRecap({ chatId: CHAT, content: next, sceneCount: 1, newSceneMessageId: "m3" });
      answer({ injectionText: next });
    } else if (name === "job") {
      held = true;
      const res = await recap.generateMessageRecaps({ chatId: CHAT, messageIds: ["m4"] });
      answer({ jobId: res.jobs[0].jobId });
    } else if (name === "release") {
      held = false;
      for (const w of waiting) w();
      waiting = [];
      answer({});
    } else if (name === "edited") {
      const inj = await injection.getInjection({ chatId: CHAT });
      answer(inj.text.includes(rest) ? { ok: true } : { error: `the injection does not hold it: ${inj.text}` });
    } else if (name === "data") {
      const d = await memory.getMessageData({ chatId: CHAT, messageId: rest });
      const keys = ["memory", "error", "edited", "prefill", "sceneBreak", "sceneBreakVisible", "sceneBreakName", "sceneRecapMemory", "sceneRecapVersions", "sceneRecapCurrentIndex"];
      answer(Object.fromEntries(keys.map((k) => [k, d[k] ?? null])));
    } else if (name === "branch") {
      const chats = [];
      for (let pageToken = ""; ; ) {
        const page = await memory.listChats({ pageSize: 1000, pageToken });
        chats.push(...page.chats);
        pageToken = page.nextPageToken;
        if (!pageToken) break;
      }
      const c = chats.find((x) => x.chatId === rest);
      const recaps = c ? await memory.listRunningRecaps({ chatId: rest }) : null;
      answer(c ? { chatId: c.chatId, messageCount: c.messageCount, parentChatId: c.parentChatId, parentMessageId: c.parentMessageId, runningRecapCount: recaps.versions.length } : {});
    } else if (name === "recaps") {
      const list = await memory.listRunningRecaps({ chatId: CHAT });
      answer({ currentVersion: list.currentVersion ?? null, versions: list.versions.map((v) => v.version) });
    }
  }
  const code = await new Promise((r) => (child.exitCode !== null ? r(child.exitCode) : child.on("exit", r)));
  log(`browser.mjs exited ${code}${done ? " after DONE" : ""}; screenshots in ${shots}`);
  stop();
  llm.close();
  process.exit(code === 0 && done ? 0 : 1);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
