#![forbid(unsafe_code)]
//! recapd: ST-Auto-Recap's long-term memory injection as a gRPC sidecar.
pub mod app;
pub mod config;
pub mod domain;
pub mod engine;
pub mod grpc;
pub mod store;
