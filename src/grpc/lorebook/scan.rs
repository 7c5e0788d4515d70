//! ScanWorldInfo: one World Info activation for a chat, checked and
//! converted here, run by the engine ([`crate::engine::WorldInfo::scan_world_info`]).

use tonic::Status;

use crate::auth::Tenant;
use crate::engine::{Engine, ScanRequest};
use crate::grpc::convert::{prompt, world_info};
use crate::grpc::pb;
use crate::grpc::services::scoped;
use crate::grpc::status::domain_status;

/// Serves one ScanWorldInfo request of `tenant`.
pub(super) async fn scan_world_info(
    engine: &Engine,
    tenant: Tenant,
    request: pb::ScanWorldInfoRequest,
) -> Result<pb::ScanWorldInfoResponse, Status> {
    let pb::ScanWorldInfoRequest {
        chat_id,
        generation_type,
        dry_run,
        seed,
        history,
        extra,
        texts,
    } = request;
    let chat = scoped(&tenant, &chat_id)?;
    let limits = engine.limits();
    let request = ScanRequest {
        generation_type: world_info::generation_type(&generation_type).map_err(domain_status)?,
        dry_run,
        seed,
        history: prompt::history(history, true, limits).map_err(domain_status)?,
        // The answer names the activated entries, not the history.
        whole_history: false,
        extra: prompt::extension_prompts(extra, limits).map_err(domain_status)?,
        texts: world_info::texts(texts, limits).map_err(domain_status)?,
    };
    let scan = engine.world_info().scan_world_info(&chat, &request).await?;
    Ok(world_info::scan_response(&scan.activated, &scan.placement))
}
