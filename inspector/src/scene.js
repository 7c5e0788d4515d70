// The scene actions' rules, apart from the page: which versions a scene
// recap has and which one is shown, what the scene-break button of a
// message does, and a MessageData answer in the shape the timeline keeps
// (the chat file's snake_case names).

/**
 * @typedef {object} SceneVersions
 * @property {string[]} versions every scene recap the scene had, oldest first
 * @property {number} index the shown one (0-based); 0 when there is none
 * @property {string} text the shown scene recap ("" for none)
 * @property {string} label "Version 2 of 3"; "" without versions
 * @property {number | null} prev the index "Previous" selects, or null
 * @property {number | null} next the index "Next" selects, or null
 */

/**
 * The scene-recap versions of a message's data. A scene recap stored
 * before versions existed has none listed: it is its own one version
 * (index 0), as recapd counts it. An index outside the list (a file
 * written by hand) shows the last version and moves from there.
 * @param {import("./chat-file.js").RecapData} data
 * @returns {SceneVersions}
 */
export function sceneVersions(data) {
  const listed = Array.isArray(data.scene_recap_versions)
    ? data.scene_recap_versions.map((v) => (typeof v === "string" ? v : ""))
    : [];
  const current = typeof data.scene_recap_memory === "string" ? data.scene_recap_memory : "";
  const versions = listed.length > 0 ? listed : current ? [current] : [];
  if (versions.length === 0) return { versions, index: 0, text: "", label: "", prev: null, next: null };
  const raw = data.scene_recap_current_index;
  const wanted = typeof raw === "number" && Number.isInteger(raw) && raw >= 0 ? raw : 0;
  const index = Math.min(wanted, versions.length - 1);
  return {
    versions,
    index,
    // The current text is scene_recap_memory when set: recapd keeps it
    // equal to the current version.
    text: current || versions[index],
    label: `Version ${index + 1} of ${versions.length}`,
    prev: index > 0 ? index - 1 : null,
    next: index < versions.length - 1 ? index + 1 : null,
  };
}

/**
 * @typedef {object} BreakAction
 * @property {"mark" | "unmark"} action
 * @property {string} label the button's text
 * @property {{ sceneBreak?: boolean, sceneBreakVisible: boolean }} patch
 *   the SetMessageData fields to send
 * @property {string} done what the page announces afterwards
 */

/**
 * What the scene-break button of a message does, as the extension's does:
 * a message that is no break becomes a visible one; a visible break is
 * unmarked by hiding it (its name and scene recap stay, and marking it
 * again brings them back); a hidden break is shown again.
 * @param {import("./chat-file.js").RecapData} data
 * @returns {BreakAction}
 */
export function breakAction(data) {
  if (data.scene_break !== true) {
    return {
      action: "mark",
      label: "Mark scene break",
      patch: { sceneBreak: true, sceneBreakVisible: true },
      done: "marked as a scene break",
    };
  }
  if (data.scene_break_visible === false) {
    return {
      action: "mark",
      label: "Mark scene break again",
      patch: { sceneBreakVisible: true },
      done: "marked as a scene break again",
    };
  }
  return {
    action: "unmark",
    label: "Unmark scene break",
    patch: { sceneBreakVisible: false },
    done: "no longer a scene break (its name and scene recap are kept)",
  };
}

/**
 * Whether a message's break counts: set and not hidden.
 * @param {import("./chat-file.js").RecapData} data
 */
export function isVisibleBreak(data) {
  return data.scene_break === true && data.scene_break_visible !== false;
}

/**
 * A MessageData answer (protobuf-es names, unset fields undefined) in the
 * shape the timeline keeps.
 * @param {any} d
 * @returns {import("./chat-file.js").RecapData}
 */
export function fromMessageData(d) {
  const str = (/** @type {unknown} */ v) => (typeof v === "string" ? v : undefined);
  return {
    memory: str(d.memory),
    prefill: str(d.prefill),
    exclude: d.exclude === true,
    error: str(d.error),
    edited: d.edited === true,
    scene_break: d.sceneBreak === true,
    scene_break_visible: d.sceneBreakVisible === false ? false : undefined,
    scene_break_name: str(d.sceneBreakName),
    scene_recap_memory: str(d.sceneRecapMemory),
    scene_recap_versions: Array.isArray(d.sceneRecapVersions) ? d.sceneRecapVersions.map(String) : [],
    scene_recap_current_index: typeof d.sceneRecapCurrentIndex === "number" ? d.sceneRecapCurrentIndex : undefined,
  };
}
