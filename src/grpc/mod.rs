//! The gRPC face of recapd: the generated code behind [`pb`], one service
//! implementation per proto service, the wire conversions and the error table.

pub mod convert;
mod files;
mod injection;
mod lorebook;
pub mod observe;
mod profiles;
mod prompt;
mod recall;
mod recap;
mod services;
pub mod status;
mod stream;
pub mod web;
pub mod wire;

pub use injection::InjectionApi;
pub use lorebook::LorebookApi;
pub use prompt::PromptApi;
pub use recall::RecallApi;
pub use recap::{JobStream, RecapApi};
pub use services::{EventApi, MemoryApi, SettingsApi};
pub use stream::InjectionStream;

/// Code generated from `proto/recap/v1/recap.proto`.
#[allow(missing_docs, clippy::all, clippy::pedantic)]
pub mod pb {
    tonic::include_proto!("recap.v1");

    /// The encoded descriptors of `recap.v1` (and its imports), for reflection.
    pub const FILE_DESCRIPTOR_SET: &[u8] =
        tonic::include_file_descriptor_set!("recap_v1_descriptor");
}
