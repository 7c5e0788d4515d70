//! ScanWorldInfo: one World Info activation for a chat. Its body is
//! written with the scan (issue 29's activation part); until then the RPC
//! answers UNIMPLEMENTED.

use tonic::Status;

use crate::auth::Tenant;
use crate::engine::Engine;
use crate::grpc::pb;

/// Serves one ScanWorldInfo request of `tenant`.
pub(super) async fn scan_world_info(
    _engine: &Engine,
    _tenant: Tenant,
    _request: pb::ScanWorldInfoRequest,
) -> Result<pb::ScanWorldInfoResponse, Status> {
    Err(Status::unimplemented("ScanWorldInfo"))
}
