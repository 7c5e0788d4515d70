//! The listeners and what they serve: the gRPC listener (`--listen`:
//! gRPC, and gRPC-Web for browsers of `--grpc-web-allowed-origins`) and,
//! with `--inspector-listen`, the inspector (its page and the same API over
//! gRPC-Web). Both serve one set of routes (health, reflection and the
//! `recap.v1` services) through the same observation and authentication
//! layers; only what sits in front differs.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tonic::service::Routes;
use tonic::transport::server::{Router, TcpIncoming};
use tonic::transport::{Server, ServerTlsConfig};
use tonic_health::pb::health_server::{Health, HealthServer};
use tonic_web::GrpcWebLayer;
use tower::layer::util::{Identity, Stack};

use super::AppError;
use crate::auth::{AuthLayer, TokenTable};
use crate::config::{Config, TlsPem};
use crate::engine::Engine;
use crate::grpc::observe::ObserveLayer;
use crate::grpc::pb::event_service_server::EventServiceServer;
use crate::grpc::pb::injection_service_server::InjectionServiceServer;
use crate::grpc::pb::lorebook_service_server::LorebookServiceServer;
use crate::grpc::pb::memory_service_server::MemoryServiceServer;
use crate::grpc::pb::prompt_service_server::PromptServiceServer;
use crate::grpc::pb::recall_service_server::RecallServiceServer;
use crate::grpc::pb::recap_service_server::RecapServiceServer;
use crate::grpc::pb::settings_service_server::SettingsServiceServer;
use crate::grpc::web::GrpcWebFront;
use crate::grpc::{
    EventApi, InjectionApi, LorebookApi, MemoryApi, PromptApi, RecallApi, RecapApi, SettingsApi, pb,
};
use crate::inspector::InspectorLayer;

/// The layers every call goes through, outermost first: `Front` (on the
/// gRPC listener, CORS and gRPC-Web's translation for what is not plain
/// gRPC; on the inspector's, the page, then gRPC-Web's translation),
/// observation (metrics, logs), then authentication.
pub(super) type Layers<Front> = Stack<AuthLayer, Stack<ObserveLayer, Stack<Front, Identity>>>;

/// The gRPC listener's router.
pub(super) type GrpcRouter = Router<Layers<GrpcWebFront>>;

/// The inspector listener's router: the page in front of gRPC-Web's
/// translation.
pub(super) type InspectorRouter = Router<Layers<Stack<GrpcWebLayer, InspectorLayer>>>;

/// Binds a listener at `addr`; also returns the bound address (the real
/// port for port 0).
pub(super) async fn bind(addr: SocketAddr) -> Result<(TcpListener, SocketAddr), AppError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|source| AppError::Bind { addr, source })?;
    let local_addr = listener
        .local_addr()
        .map_err(|source| AppError::Bind { addr, source })?;
    Ok((listener, local_addr))
}

/// The connections `listener` accepts, with Nagle's algorithm off, as
/// tonic's own `serve` sets it (a listener of our own bypasses that):
/// with it on, a small HTTP/2 frame (a pushed injection, a unary answer)
/// can wait for the peer's delayed ACK, tens of ms.
pub(super) fn accepting(listener: TcpListener) -> TcpIncoming {
    TcpIncoming::from(listener).with_nodelay(Some(true))
}

/// What both listeners serve and how: the routes, the token table and TLS.
pub(super) struct Serving {
    routes: Routes,
    tokens: Option<TokenTable>,
    tls: Option<ServerTlsConfig>,
    max_streams: u32,
}

impl Serving {
    /// Health (`health`), reflection and the eight `recap.v1` services on
    /// `engine`, each refusing requests past `--max-request-bytes`, with
    /// TLS when `tls` is given and the token table of `tokens` (`None`:
    /// authentication off). Streams end when `shutdown` is cancelled.
    pub(super) fn new(
        config: &Config,
        engine: &Engine,
        health: HealthServer<impl Health>,
        tokens: Option<crate::config::TenantTokens>,
        tls: Option<TlsPem>,
        shutdown: &CancellationToken,
    ) -> Result<Serving, AppError> {
        let reflection = || {
            tonic_reflection::server::Builder::configure()
                .register_encoded_file_descriptor_set(pb::FILE_DESCRIPTOR_SET)
                .register_encoded_file_descriptor_set(tonic_health::pb::FILE_DESCRIPTOR_SET)
        };
        let reflection_v1 = reflection()
            .build_v1()
            .map_err(|e| AppError::Startup(e.to_string()))?;
        let reflection_v1alpha = reflection()
            .build_v1alpha()
            .map_err(|e| AppError::Startup(e.to_string()))?;
        let max_request = config.max_request_bytes();
        let routes = Routes::new(health)
            .add_service(reflection_v1)
            .add_service(reflection_v1alpha)
            .add_service(
                EventServiceServer::new(EventApi::new(engine.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                MemoryServiceServer::new(MemoryApi::new(engine.clone(), shutdown.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                SettingsServiceServer::new(SettingsApi::new(engine.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                InjectionServiceServer::new(InjectionApi::new(engine.clone(), shutdown.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                PromptServiceServer::new(PromptApi::new(engine.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                RecapServiceServer::new(RecapApi::new(engine.clone(), shutdown.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                LorebookServiceServer::new(LorebookApi::new(engine.clone()))
                    .max_decoding_message_size(max_request),
            )
            .add_service(
                RecallServiceServer::new(RecallApi::new(engine.clone()))
                    .max_decoding_message_size(max_request),
            );
        let tls = tls.map(|TlsPem { cert, key }| {
            ServerTlsConfig::new().identity(tonic::transport::Identity::from_pem(cert, key))
        });
        Ok(Serving {
            routes,
            tokens: tokens.map(|tokens| TokenTable::new(tokens.iter())),
            tls,
            max_streams: config.max_streams_per_connection,
        })
    }

    /// A server with TLS when configured, HTTP/1.1 accepted beside HTTP/2
    /// (browsers' gRPC-Web over plain HTTP is HTTP/1.1), and `front`,
    /// observation and authentication in front of every route.
    fn router<Front: Clone>(&self, front: Front) -> Result<Router<Layers<Front>>, AppError> {
        let mut server = Server::builder();
        if let Some(tls) = &self.tls {
            server = server
                .tls_config(tls.clone())
                .map_err(|e| AppError::Startup(format!("TLS: {e}")))?;
        }
        Ok(server
            .accept_http1(true)
            .max_concurrent_streams(self.max_streams)
            .layer(front)
            .layer(ObserveLayer)
            .layer(AuthLayer::new(self.tokens.clone()))
            .add_routes(self.routes.clone()))
    }

    /// The gRPC listener's router: gRPC, and gRPC-Web whose browser calls
    /// from other origins are allowed for `config`'s allowed origins only.
    pub(super) fn grpc(&self, config: &Config) -> Result<GrpcRouter, AppError> {
        self.router(GrpcWebFront::new(
            &config.web.allowed_hosts,
            &config.web.grpc_web_allowed_origins,
        ))
    }

    /// The inspector listener's router, for an inspector bound at `addr`.
    pub(super) fn inspector(&self, addr: SocketAddr) -> Result<InspectorRouter, AppError> {
        self.router(Stack::new(GrpcWebLayer::new(), InspectorLayer::new(addr)))
    }
}
