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
//                     prefix), injectionText, excludedReason (optional),
//                     sceneMessageId (no scene break, and none after
//                     `publish`), editMessageId (a recap whose `error` is
//                     set), editError (that error), branchMessageId (a
//                     message to branch the chat at, after `publish`)}
//   publish        → {injectionText}: the injection changed to hold it
//   job            → {jobId}: a job whose LLM call is held
//   release        → {}: the call let go, the job will succeed
//   edited <text>  → {ok: true} once the injection holds <text>, or {error}
//   data <id>      → message <id>'s MessageData as GetMessageData answers
//                    it (proto JSON names; an unset field is null)
//   recaps         → {currentVersion (null for none), versions: [numbers]}
//                    as ListRunningRecaps answers
//   group          → {groupId, members: [character keys]}: a group, with
//                    no disabled member, that lists the chat
//   group-state    → {disabledMembers, profile} as GetGroup answers
//   chat-profile   → {profile}: the chat's effective `profile` setting
//                    (GetSettings; null when none applies)
//   branch <id>    → chat <id> as ListChats and ListRunningRecaps see it:
//                    {chatId, messageCount, parentChatId, parentMessageId,
//                    runningRecapCount}; {} when not listed
// The seeded messages should be among the chat's newest 200 (the timeline
// shows those first).
import { chromium } from "playwright-core";
import { createInterface } from "node:readline";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { branchAndFamily } from "./browser-branch.mjs";

const URL_ = process.env.INSPECTOR_URL;
const TOKEN = process.env.RECAPD_TOKEN ?? "";
const CHROMIUM = process.env.CHROMIUM || "/usr/bin/chromium";
const SHOTS = process.env.SCREENSHOT_DIR || ".";
const WAIT = 15_000; // one wait in the page
const ANSWER_WAIT = 120_000; // the caller's answer to a STEP
const WHOLE_RUN = 300_000;

const EDITED_TEXT = "Edited in the inspector: the letter is under the floorboard.";
const SCENE_NAME = "The rider at the gate";
const SCENE_TEXTS = ["Dawn: a rider in black waits at the gate.", "Dawn: the rider asks for the letter by name."];
const MEMORY_TEXT = "Bob names the inn, by hand this time.";

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
  for (const key of ["chatId", "includedMessageId", "excludedMessageId", "hiddenMessageId", "injectionText", "sceneMessageId", "editMessageId", "editError", "branchMessageId"]) {
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
  // No chat open yet: the page says how to pick one and what the addresses are.
  await waitText('[data-testid="no-chat"]', "Pick a chat in the list", "the page with no chat open");
  await waitText('[data-testid="no-chat"]', "#/chat/<chat id>/<view>", "the addresses on the page with no chat open");
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

  // ---- 8. a scene in the timeline: marked, renamed, its recap written
  // twice, then back to the first version
  await openTab("Timeline");
  await sceneActions(seed.sceneMessageId, msg);

  // ---- 9. a recap edited by hand: edited, its error gone
  await handEdit(seed.editMessageId, seed.editError, msg);

  // ---- 10. a running-recap version deleted, once confirmed
  await openTab("Running recap");
  await deleteVersion();

  // ---- 11. jobs started from the page, shown with the job the RPC returned
  await startJobs(seed.sceneMessageId);

  // ---- 12. "Branch here", and the family of the branch and of its parent
  await branchAndFamily({ page, step, waitText, shot, msg, openTab, wait: WAIT }, seed.chatId, seed.branchMessageId);

  // ---- 13. profiles and the chat's group, in the settings view
  await profilesAndGroup();

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
 * Marks a message as a scene break, renames the scene, writes its scene
 * recap twice (two versions) and goes back to the first; GetMessageData
 * must agree.
 * @param {string} id
 * @param {(id: string) => string} msg
 */
async function sceneActions(id, msg) {
  const button = (name) => page.getByRole("button", { name, exact: true });
  const scene = `[data-testid="scene-break"][data-message-id=${q(id)}]`;
  await page.waitForSelector(msg(id), { timeout: WAIT });
  if ((await page.locator(scene).count()) !== 0) throw new Error(`message ${id} is already a scene break`);
  await button(`Mark scene break at message ${id}`).click();
  await page.waitForSelector(`${scene}[data-visible="yes"]`, { timeout: WAIT });
  await waitText(`${scene} [data-testid="scene-recap"]`, "No scene recap yet", "the new scene break");

  await button(`Rename the scene of message ${id}`).click();
  await page.getByLabel(`Name of the scene ending at message ${id}`, { exact: true }).fill(SCENE_NAME);
  await page.getByRole("button", { name: "Save name" }).click();
  await waitText(`${scene} [data-testid="scene-name"]`, SCENE_NAME, "the renamed scene");

  for (const [i, text] of SCENE_TEXTS.entries()) {
    await page.getByRole("button", { name: new RegExp(`^(Edit|Write) the scene recap of message ${id}$`) }).click();
    await page.getByLabel(`Scene recap of message ${id}`, { exact: true }).fill(text);
    await page.getByRole("button", { name: "Save as a new version" }).click();
    await waitText(`${scene} [data-testid="scene-recap"]`, text, `the scene recap's edit ${i + 1}`);
    await waitText(`${scene} [data-testid="scene-version"]`, `Version ${i + 1} of ${i + 1}`, `the versions after edit ${i + 1}`);
  }
  if (!(await button(`Next version of the scene recap of message ${id}`).isDisabled())) {
    throw new Error("the newest scene-recap version can go to a next one");
  }
  // By keyboard; the focus stays on that message's items after the page
  // draws the change.
  await button(`Previous version of the scene recap of message ${id}`).focus();
  await page.keyboard.press("Enter");
  await waitText(`${scene} [data-testid="scene-version"]`, "Version 1 of 2", "the first version, selected");
  try {
    await page.waitForFunction(
      (mid) => document.activeElement?.closest("[data-message-id]")?.getAttribute("data-message-id") === mid,
      id,
      { timeout: WAIT },
    );
  } catch {
    const at = await page.evaluate(() => document.activeElement?.outerHTML.slice(0, 200));
    throw new Error(`after the version change the focus left message ${id}: ${at}`);
  }
  await waitText(`${scene} [data-testid="scene-recap"]`, SCENE_TEXTS[0], "the first version's text");
  // The list may be drawn anew meanwhile: the scroll is for the screenshot only.
  await page.locator(scene).scrollIntoViewIfNeeded({ timeout: 2000 }).catch(() => {});
  await shot("scene-versions.png");

  const data = await step("data", id);
  const want = {
    sceneBreak: true,
    sceneBreakName: SCENE_NAME,
    sceneRecapMemory: SCENE_TEXTS[0],
    sceneRecapVersions: SCENE_TEXTS,
    // Unset reads as 0.
    sceneRecapCurrentIndex: 0,
  };
  data.sceneRecapCurrentIndex ??= 0;
  for (const [key, value] of Object.entries(want)) {
    if (JSON.stringify(data[key]) !== JSON.stringify(value)) {
      throw new Error(`GetMessageData(${id}).${key} is ${JSON.stringify(data[key])}, the page set ${JSON.stringify(value)}`);
    }
  }
  if (data.sceneBreakVisible === false) throw new Error(`GetMessageData(${id}): the scene break is not visible`);

  // Unmarked, the break is kept hidden with its name and recap; marked
  // again, it is back as it was.
  await button(`Unmark scene break at message ${id}`).click();
  await page.waitForSelector(`${scene}[data-visible="no"]`, { timeout: WAIT });
  await waitText(scene, SCENE_NAME, "the unmarked break's name");
  const hidden = await step("data", id);
  if (hidden.sceneBreak !== true || hidden.sceneBreakVisible !== false || hidden.sceneRecapMemory !== SCENE_TEXTS[0]) {
    throw new Error(`GetMessageData(${id}) after unmarking: ${JSON.stringify(hidden)}`);
  }
  await button(`Mark scene break again at message ${id}`).click();
  await page.waitForSelector(`${scene}[data-visible="yes"]`, { timeout: WAIT });
  await waitText(`${scene} [data-testid="scene-version"]`, "Version 1 of 2", "the break marked again");
}

/**
 * Edits a recap that has an error: the page sends a hand edit, after which
 * the recap is marked edited and the error is gone, here and in the API.
 * @param {string} id
 * @param {string} error the seeded error
 * @param {(id: string) => string} msg
 */
async function handEdit(id, error, msg) {
  await waitText(`${msg(id)} .recap-error`, error, "the seeded recap error");
  await page.getByRole("button", { name: `Edit the recap of message ${id}`, exact: true }).click();
  await page.getByLabel(`Recap of message ${id}`, { exact: true }).fill(MEMORY_TEXT);
  await page.getByRole("button", { name: "Save recap" }).click();
  await waitText(`${msg(id)} .recap-text`, MEMORY_TEXT, "the recap edited by hand");
  await waitText(`${msg(id)} .msg-recap`, "edited by hand", "the hand edit's mark");
  await page.waitForFunction((sel) => document.querySelector(sel) === null, `${msg(id)} .recap-error`, { timeout: WAIT });
  const data = await step("data", id);
  if (data.memory !== MEMORY_TEXT || data.edited !== true || data.error !== null) {
    throw new Error(`GetMessageData(${id}) after the hand edit: memory ${JSON.stringify(data.memory)}, edited ${data.edited}, error ${JSON.stringify(data.error)}`);
  }
}

/**
 * Deletes a running-recap version that is not current: refused once at
 * the confirmation (nothing deleted), then confirmed.
 */
async function deleteVersion() {
  const before = await step("recaps");
  const victim = before.versions.find((v) => v !== before.currentVersion);
  if (victim === undefined) throw new Error(`no version to delete besides the current one: ${JSON.stringify(before)}`);
  const row = `[data-testid="recap-versions"] tr[data-version=${q(victim)}]`;
  await page.waitForSelector(row, { timeout: WAIT });
  const del = page.getByRole("button", { name: `Delete version ${victim}`, exact: true });

  /** @type {string[]} */
  const asked = [];
  const refuse = (dialog) => {
    asked.push(dialog.message());
    dialog.dismiss();
  };
  page.once("dialog", refuse);
  await del.click();
  await page.waitForFunction(() => !document.querySelector('[data-testid="recap-versions"] button[aria-busy]'), null, { timeout: WAIT });
  if (asked.length !== 1 || !asked[0].includes(`Delete running-recap version ${victim}?`)) {
    throw new Error(`deleting asked ${JSON.stringify(asked)}`);
  }
  const kept = await step("recaps");
  if (!kept.versions.includes(victim)) throw new Error(`version ${victim} was deleted though the confirmation was refused`);

  page.once("dialog", (dialog) => dialog.accept());
  await del.click();
  await page.waitForFunction((sel) => document.querySelector(sel) === null, row, { timeout: WAIT });
  const after = await step("recaps");
  if (after.versions.includes(victim)) throw new Error(`version ${victim} is still listed by ListRunningRecaps: ${JSON.stringify(after)}`);
  if (after.currentVersion !== before.currentVersion) {
    throw new Error(`deleting version ${victim} changed the current version from ${before.currentVersion} to ${after.currentVersion}`);
  }
  await shot("running-recap-deleted.png");
}

/**
 * Starts the running recap's regeneration, a detection and a scene recap
 * from the page: each shows the job the RPC returned, and the Jobs view
 * opens at the regeneration.
 * @param {string} sceneId a visible scene break
 */
async function startJobs(sceneId) {
  const started = async (button, where) => {
    await button.click();
    const id = page.locator(`${where} [data-testid="started-job-id"]`).first();
    await id.waitFor({ timeout: WAIT });
    const jobId = (await id.textContent())?.trim();
    if (!jobId) throw new Error(`${where}: no job shown`);
    return jobId;
  };
  const recapPanel = '[role="tabpanel"]:not([hidden])';
  const regen = await started(page.getByRole("button", { name: /^Regenerate from all scenes/ }), recapPanel);
  await waitText(recapPanel, "REGENERATE_RUNNING_RECAP", "the regeneration's job kind");
  await page.getByRole("button", { name: `Follow it in Jobs: job ${regen}`, exact: true }).click();
  await page.waitForSelector(`[data-testid="job"][data-job-id=${q(regen)}].job-target`, { timeout: WAIT });

  await openTab("Timeline");
  const detect = await started(page.getByRole("button", { name: /^Detect scene breaks/ }), recapPanel);
  const scene = `[data-testid="scene-break"][data-message-id=${q(sceneId)}]`;
  const recap = await started(page.getByRole("button", { name: `Generate scene recap of message ${sceneId}'s scene (a job)`, exact: true }), scene);
  log(`jobs started from the page: regeneration ${regen}, detection ${detect}, scene recap ${recap}`);
  if (new Set([regen, detect, recap]).size !== 3) throw new Error(`the three jobs are not distinct: ${regen}, ${detect}, ${recap}`);
  await shot("jobs-started.png");
}

/**
 * In the settings view: creates a profile, makes it the chat's own,
 * disables a member of the chat's group and binds the profile to the
 * group; the API must agree. Last deletes the profile, once confirmed.
 */
async function profilesAndGroup() {
  const PROFILE = "Quiet nights";
  const { groupId, members } = await step("group");
  if (!groupId || !Array.isArray(members) || members.length < 2) throw new Error(`STEP group: ${JSON.stringify({ groupId, members })}`);
  await openTab("Settings");
  await page.getByLabel("Profile name").fill(PROFILE);
  await page.getByLabel("Profile settings (JSON)").fill('{"depth": 3}');
  await page.getByRole("button", { name: "Save the profile", exact: true }).click();
  const card = `[data-testid="profile"][data-profile=${q(PROFILE)}]`;
  await waitText(card, '"depth": 3', "the new profile in the list");

  await page.getByLabel("Profile for this chat").selectOption(PROFILE);
  await page.getByRole("button", { name: "Set this chat's profile", exact: true }).click();
  await waitText('[data-testid="profile-in-use"]', `In use: ${PROFILE}.`, "the chat's profile in use");
  const chatProfile = await step("chat-profile");
  if (chatProfile.profile !== PROFILE) throw new Error(`GetSettings says the chat's profile is ${JSON.stringify(chatProfile.profile)}`);

  const member = members[1];
  const box = page.getByLabel(`Disable ${member}`, { exact: true });
  if (await box.isChecked()) throw new Error(`${member} is shown disabled before any change`);
  await box.check();
  await page.getByRole("button", { name: "Save disabled members", exact: true }).click();
  await page.waitForSelector(`[data-testid="group-members"] input[data-member=${q(member)}]:checked`, { timeout: WAIT });
  const group = await step("group-state");
  if (JSON.stringify(group.disabledMembers) !== JSON.stringify([member])) {
    throw new Error(`GetGroup's disabled members are ${JSON.stringify(group.disabledMembers)}, not [${member}]`);
  }
  await page.getByLabel("Profile bound to this group").selectOption(PROFILE);
  await page.getByRole("button", { name: "Bind to the group", exact: true }).click();
  await page.waitForFunction(
    (name) => document.querySelector('[data-testid="group-profile"]')?.value === name && !document.querySelector("button[aria-busy]"),
    PROFILE,
    { timeout: WAIT },
  );
  const bound = await step("group-state");
  if (bound.profile !== PROFILE) throw new Error(`GetGroup's bound profile is ${JSON.stringify(bound.profile)}, not ${PROFILE}`);
  await shot("settings-profiles.png");

  page.once("dialog", (d) => d.accept());
  await page.getByRole("button", { name: `Delete the profile ${PROFILE}`, exact: true }).click();
  await page.waitForSelector(card, { state: "detached", timeout: WAIT });
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
