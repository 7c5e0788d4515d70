// follow: InjectionService.Subscribe that survives disconnects and server
// restarts, without ever yielding a revision twice or going back.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Injection, InjectionService } from "./gen/recap/v1/recap_pb.js";

/** Options of {@link followInjections} (and `RecapdClient.follow`). */
export interface FollowOptions {
  /** Stops following: the iterator then ends (returns) without an error. */
  signal?: AbortSignal;
  /** The back-off before the first resubscription, in milliseconds. Default 100. */
  initialBackoffMs?: number;
  /** The longest back-off, in milliseconds. Default 5000. */
  maxBackoffMs?: number;
  /** What the back-off is multiplied by after each failed attempt. Default 2. */
  backoffMultiplier?: number;
  /**
   * The share of each back-off that is random, 0 to 1: a back-off of `b`
   * waits between `b * (1 - jitter)` and `b`. Default 0.5.
   */
  jitter?: number;
  /**
   * Called before each wait to subscribe again, with why (the error, or
   * none when the stream ended normally, as it does when the server shuts
   * down), the number of the attempt in a row (1 first) and the wait.
   */
  onRetry?: (event: FollowRetryEvent) => void;
}

/** What {@link FollowOptions.onRetry} is told. */
export interface FollowRetryEvent {
  /** Why the subscription is made again; undefined when the stream ended normally. */
  error?: ConnectError;
  /** Attempts in a row without a message received, this one included (1, 2, ...). */
  attempt: number;
  /** How long follow waits before subscribing again, in milliseconds. */
  delayMs: number;
}

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
export const RETRYABLE_FOLLOW_CODES: readonly Code[] = Object.freeze([Code.Unavailable, Code.Aborted]);

/**
 * The status codes after which {@link followInjections} subscribes again
 * only when the client made them itself, because the connection broke (no
 * `grpc-status` came from the server): `CANCELLED` (the server was killed:
 * Node sees the HTTP/2 stream closed with CANCEL), `INTERNAL` and
 * `UNKNOWN` (a connection that broke mid-message, a failed `fetch` in a
 * browser). Sent by the server, they are thrown.
 */
export const RETRYABLE_FOLLOW_CODES_FROM_CLIENT: readonly Code[] = Object.freeze([Code.Canceled, Code.Internal, Code.Unknown]);

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
export function isRetryableFollowError(error: ConnectError): boolean {
  if (RETRYABLE_FOLLOW_CODES.includes(error.code)) return true;
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
export async function* followInjections(
  injections: Client<typeof InjectionService>,
  chatIds: string | Iterable<string>,
  options: FollowOptions = {},
): AsyncGenerator<Injection, void, undefined> {
  // A string is iterable too: `follow("alice-1")` must not follow the
  // chats "a", "l", "i"...
  const ids = typeof chatIds === "string" ? [chatIds] : [...chatIds];
  const initial = positive(options.initialBackoffMs, DEFAULT_FOLLOW_BACKOFF.initialBackoffMs, "initialBackoffMs");
  const max = Math.max(initial, positive(options.maxBackoffMs, DEFAULT_FOLLOW_BACKOFF.maxBackoffMs, "maxBackoffMs"));
  const multiplier = Math.max(1, positive(options.backoffMultiplier, DEFAULT_FOLLOW_BACKOFF.backoffMultiplier, "backoffMultiplier"));
  const jitter = Math.min(1, Math.max(0, options.jitter ?? DEFAULT_FOLLOW_BACKOFF.jitter));
  const outer = options.signal;

  // The latest revision yielded per chat and key.
  const latest = new Map<string, bigint>();
  let attempt = 0;

  while (!outer?.aborted) {
    // One subscription; cancelled when the caller stops or leaves the loop.
    const controller = new AbortController();
    const abort = () => controller.abort();
    outer?.addEventListener("abort", abort, { once: true });
    let failure: ConnectError | undefined;
    try {
      for await (const injection of injections.subscribe({ chatIds: ids }, { signal: controller.signal, timeoutMs: 0 })) {
        attempt = 0;
        const slot = `${injection.chatId}\u0000${injection.key || SCENE_KEY}`;
        const seen = latest.get(slot);
        if (seen !== undefined && injection.revision <= seen) continue;
        latest.set(slot, injection.revision);
        yield injection;
      }
    } catch (error) {
      if (outer?.aborted) return;
      const connectError = ConnectError.from(error);
      if (!isRetryableFollowError(connectError)) throw connectError;
      failure = connectError;
    } finally {
      outer?.removeEventListener("abort", abort);
      controller.abort();
    }
    if (outer?.aborted) return;
    attempt += 1;
    const backoff = Math.min(max, initial * multiplier ** (attempt - 1));
    const delayMs = Math.round(backoff * (1 - jitter * Math.random()));
    options.onRetry?.({ error: failure, attempt, delayMs });
    await sleep(delayMs, outer);
  }
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) {
    throw new RangeError(`recapd: follow option ${name} must be a positive number, not ${value}`);
  }
  return value;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener("abort", done, { once: true });
  });
}
