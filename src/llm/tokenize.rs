//! Counting tokens with the LLM endpoint's own tokenizer: `POST /tokenize`
//! at the root of the server (`--llm-url` without its `/v1`), as llama.cpp's
//! server and vLLM serve it.
//!
//! One body works for both: llama.cpp reads `content` and `add_special`,
//! vLLM reads `model`, `prompt` and `add_special_tokens`; each ignores the
//! other's fields. The answer's `count` (vLLM) or the length of `tokens`
//! (both) is the count. Special tokens are not added, as the other
//! tokenizers count.

use reqwest::Url;
use serde_json::{Value, json};

use super::transport::{InFlight, Transport};
use super::{FailureKind, LlmClient, LlmError};

/// Most bytes of a `/tokenize` answer read: the token ids of the longest
/// text recapd holds (a few MiB of ids as JSON numbers).
const MAX_TOKENIZE_ANSWER_BYTES: usize = 32 << 20;

/// `base_url`'s `/tokenize`: at the server's root, a trailing `/v1` (the
/// OpenAI-compatible prefix) taken off.
pub(super) fn tokenize_endpoint(base_url: &str) -> Result<Url, String> {
    let root = base_url.strip_suffix("/v1").unwrap_or(base_url);
    super::transport::endpoint(root, "/tokenize", "--llm-url")
}

impl LlmClient {
    /// The number of tokens of `text` with `model`'s tokenizer, as the
    /// endpoint's `/tokenize` counts it (no special tokens). Not held to the
    /// completions' rate limit (counting is not generating), but to the
    /// request timeout. A 404 or 405 means the endpoint has no `/tokenize`:
    /// [`LlmError::Fatal`] with [`FailureKind::Status`].
    pub async fn count_tokens(&self, model: &str, text: &str) -> Result<u32, LlmError> {
        let body = json!({
            "content": text,
            "add_special": false,
            "model": model,
            "prompt": text,
            "add_special_tokens": false,
        });
        let body = serde_json::to_vec(&body).map_err(|e| LlmError::Fatal {
            kind: FailureKind::NotSent,
            reason: e.to_string(),
        })?;
        let transport: &Transport = &self.inner.transport;
        let in_flight = InFlight::enter();
        let answer = transport
            .post(&self.inner.tokenize, body, MAX_TOKENIZE_ANSWER_BYTES)
            .await;
        drop(in_flight);
        let answer = answer.map_err(|refusal| transport.scrub(refusal.error))?;
        parse_count(&answer).map_err(|reason| LlmError::retryable(FailureKind::Malformed, reason))
    }
}

/// The count in a `/tokenize` answer: `count` when present, else the
/// length of `tokens`.
pub(super) fn parse_count(answer: &[u8]) -> Result<u32, String> {
    let value: Value = serde_json::from_slice(answer)
        .map_err(|e| format!("the /tokenize answer is not JSON: {e}"))?;
    if let Some(count) = value.get("count").and_then(Value::as_u64) {
        return Ok(u32::try_from(count).unwrap_or(u32::MAX));
    }
    match value.get("tokens").and_then(Value::as_array) {
        Some(tokens) => Ok(u32::try_from(tokens.len()).unwrap_or(u32::MAX)),
        None => Err("the /tokenize answer has neither `count` nor `tokens`".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokenize_endpoint_is_at_the_servers_root() {
        let at = |base: &str| tokenize_endpoint(base).map(|u| u.to_string());
        assert_eq!(
            at("http://127.0.0.1:8080/v1"),
            Ok("http://127.0.0.1:8080/tokenize".to_owned())
        );
        assert_eq!(
            at("http://h:1/proxy/v1"),
            Ok("http://h:1/proxy/tokenize".to_owned())
        );
        assert_eq!(at("http://h:1"), Ok("http://h:1/tokenize".to_owned()));
    }

    #[test]
    fn counts_are_read_from_llama_cpp_and_vllm_answers() {
        // llama.cpp's server: {"tokens":[...]}.
        assert_eq!(parse_count(br#"{"tokens":[1,2,3]}"#), Ok(3));
        // vLLM: {"count":N,"max_model_len":M,"tokens":[...]}.
        assert_eq!(
            parse_count(br#"{"count":2,"max_model_len":4096,"tokens":[5,6]}"#),
            Ok(2)
        );
        assert!(parse_count(br#"{"error":"x"}"#).is_err());
        assert!(parse_count(b"not json").is_err());
    }
}
