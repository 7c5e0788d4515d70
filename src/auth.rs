//! Bearer-token authentication and tenants.
//!
//! The tokens come from `--auth-tokens-file`, read by the configuration
//! into plain data ([`crate::config::TenantTokens`]) from which
//! [`crate::app`] builds a [`TokenTable`]. With tokens, every call except `grpc.health.v1` needs
//! `authorization: Bearer <token>` (the scheme in any case); the tenant of
//! the matching token is put in the request's extensions as a [`Tenant`],
//! and each tenant sees only its own chats and global settings. Tokens are compared in constant time
//! and never logged.

use std::future::{Ready, ready};
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::Either;
use subtle::ConstantTimeEq;
use tonic::Status;
use tonic::codegen::http;
use tower::{Layer, Service};

pub use crate::domain::ids::Tenant;

/// The tokens of every tenant.
#[derive(Clone, Default)]
pub struct TokenTable {
    entries: Arc<[(Tenant, Box<[u8]>)]>,
}

impl std::fmt::Debug for TokenTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never the tokens themselves.
        write!(f, "TokenTable({} tokens)", self.entries.len())
    }
}

impl TokenTable {
    /// The table of `tenant_by_token`: each bearer token and the name of
    /// the tenant it stands for, as the configuration read them from the
    /// tokens file (which checked them: no empty table, no token given
    /// twice).
    pub fn new<'a>(tenant_by_token: impl IntoIterator<Item = (&'a str, &'a str)>) -> TokenTable {
        let entries = tenant_by_token
            .into_iter()
            .map(|(token, tenant)| (Tenant(tenant.to_owned()), token.as_bytes().into()))
            .collect();
        TokenTable { entries }
    }

    /// The tenant of `token`, comparing against every entry in constant
    /// time so timing does not tell how much of a guess was right.
    pub fn tenant(&self, token: &[u8]) -> Option<Tenant> {
        self.find(token).cloned()
    }

    /// [`TokenTable::tenant`] without a copy: the lookup allocates nothing.
    fn find(&self, token: &[u8]) -> Option<&Tenant> {
        let mut found = None;
        for (tenant, candidate) in self.entries.iter() {
            if bool::from(candidate.ct_eq(token)) {
                found = Some(tenant);
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
pub(crate) fn bearer_token(value: &[u8]) -> Option<&[u8]> {
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
    ResBody: Default,
{
    type Response = S::Response;
    type Error = S::Error;
    /// The inner call, or the refusal: no future boxed per call.
    type Future = Either<S::Future, Ready<Result<S::Response, S::Error>>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: http::Request<ReqBody>) -> Self::Future {
        let tenant = match &self.tokens {
            // Without tokens every call is the default tenant's: the
            // services take a request without a `Tenant` as the default
            // tenant's (`grpc::services::split`), so nothing is inserted.
            None => return Either::Left(self.inner.call(request)),
            Some(_) if request.uri().path().starts_with("/grpc.health.v1.Health/") => {
                Some(Tenant::default())
            }
            Some(tokens) => request
                .headers()
                .get(http::header::AUTHORIZATION)
                .and_then(|v| bearer_token(v.as_bytes()))
                .and_then(|token| tokens.find(token))
                .cloned(),
        };
        match tenant {
            Some(tenant) => {
                request.extensions_mut().insert(tenant);
                Either::Left(self.inner.call(request))
            }
            None => Either::Right(ready(Ok(unauthenticated()))),
        }
    }
}

#[cfg(test)]
mod tests;
