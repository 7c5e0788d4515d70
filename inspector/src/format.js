// Words for what recapd answers in numbers and codes: where an injection
// goes, why a message's recap was left out, where a World Info entry goes.

/**
 * Where an injection or extension prompt goes, in words.
 * @param {import("./api.js").Api} api
 * @param {{ position: number, depth: number, role: number }} p
 */
export function placement(api, p) {
  const position = api.enumName("recap.v1.InjectionPosition", p.position);
  const role = api.enumName("recap.v1.InjectionRole", p.role);
  switch (position) {
    case "NONE":
      return "not inserted (position NONE)";
    case "IN_PROMPT":
      return `in the prompt, after the story string · role ${role}`;
    case "IN_CHAT":
      return `in the chat history at depth ${p.depth} · role ${role}`;
    case "BEFORE_PROMPT":
      return `before the prompt · role ${role}`;
    default:
      return `${position} · depth ${p.depth} · role ${role}`;
  }
}

/** Why GetInclusion left a message's recap out (MessageInclusion.excluded_reason). */
const REASONS = {
  is_auto_recap_system_memory: "the extension's own system-memory message",
  exclude: "excluded by hand (its recap's exclude flag)",
  include_user_messages: "a user message, and include_user_messages is off",
  is_thoughts: "a thought message (always left out)",
  include_system_messages: "hidden, and include_system_messages is off",
  include_narrator_messages: "a narrator message, and include_narrator_messages is off",
  disabled_character_keys: "its character is in disabled_character_keys",
  disabled_group_member: "its character is disabled in this chat's group",
  message_length_threshold: "its text is shorter than message_length_threshold",
  no_memory: "it has no recap to include",
  token_limit: "over the token budget for message recaps",
};

/** @param {string} reason */
export function explainExclusion(reason) {
  return /** @type {Record<string, string>} */ (REASONS)[reason] ?? reason;
}

/** SillyTavern's World Info positions (ActivatedEntry.position). */
const WI_POSITIONS = {
  "-1": "placed nowhere",
  0: "before the character definitions",
  1: "after the character definitions",
  2: "above the author's note",
  3: "below the author's note",
  4: "in the chat at depth",
  5: "above the example messages",
  6: "below the example messages",
  7: "outlet",
};

/**
 * Where an activated World Info entry goes.
 * @param {import("./api.js").Api} api
 * @param {{ position: number, depth: number, role: number, outletName: string }} e
 */
export function wiPlacement(api, e) {
  const base = /** @type {Record<string, string>} */ (WI_POSITIONS)[String(e.position)] ?? `position ${e.position}`;
  if (e.position === 4) {
    const depth = e.depth < 0 ? "(none)" : String(e.depth);
    return `${base} ${depth} · role ${api.enumName("recap.v1.InjectionRole", e.role)}`;
  }
  if (e.position === 7) return `${base} “${e.outletName}”`;
  return base;
}

/**
 * Cuts a long text for a compact view.
 * @param {string} text
 * @param {number} max
 */
export function truncate(text, max) {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A plural count: count(3, "message") = "3 messages".
 * @param {number | bigint} n
 * @param {string} word
 */
export function count(n, word) {
  return `${n} ${word}${n === 1 || n === 1n ? "" : "s"}`;
}
