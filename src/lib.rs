#![forbid(unsafe_code)]
//! recapd: ST-Auto-Recap's long-term memory injection as a gRPC sidecar.
pub mod domain;
pub mod store;
