//! `recapd health`: a probe for container health checks, so no separate
//! probe binary is needed.

use std::process::ExitCode;
use std::time::Duration;

use super::connect::Dial;
use tonic_health::pb::HealthCheckRequest;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

/// How long the probe waits for the connection and the answer together.
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Asks the server at `addr` (plaintext or TLS, see [`super::connect`])
/// for its overall health; exit 0 when it is SERVING, 1 otherwise (with
/// the reason on stderr).
pub async fn probe(addr: &Dial) -> ExitCode {
    match tokio::time::timeout(PROBE_TIMEOUT, check(addr)).await {
        Ok(Ok(ServingStatus::Serving)) => {
            println!("SERVING");
            ExitCode::SUCCESS
        }
        Ok(Ok(status)) => {
            println!("{}", status.as_str_name());
            ExitCode::FAILURE
        }
        Ok(Err(error)) => {
            eprintln!("recapd health: {addr}: {error}");
            ExitCode::FAILURE
        }
        Err(_) => {
            eprintln!(
                "recapd health: {addr}: no answer within {} s",
                PROBE_TIMEOUT.as_secs()
            );
            ExitCode::FAILURE
        }
    }
}

async fn check(addr: &Dial) -> Result<ServingStatus, String> {
    let channel = addr.channel().await?;
    let answer = HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map_err(|status| status.to_string())?;
    Ok(answer.into_inner().status())
}
