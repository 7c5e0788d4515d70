#![forbid(unsafe_code)]
#![deny(missing_docs)]
//! recapd: ST-Auto-Recap's long-term memory injection as a gRPC sidecar.
//!
//! A chat backend reports what happens in its chats and stores the recaps
//! its LLM writes; recapd keeps it durably, runs `refresh_memory` on the
//! right triggers and pushes each new injection to subscribers.
//!
//! # A tour of the layout
//!
//! The layers depend downwards only:
//!
//! - [`grpc`]: the eight `recap.v1` services, over gRPC and, for browsers,
//!   gRPC-Web ([`grpc::web`]). Each call is checked and
//!   converted ([`grpc::convert`]), handed to the engine, and any error goes
//!   through the one status table ([`grpc::status`]).
//! - [`engine`]: per-chat ordering (one async lock per chat), immediate and
//!   debounced refreshes, the commit of every change with its refresh,
//!   fan-out to subscribers, the job queue of recaps recapd writes with an
//!   LLM (its runner, claims under fences, staleness checks), the chats
//!   held in memory kept within a byte budget (least recently used out,
//!   reloaded on demand), chat deletion with its tombstones and the
//!   retention of quiet chats, and, with a shared store, following the
//!   other replicas' commits. Its parts are handles of their own, each
//!   holding only the parts below it: [`engine::Lorebooks`], the job
//!   queue's state, [`engine::Chats`] (the chats and their one update
//!   path), [`engine::JobDriver`] (the job requests and runners) and
//!   [`engine::WorldInfo`]; [`engine::Engine`] is the facade that hands
//!   them out.
//! - [`store`]: two async traits, [`store::ChatStore`] (chat state and
//!   group commit; both stores) and [`store::ReplicaStore`] (the feed of
//!   other replicas' commits; PostgreSQL only), the embedded SQLite store,
//!   and the PostgreSQL store that several replicas share.
//! - [`domain`]: the pure rules (events, settings, auto-hide, inclusion,
//!   template, refresh), free of transport, runtime and storage: the crate
//!   `recapd-domain` (`crates/domain`), whose dependencies the compiler
//!   checks, re-exported here under this name. Keys are
//!   typed there ([`domain::ids::ChatKey`], [`domain::ids::Tenant`]) and
//!   carried from the RPC layer down to the rows.
//!
//! Around them: [`config`] reads flags and `RECAPD_*` variables and, once
//! at start-up, the files they name; [`auth`] checks bearer tokens and
//! gives each call its tenant; [`inspector`] serves the inspector's web
//! page, which calls the same services over gRPC-Web; [`telemetry`] serves
//! the metrics;
//! [`llm`] sends one request to an OpenAI-compatible LLM and judges its
//! failure retryable or fatal; [`wall_clock`] is the one wall clock (tests
//! hand the engine one they set); [`model_tokenizers`] loads the model
//! tokenizers (`tokenizer.json`) chats may count with; [`tls_common`] holds what the TLS
//! clients share; and [`app::App`] wires everything together (tests build it on port 0).
//!
//! Apart from the server: [`cli`] holds the client side of the tool
//! subcommands (`recapd health`, `import`, `export`), which dial a running
//! recapd like any client. `main.rs` only parses, then serves and waits for
//! a signal or runs a tool.

pub mod app;
pub mod auth;
pub mod cli;
pub mod config;
pub mod wall_clock;
/// The pure rules, a crate of their own ([`recapd_domain`]), kept at this
/// path so that `crate::domain::...` names them as before.
pub use recapd_domain as domain;
pub mod engine;
pub mod error_id;
pub mod grpc;
pub mod inspector;
pub mod llm;
pub mod model_tokenizers;
pub mod store;
pub mod telemetry;
pub mod tls_common;
pub mod web_host;
