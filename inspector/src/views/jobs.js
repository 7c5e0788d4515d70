// Jobs, live: RecapService.ListJobs for what exists, RecapService.WatchJobs
// (server stream over gRPC-Web) for every change after, for this chat or
// every chat of the tenant; with their errors and results, and RetryJob /
// CancelJob. The other views' job buttons open it at the job they started.
import { h, replace, field, badge, timeEl, messageLink } from "../dom.js";
import { describeError, followStream } from "../api.js";
import { notify, showError } from "../notices.js";
import { chatHref } from "../routes.js";

const STATE_KIND = { PENDING: "info", RUNNING: "info", SUCCEEDED: "ok", FAILED: "bad", CANCELLED: "muted", DISCARDED: "muted" };
const MAX_SHOWN = 300;

/**
 * @param {HTMLElement} panel
 * @param {import("./chat.js").ViewContext} ctx
 * @returns {import("./chat.js").View}
 */
export function mountJobs(panel, ctx) {
  const { api, chatId } = ctx;
  /** @type {Map<string, any>} */
  let jobs = new Map();
  /** @type {AbortController | null} */
  let stream = null;
  let listSeq = 0;
  /** @type {string | null} the job last asked for (ctx.showJob), marked */
  let target = null;
  /** @type {string | null} that job, until it is listed and shown */
  let pendingReveal = null;

  const scopeSel = /** @type {HTMLSelectElement} */ (
    h("select", { "data-testid": "jobs-scope" }, h("option", { value: "chat" }, "This chat"), h("option", { value: "all" }, "Every chat"))
  );
  const stateSel = /** @type {HTMLSelectElement} */ (
    h(
      "select",
      null,
      h("option", { value: "" }, "Any state"),
      h("option", { value: "active" }, "Pending or running"),
      h("option", { value: "FAILED" }, "Failed"),
      h("option", { value: "SUCCEEDED" }, "Succeeded"),
      h("option", { value: "CANCELLED" }, "Cancelled"),
      h("option", { value: "DISCARDED" }, "Discarded"),
    )
  );
  const streamState = h("span", { "data-testid": "jobs-stream-state" });
  const status = h("p", { class: "muted small" });
  const list = h("ul", { class: "jobs", "data-testid": "jobs" });
  replace(
    panel,
    h("div", { class: "panel-head" }, h("h3", null, "Jobs"), streamState),
    h("p", { class: "muted small" }, "Recaps and lore recapd writes through its LLM, as jobs. Followed live (WatchJobs)."),
    h("div", { class: "inline-fields" }, field("Chats", scopeSel), field("State", stateSel)),
    status,
    list,
  );
  scopeSel.addEventListener("change", () => follow());
  stateSel.addEventListener("change", () => render());

  const scopeChat = () => (scopeSel.value === "chat" ? chatId : "");
  /** @param {any} j */
  const stateName = (j) => api.enumName("recap.v1.JobState", j.state);

  /** @param {any} job */
  function accept(job) {
    const scope = scopeChat();
    if (scope && job.chatId !== scope) return false;
    const old = jobs.get(job.jobId);
    if (old) {
      const was = tsMs(old.updatedAt);
      const now = tsMs(job.updatedAt);
      if (was > now) return false;
      // Same millisecond: a finished job does not go back to waiting.
      if (was === now && isTerminal(stateName(old)) && !isTerminal(stateName(job))) return false;
    }
    jobs.set(job.jobId, job);
    return !old || old.state !== job.state;
  }

  async function list_() {
    const seq = ++listSeq;
    try {
      const res = await api.clients.recap.listJobs({ chatId: scopeChat(), pageSize: 200 });
      if (seq !== listSeq) return;
      for (const job of res.jobs) accept(job);
      status.textContent = res.nextPageToken ? "Showing the newest 200 jobs and every change since." : "";
      render();
    } catch (err) {
      if (seq !== listSeq) return;
      status.textContent = `Could not list the jobs: ${describeError(err)}`;
    }
  }

  function follow() {
    stream?.abort();
    const controller = new AbortController();
    stream = controller;
    jobs = new Map();
    render();
    const scope = scopeChat();
    followStream((options) => api.clients.recap.watchJobs({ chatIds: scope ? [scope] : [] }, options), {
      signal: controller.signal,
      onOpen: () => list_(),
      onMessage: (job) => {
        if (accept(job)) notify(`Job ${job.jobId} (${api.enumName("recap.v1.JobKind", job.kind)}): ${stateName(job)}.`);
        render();
      },
      onState: (s, err) => {
        if (controller.signal.aborted) return;
        if (s === "live") replace(streamState, badge("live", "ok", "Following every change (WatchJobs)"));
        else if (s === "failed") replace(streamState, badge("not live", "bad", describeError(err)));
        else replace(streamState, badge(`${s}…`, "info", err ? describeError(err) : undefined));
      },
    });
  }

  /** @param {any} j */
  function matches(j) {
    const s = stateName(j);
    if (!stateSel.value) return true;
    if (stateSel.value === "active") return s === "PENDING" || s === "RUNNING";
    return s === stateSel.value;
  }

  function render() {
    const all = [...jobs.values()].sort((a, b) => tsMs(b.createdAt) - tsMs(a.createdAt) || (a.jobId < b.jobId ? 1 : -1));
    const shown = all.filter(matches).slice(0, MAX_SHOWN);
    if (shown.length === 0) {
      replace(list, h("li", { class: "muted" }, jobs.size ? "No job in that state." : "No jobs."));
      return;
    }
    replace(list, shown.map(jobItem));
    if (pendingReveal !== null) showTarget();
  }

  /**
   * Shows a job: any state listed, the job marked, scrolled to and focused
   * (once it is listed, when it is not yet).
   * @param {string} jobId
   */
  function reveal(jobId) {
    target = jobId;
    pendingReveal = jobId;
    if (stateSel.value) stateSel.value = "";
    render();
  }

  function showTarget() {
    const el = [...list.querySelectorAll('[data-testid="job"]')].find((e) => /** @type {HTMLElement} */ (e).dataset.jobId === pendingReveal);
    if (!(el instanceof HTMLElement)) return;
    pendingReveal = null;
    el.tabIndex = -1;
    el.scrollIntoView({ block: "center" });
    el.focus({ preventScroll: true });
  }

  /** @param {any} j */
  function jobItem(j) {
    const s = stateName(j);
    const kind = api.enumName("recap.v1.JobKind", j.kind);
    const actions = [];
    if (s === "PENDING" || s === "RUNNING") {
      actions.push(h("button", { type: "button", class: "small", onclick: () => act("cancel", j), "aria-label": `Cancel job ${j.jobId}` }, "Cancel"));
    }
    if (s === "FAILED" || s === "CANCELLED") {
      actions.push(h("button", { type: "button", class: "small", onclick: () => act("retry", j), "aria-label": `Retry job ${j.jobId}` }, "Retry"));
    }
    return h(
      "li",
      { class: `job${j.jobId === target ? " job-target" : ""}`, "data-testid": "job", dataset: { jobId: j.jobId, state: s } },
      h(
        "div",
        { class: "job-head" },
        badge(s, /** @type {Record<string, string>} */ (STATE_KIND)[s] ?? "muted"),
        h("strong", null, kind),
        j.messageId ? h("span", { class: "small" }, "message ", j.chatId === chatId ? messageLink(ctx.showMessage, j.messageId) : h("code", null, j.messageId)) : null,
        j.subject ? h("span", { class: "small" }, "subject ", h("code", null, j.subject)) : null,
        scopeChat() ? null : h("span", { class: "small" }, "chat ", h("a", { href: chatHref(j.chatId, "jobs") }, h("code", null, j.chatId))),
        h("span", { class: "actions" }, actions),
      ),
      h(
        "p",
        { class: "small muted" },
        h("code", null, j.jobId),
        ` · ${j.attempts} attempt${j.attempts === 1 ? "" : "s"} · created `,
        timeEl(j.createdAt, true),
        " · updated ",
        timeEl(j.updatedAt, true),
      ),
      j.lastError ? h("p", { class: "error-text small" }, `Last error: ${j.lastError}`) : null,
      j.result ? h("p", { class: "small" }, `Result: ${j.result}`) : null,
    );
  }

  /**
   * @param {"cancel" | "retry"} what
   * @param {any} j
   */
  async function act(what, j) {
    try {
      const job = what === "cancel"
        ? await api.clients.recap.cancelJob({ jobId: j.jobId })
        : await api.clients.recap.retryJob({ jobId: j.jobId });
      accept(job);
      notify(`Job ${j.jobId}: ${what === "cancel" ? "cancelled" : "queued again"}.`);
      render();
    } catch (err) {
      showError(`${what === "cancel" ? "Cancelling" : "Retrying"} job ${j.jobId}`, err);
    }
  }

  follow();
  return {
    refresh: () => list_(),
    reveal,
    dispose: () => stream?.abort(),
  };
}

/** @param {string} state */
function isTerminal(state) {
  return state !== "PENDING" && state !== "RUNNING";
}

/** @param {{ seconds: bigint, nanos: number } | undefined} ts */
function tsMs(ts) {
  return ts ? Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6) : 0;
}
