//! `recap.v1.LorebookService`: a tenant's lorebooks (SillyTavern World
//! Info files) and their entries, and ScanWorldInfo (`scan`). Each request
//! is checked, handed to the lorebooks (ScanWorldInfo: to the engine, for
//! it reads a chat) in the caller's tenant, and answered;
//! errors go through the one table (`grpc::status`).

mod convert;
mod scan;

use tonic::{Request, Response, Status};

use super::pb;
use super::pb::lorebook_service_server::LorebookService;
use super::services::split;
use super::status::domain_status;
use crate::engine::{Engine, Lorebooks};

/// `recap.v1.LorebookService`.
#[derive(Clone)]
pub struct LorebookApi {
    /// The books, for every request but ScanWorldInfo.
    books: Lorebooks,
    /// The engine, for ScanWorldInfo (a chat's activation).
    engine: Engine,
}

impl LorebookApi {
    /// Serves the lorebooks kept by `engine`.
    pub fn new(engine: Engine) -> Self {
        LorebookApi {
            books: engine.lorebooks().clone(),
            engine,
        }
    }
}

#[tonic::async_trait]
impl LorebookService for LorebookApi {
    async fn import_lorebook(
        &self,
        request: Request<pb::ImportLorebookRequest>,
    ) -> Result<Response<pb::Lorebook>, Status> {
        let (tenant, pb::ImportLorebookRequest { name, json }) = split(request);
        let book = self.books.import_lorebook(&tenant, &name, json).await?;
        Ok(Response::new(book.into()))
    }

    async fn import_character_book(
        &self,
        request: Request<pb::ImportCharacterBookRequest>,
    ) -> Result<Response<pb::Lorebook>, Status> {
        let (tenant, pb::ImportCharacterBookRequest { name, card }) = split(request);
        let book = self
            .books
            .import_character_book(&tenant, &name, card)
            .await?;
        Ok(Response::new(book.into()))
    }

    async fn export_lorebook(
        &self,
        request: Request<pb::ExportLorebookRequest>,
    ) -> Result<Response<pb::ExportLorebookResponse>, Status> {
        let (tenant, pb::ExportLorebookRequest { name }) = split(request);
        let json = self.books.export_lorebook(&tenant, &name).await?;
        Ok(Response::new(pb::ExportLorebookResponse { json }))
    }

    async fn list_lorebooks(
        &self,
        request: Request<pb::ListLorebooksRequest>,
    ) -> Result<Response<pb::ListLorebooksResponse>, Status> {
        let (
            tenant,
            pb::ListLorebooksRequest {
                page_size,
                page_token,
            },
        ) = split(request);
        let limit = super::convert::page_size(page_size).map_err(domain_status)?;
        let after = convert::page_after(&page_token).map_err(domain_status)?;
        // One more than the page, to know whether another page follows.
        let mut books = self
            .books
            .list_lorebooks(&tenant, after.as_deref(), limit + 1)
            .await?;
        let next_page_token = if books.len() > limit {
            books.truncate(limit);
            books
                .last()
                .map(|last| convert::page_token(&last.name))
                .unwrap_or_default()
        } else {
            String::new()
        };
        Ok(Response::new(pb::ListLorebooksResponse {
            lorebooks: books.into_iter().map(Into::into).collect(),
            next_page_token,
        }))
    }

    async fn delete_lorebook(
        &self,
        request: Request<pb::DeleteLorebookRequest>,
    ) -> Result<Response<pb::DeleteLorebookResponse>, Status> {
        let (tenant, pb::DeleteLorebookRequest { name }) = split(request);
        self.books.delete_lorebook(&tenant, &name).await?;
        Ok(Response::new(pb::DeleteLorebookResponse {}))
    }

    async fn get_lorebook_entry(
        &self,
        request: Request<pb::GetLorebookEntryRequest>,
    ) -> Result<Response<pb::LorebookEntry>, Status> {
        let (tenant, pb::GetLorebookEntryRequest { name, uid }) = split(request);
        let entry = self.books.lorebook_entry(&tenant, &name, &uid).await?;
        Ok(Response::new(entry.into()))
    }

    async fn put_lorebook_entry(
        &self,
        request: Request<pb::PutLorebookEntryRequest>,
    ) -> Result<Response<pb::LorebookEntry>, Status> {
        let (tenant, pb::PutLorebookEntryRequest { name, uid, fields }) = split(request);
        let uid = (!uid.is_empty()).then_some(uid.as_str());
        let entry = self
            .books
            .put_lorebook_entry(&tenant, &name, uid, &fields)
            .await?;
        Ok(Response::new(entry.into()))
    }

    async fn delete_lorebook_entry(
        &self,
        request: Request<pb::DeleteLorebookEntryRequest>,
    ) -> Result<Response<pb::Lorebook>, Status> {
        let (tenant, pb::DeleteLorebookEntryRequest { name, uid }) = split(request);
        let book = self
            .books
            .delete_lorebook_entry(&tenant, &name, &uid)
            .await?;
        Ok(Response::new(book.into()))
    }

    async fn scan_world_info(
        &self,
        request: Request<pb::ScanWorldInfoRequest>,
    ) -> Result<Response<pb::ScanWorldInfoResponse>, Status> {
        let (tenant, request) = split(request);
        scan::scan_world_info(&self.engine, tenant, request)
            .await
            .map(Response::new)
    }
}
