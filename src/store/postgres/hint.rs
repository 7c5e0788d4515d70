//! The payload of a change notification: which replica committed, which
//! chats reached which claim clocks, which tenants' global settings changed.

use serde::{Deserialize, Serialize};

use crate::domain::ids::{ChatKey, Tenant};
use crate::store::{Change, StoreError};

/// Longest `NOTIFY` payload sent; PostgreSQL refuses 8000 bytes and more. A
/// batch that names more says "resync" instead.
pub(super) const MAX_PAYLOAD: usize = 7000;

/// A notification's payload: who committed, and what changed.
#[derive(Debug, Default, Serialize, Deserialize, PartialEq, Eq)]
pub(super) struct Hint {
    pub replica: String,
    /// (tenant, chat id, claim clock) of each chat the batch claimed.
    #[serde(default)]
    pub chats: Vec<(String, String, u64)>,
    /// Tenants whose global settings the batch changed.
    #[serde(default)]
    pub tenants: Vec<String>,
    /// Too much changed to name: re-read everything.
    #[serde(default)]
    pub all: bool,
}

impl Hint {
    /// The hint as payloads of at most [`MAX_PAYLOAD`] bytes: one, or the
    /// chats spread over several (one `NOTIFY` each) when they are many.
    pub fn encode(self) -> Result<Vec<String>, StoreError> {
        let json = |hint: &Hint| {
            serde_json::to_string(hint).map_err(|e| StoreError::corrupt("notification", e))
        };
        let whole = json(&self)?;
        if whole.len() <= MAX_PAYLOAD {
            return Ok(vec![whole]);
        }
        let empty = |tenants: Vec<String>| Hint {
            replica: self.replica.clone(),
            tenants,
            ..Hint::default()
        };
        let mut payloads = Vec::new();
        let mut part = empty(self.tenants.clone());
        let mut size = json(&part)?.len();
        for chat in self.chats {
            // Each entry costs its JSON and a comma.
            let entry = serde_json::to_string(&chat)
                .map_err(|e| StoreError::corrupt("notification", e))?
                .len()
                + 1;
            if size + entry > MAX_PAYLOAD && !part.chats.is_empty() {
                payloads.push(json(&part)?);
                part = empty(Vec::new());
                size = json(&part)?.len();
            }
            size += entry;
            part.chats.push(chat);
        }
        payloads.push(json(&part)?);
        Ok(payloads)
    }

    /// The changes a hint tells another replica.
    pub fn into_changes(self) -> Vec<Change> {
        if self.all {
            return vec![Change::Resync];
        }
        let mut changes = Vec::new();
        if !self.tenants.is_empty() {
            changes.push(Change::GlobalSettings(
                self.tenants.into_iter().map(Tenant).collect(),
            ));
        }
        if !self.chats.is_empty() {
            changes.push(Change::Chats(
                self.chats
                    .into_iter()
                    .map(|(tenant, id, clock)| {
                        (
                            ChatKey {
                                tenant: Tenant(tenant),
                                id,
                            },
                            clock,
                        )
                    })
                    .collect(),
            ));
        }
        changes
    }
}

#[cfg(test)]
mod tests;
