// follow: InjectionService.Subscribe that survives disconnects and server
// restarts, without ever yielding a revision twice or going back.
import { Code, ConnectError } from "@connectrpc/connect";
/** The running recap's injection key (an empty key stands for it). */
const SCENE_KEY = "auto_recap_scene";
/** The default back-off: 100 ms, doubling to 5 s, half of it random. */
export const DEFAULT_FOLLOW_BACKOFF = Object.freeze({
    initialBackoffMs: 100,
    maxBackoffMs: 5000,
    backoffMultiplier: 2,
    jitter: 0.5,
});
/**
 * The status codes after which {@link followInjections} always subscribes
 * again instead of throwing: `UNAVAILABLE` (the server is down or
 * restarting, or its store failed for a moment) and `ABORTED` (Node
 * reports a connection reset under the stream so).
 */
export const RETRYABLE_FOLLOW_CODES = Object.freeze([Code.Unavailable, Code.Aborted]);
/**
 * The status codes after which {@link followInjections} subscribes again
 * only when the client made them itself, because the connection broke (no
 * `grpc-status` came from the server): `CANCELLED` (the server was killed:
 * Node sees the HTTP/2 stream closed with CANCEL), `INTERNAL` and
 * `UNKNOWN` (a connection that broke mid-message, a failed `fetch` in a
 * browser). Sent by the server, they are thrown.
 */
export const RETRYABLE_FOLLOW_CODES_FROM_CLIENT = Object.freeze([Code.Canceled, Code.Internal, Code.Unknown]);
/**
 * Whether {@link followInjections} subscribes again after `error`: the
 * codes of {@link RETRYABLE_FOLLOW_CODES}, and those of
 * {@link RETRYABLE_FOLLOW_CODES_FROM_CLIENT} when the server sent no
 * status (the connection broke). Everything else is thrown:
 * `INVALID_ARGUMENT` (a bad chat id, more than 1000 ids),
 * `UNAUTHENTICATED`, `PERMISSION_DENIED`, `NOT_FOUND`,
 * `RESOURCE_EXHAUSTED` (`--max-subscribers`), `INTERNAL` from the server,
 * and any other code.
 *
 * @param error what the stream failed with.
 * @returns true to subscribe again.
 */
export function isRetryableFollowError(error) {
    if (RETRYABLE_FOLLOW_CODES.includes(error.code))
        return true;
    return RETRYABLE_FOLLOW_CODES_FROM_CLIENT.includes(error.code) && !error.metadata.has("grpc-status");
}
/**
 * Follows the injections of `chatIds`: an async iterator of `Injection`
 * messages that survives disconnects and server restarts on its own.
 *
 * It calls `InjectionService.Subscribe`, which sends each named chat's
 * current injection, then one per refresh in revision order. When the
 * stream ends (the server shuts down) or fails with a retryable error (see
 * {@link isRetryableFollowError}), it subscribes again after an
 * exponential back-off with jitter (by default 100 ms doubling to 5 s,
 * half of each wait random; reset once a message arrives). Per chat and
 * injection key (`auto_recap_scene`, `auto_recap_messages`,
 * `auto_recap_recall` each have their own revisions) it never yields a
 * revision it already yielded nor an older one: the snapshot sent after a
 * resubscription is skipped when nothing changed meanwhile, and yielded
 * when it is newer (revisions missed while disconnected collapse into it).
 * A deleted chat's last injection (`deleted` true) is yielded like any
 * other.
 *
 * Other errors are thrown from the iterator. Aborting `options.signal`
 * ends the iteration without an error; so does leaving a `for await` loop.
 *
 * @param injections an `InjectionService` client (`RecapdClient.injections`).
 * @param chatIds the chats to follow (a single string is one chat id, not
 *   its characters); empty: every chat of the tenant, live updates only (no
 *   snapshot: refreshes made while disconnected are not seen).
 * @param options back-off, cancellation, a retry callback.
 * @returns the injections, as they come.
 */
export async function* followInjections(injections, chatIds, options = {}) {
    // A string is iterable too: `follow("alice-1")` must not follow the
    // chats "a", "l", "i"...
    const ids = typeof chatIds === "string" ? [chatIds] : [...chatIds];
    const initial = positive(options.initialBackoffMs, DEFAULT_FOLLOW_BACKOFF.initialBackoffMs, "initialBackoffMs");
    const max = Math.max(initial, positive(options.maxBackoffMs, DEFAULT_FOLLOW_BACKOFF.maxBackoffMs, "maxBackoffMs"));
    const multiplier = Math.max(1, positive(options.backoffMultiplier, DEFAULT_FOLLOW_BACKOFF.backoffMultiplier, "backoffMultiplier"));
    const jitter = Math.min(1, Math.max(0, options.jitter ?? DEFAULT_FOLLOW_BACKOFF.jitter));
    const outer = options.signal;
    // The latest revision yielded per chat and key.
    const latest = new Map();
    let attempt = 0;
    while (!outer?.aborted) {
        // One subscription; cancelled when the caller stops or leaves the loop.
        const controller = new AbortController();
        const abort = () => controller.abort();
        outer?.addEventListener("abort", abort, { once: true });
        let failure;
        try {
            for await (const injection of injections.subscribe({ chatIds: ids }, { signal: controller.signal, timeoutMs: 0 })) {
                attempt = 0;
                const slot = `${injection.chatId}\u0000${injection.key || SCENE_KEY}`;
                const seen = latest.get(slot);
                if (seen !== undefined && injection.revision <= seen)
                    continue;
                latest.set(slot, injection.revision);
                yield injection;
            }
        }
        catch (error) {
            if (outer?.aborted)
                return;
            const connectError = ConnectError.from(error);
            if (!isRetryableFollowError(connectError))
                throw connectError;
            failure = connectError;
        }
        finally {
            outer?.removeEventListener("abort", abort);
            controller.abort();
        }
        if (outer?.aborted)
            return;
        attempt += 1;
        const backoff = Math.min(max, initial * multiplier ** (attempt - 1));
        const delayMs = Math.round(backoff * (1 - jitter * Math.random()));
        options.onRetry?.({ error: failure, attempt, delayMs });
        await sleep(delayMs, outer);
    }
}
function positive(value, fallback, name) {
    if (value === undefined)
        return fallback;
    if (!Number.isFinite(value) || value <= 0) {
        throw new RangeError(`recapd: follow option ${name} must be a positive number, not ${value}`);
    }
    return value;
}
/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms, signal) {
    return new Promise((resolve) => {
        if (signal?.aborted)
            return resolve();
        const done = () => {
            clearTimeout(timer);
            signal?.removeEventListener("abort", done);
            resolve();
        };
        const timer = setTimeout(done, ms);
        signal?.addEventListener("abort", done, { once: true });
    });
}
