// The page's addresses: #/chat/<id>/<view> names the open chat and view, so
// a reload, the back button and a shared link keep the place.

/**
 * @typedef {{ chatId: string | null, tab: string | null }} Route
 */

/**
 * The route of the current address; `tab` is null when the address names
 * none or one not in `tabs`.
 * @param {string[]} tabs the views' ids
 * @returns {Route}
 */
export function parseRoute(tabs) {
  const parts = location.hash.replace(/^#\/?/, "").split("/");
  if (parts[0] !== "chat" || parts.length < 2 || !parts[1]) return { chatId: null, tab: null };
  let chatId;
  try {
    chatId = decodeURIComponent(parts[1]);
  } catch {
    return { chatId: null, tab: null };
  }
  return { chatId, tab: tabs.includes(parts[2]) ? parts[2] : null };
}

/**
 * The address of a chat's view.
 * @param {string} chatId
 * @param {string} [tab]
 */
export function chatHref(chatId, tab) {
  return `#/chat/${encodeURIComponent(chatId)}${tab ? `/${tab}` : ""}`;
}
