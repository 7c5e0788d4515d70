// The inspector in a real browser (headless Chromium through
// playwright-core), against a live recapd that the caller started, seeded
// and drives.
//
//   INSPECTOR_URL=http://127.0.0.1:8080/ RECAPD_TOKEN=... CHROMIUM=/usr/bin/chromium \
//   SCREENSHOT_DIR=target/inspector-screenshots node inspector/tests/browser.mjs
//
// Conversation with the caller, by lines: when the script needs the caller
// to act it prints `STEP <name>` on stdout and reads one line of JSON from
// stdin as the answer. Everything else it says goes to stderr. It prints
// `DONE` and exits 0 when every check passed; otherwise it prints the
// reason on stderr, saves failure.png and exits 1. Every wait is bounded.
//
// Steps, in order, and the answers they want:
//   ready          → {chatId, includedMessageId, excludedMessageId,
//                     hiddenMessageId (hidden by hand, outside auto-hide's
//                     prefix), injectionText, excludedReason (optional)}
//   publish        → {injectionText}: the injection changed to hold it
//   job            → {jobId}: a job whose LLM call is held
//   release        → {}: the call let go, the job will succeed
//   edited <text>  → {ok: true} once the injection holds <text>, or {error}
// The seeded messages should be among the chat's newest 200 (the timeline
// shows those first).
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { mkdirSync } from "node:fs";
import { join } from "node:path";

const URL_ = process.env.INSPECTOR_URL;
const TOKEN = process.env.RECAPD_TOKEN ?? "";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SCREENSHOT_DIR || ".";
const WAIT = 15_000; // one wait in the page
const ANSWER_WAIT = 120_000; // the caller's answer to a STEP
const WHOLE_RUN = 300_000;

const EDITED_TEXT = "Edited in the inspector: the letter is under the floorboard.";

const log = (...args) => console.error("[browser]", ...args);

// ---- the line protocol
const lines = createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();

/**
 * Asks the caller to act and waits for its one-line JSON answer.
 * @param {string} name
 * @param {string} [extra] the rest of the STEP line
 */
async function step(name, extra) {
  process.stdout.write(`STEP ${name}${extra ? ` ${extra}` : ""}\n`);
  log(`asked: STEP ${name}`);
  const next = await bounded(lines.next(), ANSWER_WAIT, `the answer to STEP ${name}`);
  if (next.done) throw new Error(`stdin closed before the answer to STEP ${name}`);
  try {
    return JSON.parse(next.value);
  } catch {
    throw new Error(`the answer to STEP ${name} is not JSON: ${next.value}`);
  }
}

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
function bounded(promise, ms, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** A CSS attribute value in double quotes. */
const q = (s) => JSON.stringify(String(s));

// ---- the run
let browser;
let page;
const pageErrors = [];

async function shot(name) {
  const path = join(SHOTS, name);
  await page.screenshot({ path, fullPage: false });
  log(`screenshot ${path}`);
}

/**
 * Waits until the element `selector` holds `text`.
 * @param {string} selector
 * @param {string} text
 * @param {string} what
 */
async function waitText(selector, text, what) {
  try {
    await page.waitForFunction(
      ([sel, t]) => [...document.querySelectorAll(sel)].some((el) => el.textContent.includes(t)),
      [selector, text],
      { timeout: WAIT },
    );
  } catch {
    const seen = await page.locator(selector).allTextContents().catch(() => []);
    throw new Error(`${what}: no ${selector} holds ${JSON.stringify(text)} after ${WAIT} ms (seen: ${JSON.stringify(seen).slice(0, 600)})`);
  }
}

/**
 * Waits until `selector` matches an element whose attribute `name` is one of `values`.
 * @param {string} selector
 * @param {string} name
 * @param {string[]} values
 * @param {string} what
 */
async function waitAttr(selector, name, values, what) {
  try {
    await page.waitForFunction(
      ([sel, n, vs]) => {
        const el = document.querySelector(sel);
        return el !== null && vs.includes(el.getAttribute(n));
      },
      [selector, name, values],
      { timeout: WAIT },
    );
  } catch {
    const now = await page.locator(selector).first().getAttribute(name, { timeout: 1000 }).catch(() => "(absent)");
    throw new Error(`${what}: ${selector} ${name} is ${now}, wanted one of ${values.join(", ")}`);
  }
}

/** Fails when the page reloaded since `mark()`. */
async function mark() {
  await page.evaluate(() => {
    window.__inspectorTestMark = true;
  });
}
async function assertNotReloaded(what) {
  const kept = await page.evaluate(() => window.__inspectorTestMark === true);
  if (!kept) throw new Error(`${what}: the page was reloaded`);
}

async function openTab(name) {
  await page.getByRole("tab", { name, exact: true }).click({ timeout: WAIT });
  await page.waitForSelector(`[role="tabpanel"]:not([hidden])`, { timeout: WAIT });
}

async function run() {
  if (!URL_) throw new Error("INSPECTOR_URL is not set");
  mkdirSync(SHOTS, { recursive: true });

  const seed = await step("ready");
  for (const key of ["chatId", "includedMessageId", "excludedMessageId", "hiddenMessageId", "injectionText"]) {
    if (typeof seed[key] !== "string" || !seed[key]) throw new Error(`STEP ready: the answer has no ${key}`);
  }

  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-dev-shm-usage"], headless: true });
  const context = await browser.newContext({ viewport: { width: 1366, height: 768 } });
  page = await context.newPage();
  page.setDefaultTimeout(WAIT);
  page.on("pageerror", (err) => {
    pageErrors.push(String(err));
    log(`page error: ${err}`);
  });
  page.on("console", (msg) => {
    const text = msg.text();
    if (msg.type() === "error" || msg.type() === "warning") log(`console ${msg.type()}: ${text}`);
    // The page must live within its Content-Security-Policy.
    if (/Content Security Policy/i.test(text)) pageErrors.push(`CSP violation: ${text}`);
  });
  page.on("requestfailed", (req) => log(`request failed: ${req.method()} ${req.url()} ${req.failure()?.errorText ?? ""}`));

  // ---- 2. sign in: a wrong token is refused, the right one shows the chats
  await page.goto(URL_, { waitUntil: "domcontentloaded", timeout: WAIT });
  if (TOKEN) {
    const tokenInput = page.getByLabel("Bearer token");
    await tokenInput.waitFor({ timeout: WAIT });
    await tokenInput.fill("wrong-token-0123456789");
    await page.getByRole("button", { name: "Sign in" }).click();
    await waitText('[data-testid="login-error"]', "Refused", "a wrong token");
    if ((await page.locator('[data-testid="chat-list"]').count()) !== 0) {
      throw new Error("a wrong token: the chat list is shown");
    }
    await shot("login-refused.png");
    await tokenInput.fill(TOKEN);
    await page.getByRole("button", { name: "Sign in" }).click();
  } else {
    log("RECAPD_TOKEN is empty: the server is expected to need no token");
  }
  const chatLink = `a.chat-link[data-chat-id=${q(seed.chatId)}]`;
  await page.waitForSelector(chatLink, { timeout: WAIT });
  if (TOKEN) {
    if ((await page.getByRole("button", { name: "Sign out" }).count()) !== 1) {
      throw new Error("signed in: there is no Sign out button");
    }
    // The token is kept for this tab only.
    const kept = await page.evaluate(() => ({ session: sessionStorage.length, local: localStorage.length }));
    if (kept.session !== 1 || kept.local !== 0) throw new Error(`the token is not kept in sessionStorage alone: ${JSON.stringify(kept)}`);
  }
  await shot("chats.png");

  // ---- 3. find the chat, open it, see the inclusion marks
  await page.getByLabel("Search chats").fill(seed.chatId);
  await page.waitForFunction(
    (sel) => document.querySelectorAll("a.chat-link").length >= 1 && document.querySelector(sel) !== null,
    chatLink,
    { timeout: WAIT },
  );
  await page.locator(chatLink).click();
  await page.getByRole("heading", { name: `Chat ${seed.chatId}` }).waitFor({ timeout: WAIT });
  const msg = (id) => `[data-testid="message"][data-message-id=${q(id)}]`;
  await page.waitForSelector(msg(seed.includedMessageId), { timeout: WAIT });
  await waitAttr(msg(seed.includedMessageId), "data-inclusion", ["included"], "the included message");
  await waitText(msg(seed.includedMessageId), "Included", "the included message's mark");
  await waitAttr(msg(seed.excludedMessageId), "data-inclusion", ["excluded"], "the excluded message");
  const reason = await page.locator(msg(seed.excludedMessageId)).getAttribute("data-reason");
  if (!reason) throw new Error("the excluded message has no reason");
  if (seed.excludedReason && reason !== seed.excludedReason) {
    throw new Error(`the excluded message's reason is ${reason}, GetInclusion says ${seed.excludedReason}`);
  }
  await waitText(msg(seed.excludedMessageId), "Excluded: ", "the excluded message's reason");
  log(`excluded message's reason: ${reason}`);
  await waitAttr(msg(seed.hiddenMessageId), "data-hidden", ["hand"], "the message hidden by hand");
  await waitText(msg(seed.hiddenMessageId), "Hidden by hand", "the hidden message's mark");
  await shot("chat-timeline.png");

  // ---- 4. the injection, and the prompt preview
  // The injection's text is shown beside every view, and placed in the
  // prompt preview (RenderPrompt) of the "Injection & prompt" view, whose
  // table says where each tier goes.
  await openTab("Injection & prompt");
  // Any tier: the running recap's, the message recaps' or recall's.
  const liveText = '[data-testid^="live-tier-"] [data-testid="live-injection-text"]';
  const placed = '[data-testid="prompt-preview"] .pm-recapd';
  await waitText(liveText, seed.injectionText, "the injection beside the views");
  await page.waitForSelector('[data-testid="injection-tier-auto_recap_scene"]', { timeout: WAIT });
  await waitText(placed, seed.injectionText, "the injection placed in the prompt preview");
  await shot("injection.png");

  // ---- 5. the injection follows a published event, live
  await mark();
  const published = await step("publish");
  if (!published.injectionText) throw new Error("STEP publish: the answer has no injectionText");
  await waitText(liveText, published.injectionText, "the injection beside the views after the published event (Subscribe)");
  await waitText(placed, published.injectionText, "the prompt preview after the published event");
  await assertNotReloaded("the injection update");

  // ---- 6. a job, live from PENDING/RUNNING to SUCCEEDED
  await openTab("Jobs");
  await page.locator('[data-testid="jobs-scope"]').selectOption("all");
  await page.waitForSelector('[data-testid="jobs-stream-state"] .badge-ok', { timeout: WAIT });
  const { jobId } = await step("job");
  if (!jobId) throw new Error("STEP job: the answer has no jobId");
  const job = `[data-testid="job"][data-job-id=${q(jobId)}]`;
  await waitAttr(job, "data-state", ["PENDING", "RUNNING"], "the held job");
  await shot("jobs.png");
  await step("release");
  await waitAttr(job, "data-state", ["SUCCEEDED"], "the released job");
  await assertNotReloaded("the job updates");

  // ---- 7. a new running-recap version, edited in the page; the injection follows
  await openTab("Running recap");
  const area = page.getByLabel("Text of the new version");
  await area.waitFor({ timeout: WAIT });
  await area.fill(EDITED_TEXT);
  await page.getByRole("button", { name: "Add as the current version" }).click();
  await waitText(liveText, EDITED_TEXT, "the injection after the edit");
  await waitText('[data-testid="current-recap"]', EDITED_TEXT, "the running recap's current version");
  const versions = await page.locator('[data-testid="recap-versions"] tbody tr').count();
  if (versions >= 2) {
    await page.waitForSelector('[data-testid="recap-compare"] [data-testid="diff"] ins', { timeout: WAIT });
  } else {
    log(`the running recap has ${versions} version(s): no diff to show`);
  }
  await page.locator('[data-testid="current-recap"]').scrollIntoViewIfNeeded();
  await shot("running-recap.png");
  const edited = await step("edited", EDITED_TEXT);
  if (edited.error || edited.ok !== true) throw new Error(`STEP edited: ${edited.error ?? JSON.stringify(edited)}`);

  // ---- 8. World Info and recall, when this server has them (optional)
  await optionalView("World Info", '[data-testid="wi-scan"]', "world-info.png");
  await optionalView("Recall", '[data-testid="recall-hits"]', "recall.png");

  // ---- signing out forgets the token and asks for one again
  if (TOKEN) {
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Bearer token").waitFor({ timeout: WAIT });
    if ((await page.evaluate(() => sessionStorage.length)) !== 0) throw new Error("signed out: the token is still kept");
  }

  if (pageErrors.length) throw new Error(`the page reported errors: ${pageErrors.join(" | ")}`);
}

/**
 * Opens a view if the page has it and screenshots it once it has read its data.
 * @param {string} tab
 * @param {string} body
 * @param {string} file
 */
async function optionalView(tab, body, file) {
  try {
    if ((await page.getByRole("tab", { name: tab, exact: true }).count()) === 0) {
      log(`no ${tab} view: skipped`);
      return;
    }
    await openTab(tab);
    await page.waitForSelector(`${body}:not([aria-busy])`, { timeout: WAIT });
    await page.waitForFunction((sel) => !/…$/.test(document.querySelector(sel)?.textContent?.trim() ?? ""), body, { timeout: WAIT });
    await shot(file);
  } catch (err) {
    log(`${tab} view (optional): ${err.message}`);
  }
}

const watchdog = setTimeout(() => fail(new Error(`the whole run took more than ${WHOLE_RUN} ms`)), WHOLE_RUN);

async function fail(err) {
  console.error(`FAILED: ${err?.stack ?? err}`);
  try {
    if (page) await bounded(page.screenshot({ path: join(SHOTS, "failure.png"), fullPage: false }), 10_000, "the failure screenshot");
  } catch (e) {
    console.error(`could not save failure.png: ${e}`);
  }
  try {
    if (browser) await bounded(browser.close(), 10_000, "closing the browser");
  } catch {}
  process.exit(1);
}

run().then(
  async () => {
    clearTimeout(watchdog);
    await bounded(browser.close(), 10_000, "closing the browser").catch(() => {});
    process.stdout.write("DONE\n");
    process.exit(0);
  },
  fail,
);
