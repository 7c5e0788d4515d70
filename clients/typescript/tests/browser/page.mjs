// The page the browser test loads, bundled by esbuild for the browser: it
// imports the installed package (its `browser` build, gRPC-Web) and hands
// the test a few calls to make.
import { connect } from "@recapd/client";

/** @type {Record<string, unknown>} */
const exposed = {
  /** getInjection over gRPC-Web; the answer as plain values. */
  async getInjection(address, token, chatId) {
    const recapd = connect({ address, token });
    const injection = await recapd.injections.getInjection({ chatId });
    return { chatId: injection.chatId, revision: String(injection.revision), text: injection.text };
  },
  /** Starts follow; what it yields goes to window.followed, an error to window.followError. */
  startFollow(address, token, chatIds) {
    const recapd = connect({ address, token });
    window.followed = [];
    window.followError = null;
    window.stopFollow = new AbortController();
    (async () => {
      try {
        const options = { signal: window.stopFollow.signal, initialBackoffMs: 50, maxBackoffMs: 500 };
        window.retries = [];
        options.onRetry = ({ error }) => window.retries.push(error === undefined ? "ended" : `${error.code}: ${error.message}`);
        for await (const injection of recapd.follow(chatIds, options)) {
          window.followed.push({ chatId: injection.chatId, revision: String(injection.revision), text: injection.text });
        }
      } catch (error) {
        window.followError = `${error.code}: ${error.message}`;
      }
    })();
  },
  /** What a call without the token gets. */
  async codeWithoutToken(address, chatId) {
    try {
      await connect({ address }).injections.getInjection({ chatId });
      return "no error";
    } catch (error) {
      return error.code;
    }
  },
};
window.recapdTest = exposed;
document.title = "ready";
