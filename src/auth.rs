//! Bearer-token authentication and tenants.
//!
//! The tokens file (`--auth-tokens-file`) has one `TENANT TOKEN` pair per
//! line, separated by white space; blank lines and lines starting with `#`
//! are ignored. With a file, every call except `grpc.health.v1` needs
//! `authorization: Bearer <token>` (the scheme in any case); the tenant of
//! the matching token is put in the request's extensions as a [`Tenant`],
//! and each tenant sees only its own chats and global settings. Tokens are compared in constant time
//! and never logged.

use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use subtle::ConstantTimeEq;
use tonic::Status;
use tonic::codegen::http;
use tower::{Layer, Service};

pub use crate::domain::ids::Tenant;

/// The tokens of every tenant.
#[derive(Clone, Default)]
pub struct TokenTable {
    entries: Arc<Vec<(String, Vec<u8>)>>,
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        write!(f, "TokenTable({} tokens)", self.entries.len())
    }
}

impl TokenTable {
    /// Reads a tokens file; a malformed line is an error naming its number
    /// (but not its content, which may hold a token).
    pub fn load(path: &Path) -> Result<TokenTable, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TokenTable::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    /// Parses the tokens file's text.
    pub fn parse(text: &str) -> Result<TokenTable, String> {
        let mut entries = Vec::new();
        for (number, line) in (1..).zip(text.lines()) {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let fields: Vec<&str> = line.split_whitespace().collect();
            let [tenant, token] = fields[..] else {
                return Err(format!(
                    "line {number}: expected `TENANT TOKEN`, found {} fields",
                    fields.len()
                ));
            };
            if tenant.chars().any(char::is_control) || tenant.len() > 128 {
                return Err(format!(
                    "line {number}: a tenant name has at most 128 bytes and no control characters"
                ));
            }
            if token.len() < 16 {
                return Err(format!("line {number}: a token has at least 16 characters"));
            }
            if entries
                .iter()
                .any(|(_, t): &(String, Vec<u8>)| t.as_slice() == token.as_bytes())
            {
                return Err(format!(
                    "line {number}: this token is already given to a tenant"
                ));
            }
            entries.push((tenant.to_owned(), token.as_bytes().to_vec()));
        }
        if entries.is_empty() {
            return Err("no `TENANT TOKEN` line".into());
        }
        Ok(TokenTable {
            entries: Arc::new(entries),
        })
    }

    /// The tenant of `token`, comparing against every entry in constant
    /// time so timing does not tell how much of a guess was right.
    pub fn tenant(&self, token: &[u8]) -> Option<Tenant> {
        let mut found = None;
        for (tenant, candidate) in self.entries.iter() {
            if bool::from(candidate.as_slice().ct_eq(token)) {
                found = Some(Tenant(tenant.clone()));
            }
        }
        found
    }
}

/// Checks the bearer token of every call but health.
#[derive(Clone)]
pub struct AuthLayer {
    tokens: Option<TokenTable>,
}

impl AuthLayer {
    /// `None`: authentication off; every call is the default tenant's.
    pub fn new(tokens: Option<TokenTable>) -> Self {
        AuthLayer { tokens }
    }
}

impl<S> Layer<S> for AuthLayer {
    type Service = Authenticated<S>;
    fn layer(&self, inner: S) -> Authenticated<S> {
        Authenticated {
            inner,
            tokens: self.tokens.clone(),
        }
    }
}

/// A service behind [`AuthLayer`].
#[derive(Clone)]
pub struct Authenticated<S> {
    inner: S,
    tokens: Option<TokenTable>,
}

/// The message of every refused call; the same whether the token is
/// missing, malformed or unknown, so a caller learns nothing about tokens.
pub const UNAUTHENTICATED_MESSAGE: &str = "missing or unknown bearer token";

/// The answer to a call without a valid token: a trailers-only gRPC
/// response carrying UNAUTHENTICATED, built by tonic like any other status.
fn unauthenticated<B: Default>() -> http::Response<B> {
    Status::unauthenticated(UNAUTHENTICATED_MESSAGE).into_http()
}

/// The token of an `authorization` header value `Bearer <token>`: the
/// scheme in any case (RFC 7235 makes it case-insensitive), one or more
/// spaces, then the token, taken as it is (tokens are case-sensitive).
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let (scheme, rest) = value.split_at_checked(b"Bearer".len())?;
    if !scheme.eq_ignore_ascii_case(b"Bearer") || !rest.starts_with(b" ") {
        return None;
    }
    let token = rest.trim_ascii_start();
    (!token.is_empty()).then_some(token)
}

impl<S, ReqBody, ResBody> Service<http::Request<ReqBody>> for Authenticated<S>
where
    S: Service<http::Request<ReqBody>, Response = http::Response<ResBody>>,
    S::Future: Send + 'static,
    S::Error: Send + 'static,
    ResBody: Default + Send + 'static,
{
    type Response = S::Response;
    type Error = S::Error;
    type Future = Pin<Box<dyn Future<Output = Result<S::Response, S::Error>> + Send>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        let tenant = match &self.tokens {
            None => Some(Tenant::default()),
            Some(_) if request.uri().path().starts_with("/grpc.health.v1.Health/") => {
                Some(Tenant::default())
            }
            Some(tokens) => request
                .headers()
                .get("authorization")
                .and_then(|v| bearer_token(v.as_bytes()))
                .and_then(|token| tokens.tenant(token)),
        };
        match tenant {
            Some(tenant) => {
                request.extensions_mut().insert(tenant);
                Box::pin(self.inner.call(request))
            }
            None => Box::pin(async { Ok(unauthenticated()) }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tokens_file_skips_comments_and_blank_lines_and_names_a_bad_line() {
        let table = TokenTable::parse(
            "# tenants\n\nacme  0123456789abcdef\n\tglobex\tfedcba9876543210  \n",
        )
        .unwrap();
        assert_eq!(
            table.tenant(b"0123456789abcdef"),
            Some(Tenant("acme".into()))
        );
        assert_eq!(
            table.tenant(b"fedcba9876543210"),
            Some(Tenant("globex".into()))
        );
        assert_eq!(table.tenant(b"0123456789abcdeX"), None);
        assert_eq!(table.tenant(b""), None);
        let err = TokenTable::parse("acme 0123456789abcdef\nbroken\n").unwrap_err();
        assert!(err.starts_with("line 2:"), "{err}");
        assert!(!err.contains("0123456789abcdef"), "never the token: {err}");
        assert!(
            TokenTable::parse("a b c\n")
                .unwrap_err()
                .starts_with("line 1:")
        );
        assert!(
            TokenTable::parse("acme short\n")
                .unwrap_err()
                .contains("16")
        );
        assert!(TokenTable::parse("# nothing\n").is_err());
        assert_eq!(format!("{table:?}"), "TokenTable(2 tokens)");
    }

    #[test]
    fn a_refused_call_decodes_as_unauthenticated_with_its_message() {
        let response: http::Response<()> = unauthenticated();
        assert_eq!(
            response.headers().get("content-type").map(|v| v.as_bytes()),
            Some(&b"application/grpc"[..])
        );
        let status = Status::from_header_map(response.headers())
            .expect("a refusal carries grpc-status in its headers");
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert_eq!(status.message(), UNAUTHENTICATED_MESSAGE);
    }

    #[test]
    fn only_a_known_bearer_token_reaches_the_service_and_health_needs_none() {
        use std::convert::Infallible;
        use tower::ServiceExt as _;

        let tokens = TokenTable::parse("acme 0123456789abcdef\n").unwrap();
        // The inner service answers OK with the tenant it was given.
        let inner = tower::service_fn(|request: http::Request<()>| async move {
            let tenant = request.extensions().get::<Tenant>().cloned();
            Ok::<_, Infallible>(http::Response::new(tenant))
        });
        let service = AuthLayer::new(Some(tokens)).layer(inner);
        let call = |path: &str, authorization: Option<&str>| {
            let mut request = http::Request::builder().uri(path);
            if let Some(value) = authorization {
                request = request.header("authorization", value);
            }
            let request = request.body(()).unwrap();
            let service = service.clone();
            async move { service.oneshot(request).await.unwrap() }
        };
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        runtime.block_on(async {
            // The scheme in any case (RFC 7235); the token exactly.
            for authorization in [
                "Bearer 0123456789abcdef",
                "bearer 0123456789abcdef",
                "BEARER 0123456789abcdef",
                "bEaReR  0123456789abcdef",
            ] {
                let accepted = call("/recap.v1.EventService/Publish", Some(authorization)).await;
                assert_eq!(
                    accepted.body(),
                    &Some(Tenant("acme".into())),
                    "{authorization}"
                );
                assert!(Status::from_header_map(accepted.headers()).is_none());
            }
            for authorization in [
                None,
                Some("Bearer 0123456789abcdeX"),
                Some("bearer 0123456789ABCDEF"),
                Some("0123456789abcdef"),
                Some("Bearer0123456789abcdef"),
                Some("Basic 0123456789abcdef"),
                Some("Bearer "),
                Some("bear"),
            ] {
                let refused = call("/recap.v1.EventService/Publish", authorization).await;
                assert_eq!(refused.body(), &None, "{authorization:?}");
                let status = Status::from_header_map(refused.headers()).unwrap();
                assert_eq!(status.code(), tonic::Code::Unauthenticated);
            }
            let health = call("/grpc.health.v1.Health/Check", None).await;
            assert_eq!(health.body(), &Some(Tenant::default()));
        });
    }
}
