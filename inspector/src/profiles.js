// The rules of the profiles and groups panels that need no page: which
// group a chat is in, what a JSON patch box holds, the disabled members a
// set of checkboxes means.

/**
 * The group a chat belongs to: the one its summary names, else the first
 * whose `chats` list it; undefined for none.
 * @template {{ id: string, chats: string[] }} G
 * @param {G[]} groups
 * @param {string} chatId
 * @param {string} [summaryGroupId] ChatSummary.group_id, when known
 * @returns {G | undefined}
 */
export function groupOfChat(groups, chatId, summaryGroupId) {
  if (summaryGroupId) {
    const named = groups.find((g) => g.id === summaryGroupId);
    if (named) return named;
  }
  return groups.find((g) => g.chats.includes(chatId));
}

/**
 * Reads a profile's JSON patch box: an object of Settings fields (proto
 * JSON names), or empty for none. Answers the object, or a sentence
 * saying what is wrong.
 * @param {string} text
 * @returns {{ ok: true, value: Record<string, unknown> } | { ok: false, error: string }}
 */
export function parsePatch(text) {
  const trimmed = text.trim();
  if (trimmed === "") return { ok: true, value: {} };
  let value;
  try {
    value = JSON.parse(trimmed);
  } catch (err) {
    return { ok: false, error: `the settings are not JSON (${err instanceof Error ? err.message : String(err)})` };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return { ok: false, error: "the settings must be a JSON object of setting names and values" };
  }
  if ("profile" in value) return { ok: false, error: "a profile cannot set `profile`" };
  return { ok: true, value };
}

/**
 * The disabled members to send: the members whose box is ticked, in the
 * group's order, then any disabled key that is not a member (kept as it
 * was, since the page shows no box for it).
 * @param {string[]} members
 * @param {string[]} previouslyDisabled
 * @param {(member: string) => boolean} ticked
 */
export function disabledMembers(members, previouslyDisabled, ticked) {
  const memberSet = new Set(members);
  const out = members.filter((m) => ticked(m));
  for (const key of previouslyDisabled) if (!memberSet.has(key) && !out.includes(key)) out.push(key);
  return out;
}
