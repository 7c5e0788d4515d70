//! One entry at a time: GetLorebookEntry, PutLorebookEntry and
//! DeleteLorebookEntry, each edit a read-modify-write of the book under
//! its lock, done again on the new book when another replica's change won
//! the race. An edit costs what its entry costs: the parsed book is
//! copied sharing every entry's text, the one entry is rewritten, and the
//! store is sent that entry alone (the whole book once in a while, when
//! the edits stored pass the book's size; see the parent module).

use std::sync::Arc;

use super::{
    BookKey, BookWrite, LorebookEntry, LorebookSummary, Lorebooks, blocking, check_name,
    naming_the_flag, unknown_book,
};
use crate::domain::DomainError;
use crate::domain::ids::Tenant;
use crate::domain::world_info::book::Book;
use crate::engine::EngineError;
use crate::engine::retry::Retry;

impl Lorebooks {
    /// GetLorebookEntry.
    pub async fn lorebook_entry(
        &self,
        tenant: &Tenant,
        name: &str,
        uid: &str,
    ) -> Result<LorebookEntry, EngineError> {
        check_name(name)?;
        let key: BookKey = (tenant.clone(), name.to_owned());
        let loaded = self
            .current(&key)
            .await?
            .ok_or_else(|| unknown_book(name))?;
        let json = loaded
            .book
            .entry(uid)
            .map(|e| e.get().to_owned())
            .ok_or_else(|| {
                EngineError::from(DomainError::NotFound(format!(
                    "entry {uid:?} of lorebook {name:?}"
                )))
            })?;
        Ok(LorebookEntry {
            uid: uid.to_owned(),
            json,
            book: LorebookSummary {
                name: name.to_owned(),
                entry_count: u64::try_from(loaded.book.entry_count()).unwrap_or(u64::MAX),
                updated_us: loaded.updated_us,
            },
        })
    }

    /// Applies `edit` to the stored book and writes the entry it changed,
    /// under the book's lock, again on the new book when another
    /// replica's change won the race. `edit` returns what the caller
    /// answers with and the uid of the one entry it changed.
    async fn edit_book<T: Send + 'static>(
        &self,
        tenant: &Tenant,
        name: &str,
        edit: impl Fn(&mut Book) -> Result<(T, String), DomainError> + Clone + Send + 'static,
    ) -> Result<(T, LorebookSummary), EngineError> {
        check_name(name)?;
        let key: BookKey = (tenant.clone(), name.to_owned());
        let _locked = self.inner.shelf.lock(&key).await;
        let (key, edit) = (&key, &edit);
        Retry::BOOKS
            .run(move || async move {
                let loaded = self
                    .load_locked(key)
                    .await?
                    .ok_or_else(|| unknown_book(name))?;
                let edit = edit.clone();
                let log_bytes = loaded.log_bytes;
                let (answer, book, write) = blocking(move || {
                    let mut book = (*loaded.book).clone();
                    let (answer, uid) = edit(&mut book)?;
                    let entry = book.entry(&uid).map(|e| e.get().to_owned());
                    let edit_bytes = uid.len() + entry.as_ref().map_or(0, String::len);
                    let stored_bytes = usize::try_from(log_bytes).unwrap_or(usize::MAX);
                    // Compaction: once the edits stored would pass the
                    // book's own size, the book is written whole and they
                    // are dropped.
                    let write = if stored_bytes.saturating_add(edit_bytes) > book.file_bytes() {
                        BookWrite::Whole(book.to_json().into())
                    } else {
                        BookWrite::Entry { uid, entry }
                    };
                    Ok((answer, Arc::new(book), write))
                })
                .await?;
                self.write_locked(key, loaded.version, book, write, log_bytes)
                    .await
                    .map(|summary| (answer, summary))
            })
            .await
    }

    /// PutLorebookEntry: creates (`uid` `None`: at the lowest free uid) or
    /// updates one entry from `fields` (a JSON object in SillyTavern's
    /// field names), under the lorebook limits.
    pub async fn put_lorebook_entry(
        &self,
        tenant: &Tenant,
        name: &str,
        uid: Option<&str>,
        fields: &str,
    ) -> Result<LorebookEntry, EngineError> {
        let limits = self.inner.limits.book;
        let (uid, fields) = (uid.map(str::to_owned), fields.to_owned());
        let ((uid, json), book) = self
            .edit_book(tenant, name, move |book| {
                let uid = book
                    .put_entry(uid.as_deref(), &fields, &limits)
                    .map_err(naming_the_flag)?;
                let json = book
                    .entry(&uid)
                    .map(|e| e.get().to_owned())
                    .unwrap_or_default();
                Ok(((uid.clone(), json), uid))
            })
            .await?;
        Ok(LorebookEntry { uid, json, book })
    }

    /// DeleteLorebookEntry.
    pub async fn delete_lorebook_entry(
        &self,
        tenant: &Tenant,
        name: &str,
        uid: &str,
    ) -> Result<LorebookSummary, EngineError> {
        let uid = uid.to_owned();
        let ((), book) = self
            .edit_book(tenant, name, move |book| {
                book.delete_entry(&uid).map(|()| ((), uid.clone()))
            })
            .await?;
        Ok(book)
    }
}
