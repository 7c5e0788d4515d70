// A chat's messages with their inclusion, read through the public API:
// GetInclusion gives every message's id, inclusion and hidden state in chat
// order; ExportChat gives the chat as a SillyTavern JSONL file (an optional
// header line, then one line per message in the same order) with each
// message's speaker, text and recap data (`extra.auto_recap_memory`).

/**
 * @typedef {object} RecapData ST-Auto-Recap's per-message data, as the file
 *   names it (snake_case).
 * @property {string} [memory]
 * @property {string} [prefill]
 * @property {boolean} [exclude]
 * @property {string} [error]
 * @property {boolean} [edited]
 * @property {boolean} [scene_break]
 * @property {boolean} [scene_break_visible]
 * @property {string} [scene_break_name]
 * @property {string} [scene_recap_memory]
 * @property {string[]} [scene_recap_versions] every scene recap the scene
 *   had, oldest first (none listed for one stored before versions)
 * @property {number} [scene_recap_current_index] the shown one of them
 *
 * @typedef {object} TimelineMessage
 * @property {number} index 0-based position in the chat
 * @property {string} id
 * @property {string} name
 * @property {string} text the current swipe's text
 * @property {boolean} isUser
 * @property {boolean} isNarrator
 * @property {number} swipes
 * @property {number} swipeId
 * @property {boolean} included
 * @property {string} reason GetInclusion's excluded_reason
 * @property {"" | "hand" | "auto"} hidden
 * @property {number} tokenCount
 * @property {boolean} sceneBreak
 * @property {RecapData} data
 */

/**
 * @param {import("./api.js").Api} api
 * @param {string} chatId
 * @param {number} autoHiddenCount the latest injection's auto_hidden_count
 * @returns {Promise<TimelineMessage[]>}
 */
export async function loadChatFile(api, chatId, autoHiddenCount) {
  // The two reads are not one snapshot: when the chat changed between them
  // and they do not line up, read both again (twice at most).
  for (let attempt = 0; ; attempt++) {
    const [exported, inclusion] = await Promise.all([
      api.clients.memory.exportChat({ chatId }),
      api.clients.injection.getInclusion({ chatId }),
    ]);
    const lines = parseLines(exported.jsonl);
    const merged = merge(lines, inclusion.messages, autoHiddenCount);
    if (merged || attempt >= 2) return merged ?? fallback(inclusion.messages, autoHiddenCount);
  }
}

/** @param {Uint8Array} bytes */
function parseLines(bytes) {
  const text = new TextDecoder().decode(bytes);
  /** @type {any[]} */
  const out = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    let value;
    try {
      value = JSON.parse(line);
    } catch {
      value = null;
    }
    // A line that is not an object still counts as a message line.
    out.push(value && typeof value === "object" && !Array.isArray(value) ? value : { mes: "" });
  }
  return out;
}

/**
 * Lines up the file's message lines with GetInclusion's messages; null when
 * they do not line up.
 * @param {any[]} lines
 * @param {any[]} inclusion
 * @param {number} autoHiddenCount
 * @returns {TimelineMessage[] | null}
 */
function merge(lines, inclusion, autoHiddenCount) {
  // The header, when there is one, is the first line, and the only line
  // without `mes` (recapd reads a file so; SillyTavern writes it so).
  const body = lines.length > 0 && !("mes" in lines[0]) ? lines.slice(1) : lines;
  if (body.length !== inclusion.length) return null;
  /** @type {TimelineMessage[]} */
  const out = [];
  for (let i = 0; i < inclusion.length; i++) {
    const line = body[i] ?? {};
    const inc = inclusion[i];
    const extra = line.extra && typeof line.extra === "object" ? line.extra : {};
    // An export writes a message's id in extra.recapd_message_id unless it
    // is m<index>.
    const fileId = typeof extra.recapd_message_id === "string" ? extra.recapd_message_id : `m${i}`;
    if (fileId !== inc.messageId) return null;
    out.push(message(i, inc, line, extra, autoHiddenCount));
  }
  return out;
}

/**
 * @param {number} i
 * @param {any} inc
 * @param {any} line
 * @param {any} extra
 * @param {number} autoHiddenCount
 * @returns {TimelineMessage}
 */
function message(i, inc, line, extra, autoHiddenCount) {
  const data = extra.auto_recap_memory && typeof extra.auto_recap_memory === "object" ? extra.auto_recap_memory : {};
  const swipes = Array.isArray(line.swipes) ? line.swipes.length : 1;
  return {
    index: i,
    id: inc.messageId,
    name: typeof line.name === "string" ? line.name : "",
    text: typeof line.mes === "string" ? line.mes : "",
    isUser: line.is_user === true,
    isNarrator: extra.type === "narrator",
    swipes,
    swipeId: typeof line.swipe_id === "number" ? line.swipe_id : 0,
    included: inc.included,
    reason: inc.excludedReason,
    hidden: inc.hidden ? (i < autoHiddenCount ? "auto" : "hand") : "",
    tokenCount: inc.tokenCount,
    sceneBreak: data.scene_break === true,
    data: {
      memory: str(data.memory),
      prefill: str(data.prefill),
      exclude: data.exclude === true,
      error: str(data.error),
      edited: data.edited === true,
      scene_break: data.scene_break === true,
      scene_break_visible: data.scene_break_visible === false ? false : undefined,
      scene_break_name: str(data.scene_break_name),
      scene_recap_memory: str(data.scene_recap_memory),
      scene_recap_versions: Array.isArray(data.scene_recap_versions)
        ? data.scene_recap_versions.map((/** @type {unknown} */ v) => (typeof v === "string" ? v : ""))
        : [],
      scene_recap_current_index: Number.isInteger(data.scene_recap_current_index) ? data.scene_recap_current_index : undefined,
    },
  };
}

/** @param {unknown} v */
function str(v) {
  return typeof v === "string" ? v : undefined;
}

/**
 * When the file could not be lined up: the inclusion alone, without texts.
 * @param {any[]} inclusion
 * @param {number} autoHiddenCount
 */
function fallback(inclusion, autoHiddenCount) {
  return inclusion.map((inc, i) => message(i, inc, { mes: "(text unavailable: the chat kept changing while it was read)" }, {}, autoHiddenCount));
}
