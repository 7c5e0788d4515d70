// Reads an async iterator in the background into an array, with a bounded
// wait for what the test expects to have arrived.

/**
 * @template T
 * @param {AsyncIterable<T>} iterable
 */
export function collect(iterable) {
  /** @type {T[]} */
  const items = [];
  /** @type {Array<() => void>} */
  let wake = [];
  const state = { items, error: undefined, done: false };
  state.finished = (async () => {
    try {
      for await (const item of iterable) {
        items.push(item);
        for (const w of wake) w();
        wake = [];
      }
    } catch (error) {
      state.error = error;
    } finally {
      state.done = true;
      for (const w of wake) w();
      wake = [];
    }
  })();
  /**
   * Waits until `predicate(items)` holds; fails after `ms`, or when the
   * iteration ended first.
   * @param {(items: T[]) => boolean} predicate
   * @param {number} ms
   * @param {string} what
   */
  state.until = async (predicate, ms, what) => {
    const deadline = Date.now() + ms;
    while (!predicate(items)) {
      if (state.done) throw new Error(`the iteration ended (${state.error ?? "normally"}) before ${what}; got ${describe(items)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out after ${ms} ms waiting for ${what}; got ${describe(items)}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.min(left, 250));
        wake.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  };
  return state;
}

function describe(items) {
  return JSON.stringify(items.map((i) => (i && typeof i === "object" && "revision" in i ? `${i.chatId}/${i.key}@${i.revision}${i.deleted ? " deleted" : ""}` : i)));
}
