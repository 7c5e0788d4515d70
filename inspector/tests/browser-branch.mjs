// The browser test's branch step (browser.mjs runs it): "Branch here" on a
// message of the open chat, refused once (the chat's own id: ALREADY_EXISTS,
// shown as every error), then made with the id the page offers; the new
// chat is marked in the chat list, opens with the messages up to that one
// and names its parent in its header, and the parent lists it as a branch.
// The API (STEP branch) must agree with what the page showed.

/**
 * @typedef {object} BranchRun what browser.mjs lends this step
 * @property {import("playwright-core").Page} page
 * @property {(name: string, extra?: string) => Promise<any>} step asks the caller
 * @property {(selector: string, text: string, what: string) => Promise<void>} waitText
 * @property {(file: string) => Promise<void>} shot
 * @property {(id: string) => string} msg the selector of a message of the timeline
 * @property {(tab: string) => Promise<void>} openTab
 * @property {number} wait one wait in the page, in ms
 */

/** A CSS attribute value in double quotes. */
const q = (s) => JSON.stringify(String(s));

/**
 * @param {BranchRun} run
 * @param {string} chatId the open chat
 * @param {string} messageId the message to branch at
 */
export async function branchAndFamily({ page, step, waitText, shot, msg, openTab, wait }, chatId, messageId) {
  await openTab("Timeline");
  await page.waitForSelector(msg(messageId), { timeout: wait });
  // The chat's messages up to and including that one: what the branch holds.
  const ids = await page.locator('[data-testid="message"]').evaluateAll((els) => els.map((e) => e.getAttribute("data-message-id")));
  const expected = ids.indexOf(messageId) + 1;

  await page.getByRole("button", { name: `Branch here: a new chat ending at message ${messageId}`, exact: true }).click();
  const input = page.getByLabel(`New chat id for the branch at message ${messageId}`, { exact: true });
  const branchId = `${chatId}-branch-${messageId}`;
  const offered = await input.inputValue();
  if (offered !== branchId) throw new Error(`"Branch here" offers the id ${JSON.stringify(offered)}, not ${JSON.stringify(branchId)}`);
  const create = page.getByRole("button", { name: "Create branch", exact: true });

  // Refused by recapd: its error is shown, the form stays for another id.
  await input.fill(chatId);
  await create.click();
  const refusal = page.locator('[data-testid="error-notice"]').filter({ hasText: "ALREADY_EXISTS" });
  await waitText('[data-testid="error-notice"]', "ALREADY_EXISTS", "branching onto the chat's own id");
  await refusal.getByRole("button", { name: "Dismiss" }).click();
  await input.fill(branchId);
  await create.click();

  const result = `${msg(messageId)} [data-testid="branch-result"][data-chat-id=${q(branchId)}]`;
  await page.waitForSelector(result, { timeout: wait });
  await waitText(result, `${expected} message${expected === 1 ? "" : "s"},`, "the branch's message count");
  const api = await step("branch", branchId);
  const want = { chatId: branchId, messageCount: expected, parentChatId: chatId, parentMessageId: messageId };
  for (const [key, value] of Object.entries(want)) {
    if (api[key] !== value) throw new Error(`ListChats' summary of ${branchId}: ${key} is ${JSON.stringify(api[key])}, wanted ${JSON.stringify(value)}`);
  }
  const versions = `${api.runningRecapCount} running-recap version${api.runningRecapCount === 1 ? "" : "s"}`;
  await waitText(result, versions, "the branch's running-recap versions, as ListRunningRecaps counts them");
  await waitText(`a.chat-link[data-chat-id=${q(branchId)}] [data-testid="chat-branch-note"]`, `branch of ${chatId}`, "the branch in the chat list");
  await shot("branch-made.png");

  // The branch opens with its messages, and names its parent.
  await page.getByRole("link", { name: `Open the branch ${branchId}`, exact: true }).click();
  await page.getByRole("heading", { name: `Chat ${branchId}`, exact: true }).waitFor({ timeout: wait });
  try {
    await page.waitForFunction((n) => document.querySelectorAll('[data-testid="message"]').length === n, expected, { timeout: wait });
  } catch {
    const shown = await page.locator('[data-testid="message"]').count();
    throw new Error(`the branch's timeline shows ${shown} messages, not ${expected}`);
  }
  const last = await page.locator('[data-testid="message"]').last().getAttribute("data-message-id");
  if (last !== messageId) throw new Error(`the branch's last message is ${last}, not ${messageId}`);
  const parentLink = `[data-testid="chat-parent"] a.family-link[data-chat-id=${q(chatId)}]`;
  await page.waitForSelector(parentLink, { timeout: wait });
  await waitText('[data-testid="chat-parent-message"]', messageId, "the message the branch was made at");
  await shot("branch-family.png");

  // Its parent, through the family's link, lists it among its branches.
  await page.locator(parentLink).click();
  await page.getByRole("heading", { name: `Chat ${chatId}`, exact: true }).waitFor({ timeout: wait });
  await page.waitForSelector(`[data-testid="chat-branches"] a.family-link[data-chat-id=${q(branchId)}]`, { timeout: wait });
  await waitText('[data-testid="chat-branches"]', `${branchId} at message ${messageId}`, "the parent's branches");
  if ((await page.locator('[data-testid="chat-parent"]').count()) !== 0) throw new Error(`${chatId} is shown as a branch`);
  await shot("chat-family.png");
}
