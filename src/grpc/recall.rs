//! `recap.v1.RecallService`: a chat's passages found again for a query
//! (keyword and, with an embeddings endpoint, vector search, fused), for
//! backends that assemble prompts themselves. The request is checked,
//! handed to the engine in the caller's tenant, and answered; errors go
//! through the one table (`grpc::status`).

use tonic::{Request, Response, Status};

use super::pb;
use super::pb::recall_service_server::RecallService;
use super::services::{scoped, split};
use super::status::domain_status;
use crate::domain::DomainError;
use crate::domain::recall::{MAX_HITS, Source};
use crate::engine::{DEFAULT_RECALL_LIMIT, Engine, RecallAnswer, RecallHit, RecallRequest};

/// `recap.v1.RecallService`.
#[derive(Clone)]
pub struct RecallApi {
    engine: Engine,
}

impl RecallApi {
    /// Serves recall over the chats kept by `engine`.
    pub fn new(engine: Engine) -> Self {
        RecallApi { engine }
    }
}

#[tonic::async_trait]
impl RecallService for RecallApi {
    async fn recall(
        &self,
        request: Request<pb::RecallRequest>,
    ) -> Result<Response<pb::RecallResponse>, Status> {
        let (tenant, request) = split(request);
        let pb::RecallRequest {
            chat_id,
            query,
            limit,
            min_score,
        } = request;
        let chat_id = scoped(&tenant, &chat_id)?;
        let request = recall_request(query, limit, min_score, self.engine.limits().max_text_bytes)
            .map_err(domain_status)?;
        let answer = self.engine.chats().recall(&chat_id, &request).await?;
        Ok(Response::new(answer.into()))
    }
}

/// A Recall request from the wire, checked: `limit` 0 (the default, 10)
/// to 100, `min_score` in 0..=1, the query at most `max_text_bytes`.
fn recall_request(
    query: String,
    limit: u32,
    min_score: Option<f64>,
    max_text_bytes: usize,
) -> Result<RecallRequest, DomainError> {
    let limit = match usize::try_from(limit).unwrap_or(usize::MAX) {
        0 => DEFAULT_RECALL_LIMIT,
        n if n <= MAX_HITS => n,
        n => {
            return Err(DomainError::invalid(
                "limit",
                format!("{n} is over the maximum of {MAX_HITS}"),
            ));
        }
    };
    if let Some(score) = min_score
        && !(0.0..=1.0).contains(&score)
    {
        return Err(DomainError::invalid(
            "min_score",
            format!("{score} is outside 0..=1"),
        ));
    }
    if query.len() > max_text_bytes {
        return Err(DomainError::invalid(
            "query",
            format!(
                "{} bytes, over the limit of {max_text_bytes} (--max-text-bytes)",
                query.len()
            ),
        ));
    }
    Ok(RecallRequest {
        query,
        limit,
        min_score: min_score.map(|s| s as f32),
    })
}

impl From<RecallAnswer> for pb::RecallResponse {
    fn from(answer: RecallAnswer) -> Self {
        let RecallAnswer { hits, used_vectors } = answer;
        pb::RecallResponse {
            hits: hits.into_iter().map(pb::RecallHit::from).collect(),
            used_vectors,
        }
    }
}

impl From<RecallHit> for pb::RecallHit {
    fn from(found: RecallHit) -> Self {
        let RecallHit {
            chat_id,
            hit,
            tokens,
        } = found;
        let crate::domain::recall::Hit {
            key,
            seq: _,
            text,
            keyword_score,
            vector_score,
            score,
        } = hit;
        pb::RecallHit {
            message_id: key.message_id.to_string(),
            text,
            keyword_score: f64::from(keyword_score),
            vector_score: vector_score.map(f64::from),
            score: f64::from(score),
            tokens,
            scene_recap: key.source == Source::SceneRecap,
            part: key.part,
            chat_id,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_checked_with_the_field_named() {
        let ok = recall_request("letter".into(), 0, None, 100).expect("valid");
        assert_eq!((ok.limit, ok.min_score), (DEFAULT_RECALL_LIMIT, None));
        assert_eq!(
            recall_request(String::new(), 100, Some(1.0), 100).map(|r| r.limit),
            Ok(100)
        );
        let over = recall_request(String::new(), 101, None, 100).expect_err("over 100");
        assert!(over.to_string().contains("limit"), "{over}");
        let score = recall_request(String::new(), 1, Some(1.5), 100).expect_err("over 1");
        assert!(score.to_string().contains("min_score"), "{score}");
        let nan = recall_request(String::new(), 1, Some(f64::NAN), 100).expect_err("NaN");
        assert!(nan.to_string().contains("min_score"), "{nan}");
        let long = recall_request("x".repeat(101), 1, None, 100).expect_err("too long");
        assert!(long.to_string().contains("query"), "{long}");
    }
}
