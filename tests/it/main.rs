//! The integration tests, one binary: each module is one area (run one with
//! `cargo test --test it MODULE::`), and `common` is the harness they share.

mod common;

mod api_budgets;
mod api_enable_debounce;
mod api_events;
mod api_inclusion;
mod api_message_data;
mod api_settings;
mod api_subscribe;
mod chat_lifecycle;
mod cli_chats;
mod cli_durations;
mod cli_tls;
mod crash;
mod doc_links;
mod errors;
mod ghz_configs;
mod grpc_web;
mod hostile;
mod limits;
mod llm_client;
mod llm_live;
mod lore;
mod lorebooks;
mod message_tier;
mod metrics;
mod pg_restart;
mod prompt;
mod push_and_persistence;
mod recall;
mod recap_jobs;
mod replicas;
mod residency;
mod settings_import;
mod shutdown;
mod slow_subscribers;
mod st_import;
mod st_roundtrip;
mod st_stream;
mod store_jobs;
mod tenants;
mod tls_postgres;
mod upgrade;
mod world_info;
mod world_info_import;
