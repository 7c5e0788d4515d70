//! The lorebook a chat's lore jobs write ([`crate::domain::lore`]): held
//! under the book's lock while a job's answer is applied, written in the
//! same commit as the job's end (so a result lands once, or not at all),
//! and cached once that commit is durable.
//!
//! The book's name: the chat's `world_info_chat_book` when it names one
//! (recapd then writes into that book and never deletes it); otherwise a
//! new book named by `lore_book_name_template`, created by the first lore
//! job that has something to write, attached as the chat's book, and
//! deleted with the chat when `lore_delete_book_with_chat` is on.

use std::sync::Arc;

use super::shelf::{BookGuard, BookKey, Loaded};
use super::{Lorebooks, MAX_NAME_BYTES, check_name, fresh_version};
use crate::domain::DomainError;
use crate::domain::ids::{ChatKey, Tenant};
use crate::domain::time::UnixMicros;
use crate::domain::world_info::book::Book;
use crate::domain::writing::macros::{CHAR, USER, expand};
use crate::engine::EngineError;
use crate::store::{DeleteLorebook, LorebookText, NO_LOREBOOK, PutLorebook, Write};

/// `{{chat}}` in `lore_book_name_template`: the chat's id.
const CHAT: &str = "chat";

/// How many names a new book tries (`name`, `name (2)`, ...) when another
/// book already has the template's name.
const NAME_ATTEMPTS: u32 = 100;

/// A chat's book, locked, as stored when the lock was taken.
pub(in crate::engine) struct HeldBook<'a> {
    /// The book's lock (and, for a book still to be created, the tenant's
    /// lock of new books, so that two new books cannot both take the last
    /// place under `--max-lorebooks-per-tenant`).
    _guards: (BookGuard<'a>, Option<BookGuard<'a>>),
    key: BookKey,
    loaded: Option<Loaded>,
}

impl HeldBook<'_> {
    /// The book's name.
    pub(in crate::engine) fn name(&self) -> &str {
        &self.key.1
    }

    /// The book as stored; `None` when it does not exist yet.
    pub(in crate::engine) fn book(&self) -> Option<&Arc<Book>> {
        self.loaded.as_ref().map(|l| &l.book)
    }

    /// The write that makes `book` the book's new state, and what to cache
    /// once that write is durable ([`Lorebooks::keep_written_book`]).
    pub(in crate::engine) fn write(&self, book: Book, now: UnixMicros) -> (Write, WrittenBook) {
        let expect = self.loaded.as_ref().map_or(NO_LOREBOOK, |l| l.version);
        let version = fresh_version(expect);
        let text: Arc<str> = book.to_json().into();
        let entry_count = u64::try_from(book.entry_count()).unwrap_or(u64::MAX);
        let bytes = text.len();
        let write = Write::Lorebook(PutLorebook {
            tenant: self.key.0.clone(),
            name: self.key.1.clone(),
            json: LorebookText(text),
            entry_count,
            updated_us: now,
            expect_version: expect,
            version,
        });
        let written = WrittenBook {
            key: self.key.clone(),
            loaded: Loaded {
                version,
                book: Arc::new(book),
                updated_us: now,
                bytes,
                log_bytes: 0,
            },
        };
        (write, written)
    }
}

/// A book being deleted with its chat, locked until the deletion is
/// durable.
pub(in crate::engine) struct BookDeletion<'a> {
    /// The deletion, for the erasure's commit.
    pub(in crate::engine) write: Write,
    guard: BookGuard<'a>,
    key: BookKey,
}

impl BookDeletion<'_> {
    /// The deletion is durable: the book's cached state goes, then its lock.
    pub(in crate::engine) fn done(self) {
        let BookDeletion {
            write: _,
            guard,
            key,
        } = self;
        guard.shelf().forget(&key);
    }
}

/// A book state committed with a job's end, to cache once the commit is
/// durable (under the book's lock, still held).
pub(in crate::engine) struct WrittenBook {
    key: BookKey,
    loaded: Loaded,
}

/// The name `lore_book_name_template` gives a chat's book: its macros
/// replaced, control characters made spaces, trimmed, cut to a valid
/// name's length; the chat's id when that leaves nothing.
pub(in crate::engine) fn templated_name(
    template: &str,
    chat: &ChatKey,
    user: &str,
    char: &str,
) -> String {
    let name = expand(template, &[(CHAR, char), (USER, user), (CHAT, &chat.id)]);
    let name: String = name
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let name = clip_bytes(name.trim(), MAX_NAME_BYTES);
    if name.is_empty() {
        clip_bytes(&format!("recapd lore - {}", chat.id), MAX_NAME_BYTES).to_owned()
    } else {
        name.to_owned()
    }
}

/// The longest prefix of `text` of at most `max` bytes that ends on a
/// character boundary.
fn clip_bytes(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].trim_end()
}

impl Lorebooks {
    /// Locks the book `name` of `tenant` and reads it (the cache serves it
    /// when current). A book that does not exist may be created by the
    /// caller: the tenant's lock of new books is then taken too, and
    /// RESOURCE_EXHAUSTED answered at `--max-lorebooks-per-tenant`.
    pub(in crate::engine) async fn hold_book(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<HeldBook<'_>, EngineError> {
        check_name(name)?;
        let key: BookKey = (tenant.clone(), name.to_owned());
        let guard = self.inner.shelf.lock(&key).await;
        // The stored version is read even with one writer: an answer that
        // lost a race is applied again on the book as stored, never on a
        // cached state that may have fallen behind.
        let loaded = match self.stored_version(&key).await? {
            NO_LOREBOOK => {
                self.inner.shelf.forget(&key);
                None
            }
            version => match self.inner.shelf.cached(&key, Some(version)) {
                Some(hit) => Some(hit),
                None => self.fetch_locked(&key).await?,
            },
        };
        let counting = match &loaded {
            None => Some(self.new_book_place(tenant).await?),
            Some(_) => None,
        };
        Ok(HeldBook {
            _guards: (guard, counting),
            key,
            loaded,
        })
    }

    /// The book `name` of `tenant` as stored now, if any (for a request's
    /// prompt; its answer is applied on the book as it is then).
    pub(in crate::engine) async fn book_now(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<Arc<Book>>, EngineError> {
        if check_name(name).is_err() {
            return Ok(None);
        }
        let key: BookKey = (tenant.clone(), name.to_owned());
        Ok(self.current(&key).await?.map(|l| l.book))
    }

    /// A name for a new book of `tenant`: `wanted`, or `wanted (2)`,
    /// `wanted (3)`... when a book of that name exists.
    pub(in crate::engine) async fn free_book_name(
        &self,
        tenant: &Tenant,
        wanted: &str,
    ) -> Result<String, EngineError> {
        for n in 1..=NAME_ATTEMPTS {
            let name = if n == 1 {
                wanted.to_owned()
            } else {
                let suffix = format!(" ({n})");
                format!(
                    "{}{suffix}",
                    clip_bytes(wanted, MAX_NAME_BYTES - suffix.len())
                )
            };
            let taken = self
                .inner
                .store
                .lorebook_versions(tenant, std::slice::from_ref(&name))
                .await?;
            if taken.is_empty() {
                return Ok(name);
            }
        }
        Err(DomainError::FailedPrecondition(format!(
            "no free lorebook name like {wanted:?} (lore_book_name_template)"
        ))
        .into())
    }

    /// Caches a book state whose commit is durable.
    pub(in crate::engine) fn keep_written_book(&self, written: WrittenBook) {
        let WrittenBook { key, loaded } = written;
        self.inner.shelf.keep(key, loaded);
    }

    /// Book `name` of `tenant` locked for its deletion in a chat's
    /// erasure: the write that deletes it as stored now (`None`: there is
    /// no such book). Once the erasure is durable, [`BookDeletion::done`]
    /// forgets its cached state, under its lock still.
    pub(in crate::engine) async fn book_deletion(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<Option<BookDeletion<'_>>, EngineError> {
        if check_name(name).is_err() {
            return Ok(None);
        }
        let key: BookKey = (tenant.clone(), name.to_owned());
        let guard = self.inner.shelf.lock(&key).await;
        let versions = self
            .inner
            .store
            .lorebook_versions(tenant, &[name.to_owned()])
            .await?;
        Ok(versions.first().map(|(_, version)| BookDeletion {
            write: Write::DeleteLorebook(DeleteLorebook {
                tenant: tenant.clone(),
                name: name.to_owned(),
                expect_version: *version,
            }),
            guard,
            key,
        }))
    }
}
