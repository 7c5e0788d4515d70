//! Wiring details a client sees: Nagle off on accepted connections, health per service.

use tokio_stream::StreamExt;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_server::Health as _;
use tonic_health::pb::{HealthCheckRequest, HealthCheckResponse};
use tonic_health::server::HealthService;

use super::*;
use tokio::net::TcpListener;

async fn check(health: &HealthService, service: &str) -> Result<ServingStatus, tonic::Code> {
    health
        .check(tonic::Request::new(HealthCheckRequest {
            service: service.to_owned(),
        }))
        .await
        .map(|answer| HealthCheckResponse::status(answer.get_ref()))
        .map_err(|status| status.code())
}

#[tokio::test]
async fn accepted_connections_send_small_frames_at_once() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut incoming = accepting(listener);
    let _client = tokio::net::TcpStream::connect(addr).await.unwrap();
    let accepted = incoming.next().await.unwrap().unwrap();
    assert!(accepted.nodelay().unwrap(), "Nagle's algorithm is on");
}

#[tokio::test]
async fn health_names_each_proto_service_serving_then_not_serving() {
    const PROTO_SERVICES: [&str; 8] = [
        "recap.v1.EventService",
        "recap.v1.MemoryService",
        "recap.v1.SettingsService",
        "recap.v1.InjectionService",
        "recap.v1.PromptService",
        "recap.v1.RecapService",
        "recap.v1.LorebookService",
        "recap.v1.RecallService",
    ];
    let reporter = HealthReporter::new();
    let health = HealthService::from_health_reporter(reporter.clone());
    set_services_serving(&reporter).await;
    assert_eq!(check(&health, "").await, Ok(ServingStatus::Serving));
    for name in PROTO_SERVICES {
        assert_eq!(
            check(&health, name).await,
            Ok(ServingStatus::Serving),
            "{name}"
        );
    }
    assert_eq!(
        check(&health, "recap.v1.Nothing").await,
        Err(tonic::Code::NotFound)
    );
    set_all_not_serving(&reporter).await;
    for name in std::iter::once("").chain(PROTO_SERVICES) {
        assert_eq!(
            check(&health, name).await,
            Ok(ServingStatus::NotServing),
            "{name:?}"
        );
    }
}
