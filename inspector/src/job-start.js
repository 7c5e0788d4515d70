// Buttons that start a job (DetectSceneBreaks, GenerateSceneRecap,
// RegenerateRunningRecap): the RPC answers with the job it queued, or with
// the one of that work already waiting; the page says which, beside the
// button, with a way to it in the Jobs view. A refusal (FAILED_PRECONDITION
// without an LLM, say) is shown as every other error.
import { h, replace, actionButton, badge } from "./dom.js";
import { notify, showError } from "./notices.js";

/**
 * @param {import("./views/chat.js").ViewContext} ctx
 * @param {object} opts
 * @param {string} opts.label the button's text
 * @param {string} opts.ariaLabel what the button does, in full
 * @param {string} opts.doing what a failure says was being done ("Starting the detection")
 * @param {() => Promise<any>} opts.start calls the RPC; resolves with its Job
 * @param {string} [opts.testid] the button's data-testid
 * @param {string} [opts.className] the button's class
 * @param {any} [opts.started] a job this button started before (shown again
 *   when its view was drawn anew)
 * @param {(job: any) => void} [opts.onStarted] told the job it started
 * @returns {HTMLElement}
 */
export function jobButton(ctx, { label, ariaLabel, doing, start, testid, className, started, onStarted }) {
  const status = h("span", { class: "job-started small", role: "status", "data-testid": "job-started" }, started ? jobLine(ctx, started) : null);
  const button = actionButton(
    label,
    async () => {
      try {
        const job = await start();
        replace(status, jobLine(ctx, job));
        onStarted?.(job);
        notify(`Job ${job.jobId} (${kindName(ctx, job)}): ${stateName(ctx, job)}.`);
      } catch (err) {
        replace(status);
        showError(doing, err);
      }
    },
    { class: className ?? "small", "aria-label": ariaLabel, "data-testid": testid },
  );
  return h("span", { class: "job-start" }, button, status);
}

/**
 * "Job <id>: SCENE_RECAP, PENDING · Follow it in Jobs" (the state as the
 * RPC answered; the Jobs view follows it live).
 * @param {import("./views/chat.js").ViewContext} ctx
 * @param {any} job
 */
function jobLine(ctx, job) {
  return [
    "Job ",
    h("code", { "data-testid": "started-job-id" }, job.jobId),
    `: ${kindName(ctx, job)}, `,
    badge(stateName(ctx, job), "info"),
    " · ",
    h(
      "button",
      {
        type: "button",
        class: "link small",
        "aria-label": `Follow it in Jobs: job ${job.jobId}`,
        onclick: () => ctx.showJob(job.jobId),
      },
      "Follow it in Jobs",
    ),
  ];
}

/**
 * @param {import("./views/chat.js").ViewContext} ctx
 * @param {any} job
 */
function kindName(ctx, job) {
  return ctx.api.enumName("recap.v1.JobKind", job.kind);
}

/**
 * @param {import("./views/chat.js").ViewContext} ctx
 * @param {any} job
 */
function stateName(ctx, job) {
  return ctx.api.enumName("recap.v1.JobState", job.state);
}
