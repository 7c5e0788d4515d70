//! Lorebooks (SillyTavern World Info files) a tenant keeps: import (of a
//! file, or of a character card's `character_book`), export, listing,
//! deletion and the editing of one entry, and the parsed books the scan
//! reads ([`Lorebooks::lorebooks_for_scan`]).
//!
//! [`Lorebooks`] is a part of its own: a handle over the store, the book
//! locks, the parsed-book cache and the lorebook limits. It knows no chat:
//! what a chat decides about books (its book's name, the book deleted
//! with it) its caller passes as arguments.
//!
//! A book is stored as the file's text (`Book::to_json`, JSON-equal to the
//! file imported) with a version (see `store::lorebooks`), and the entry
//! edits made since. An edit is a read-modify-write of the book under the
//! book's lock (`shelf::Shelf`), so edits of one book in this process
//! never lose one another; its write names the version it read, so an
//! edit racing one of another replica is done again on the new book (at
//! most 32 times in all, [`Retry::BOOKS`], then ABORTED). An entry's edit writes that
//! entry alone (`Write::LorebookEntry`), until the edits stored pass the
//! book's size: that edit writes the book whole (a compaction), so
//! reading a book costs at most about twice its size and an edit, over
//! time, what its entry costs. Parsed books are cached with
//! their version: with one writer (the embedded store) the cache is the
//! truth; with replicas each use first reads the stored versions (one
//! query for all the books a scan needs).

mod chat_book;
mod entries;
mod limits;
mod shelf;

use std::sync::Arc;

use crate::domain::DomainError;
use crate::domain::ids::Tenant;
use crate::domain::time::UnixMicros;
use crate::domain::world_info::book::{Book, BookLimits};
use crate::domain::world_info::card;
use crate::store::{
    ChatStore, DeleteLorebook, LorebookListing, LorebookText, NO_LOREBOOK, PutLorebook,
    PutLorebookEntry, StoreError, StoredLorebook, Write,
};
use crate::wall_clock::WallClock;

use super::EngineError;
use super::retry::Retry;
pub(super) use chat_book::{HeldBook, WrittenBook, templated_name};
pub use limits::{LorebookLimits, ScanPool};
use shelf::{BookGuard, BookKey, Loaded, Shelf};

/// The name of a tenant's lock of new books: a control character, which
/// no book's name holds.
const NEW_BOOKS: &str = "\u{0}new books";

/// Longest lorebook name, in bytes.
pub const MAX_NAME_BYTES: usize = 256;

/// What is read back from the store was checked when written: a stored
/// book is parsed without limits (an operator who lowers them keeps the
/// books already stored).
const STORED: BookLimits = BookLimits {
    max_entries: usize::MAX,
    max_key_bytes: usize::MAX,
    max_content_bytes: usize::MAX,
    max_book_bytes: usize::MAX,
};

/// A lorebook as listed and as answered after a change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LorebookSummary {
    /// Its name.
    pub name: String,
    /// Entries in its `entries` object.
    pub entry_count: u64,
    /// When it last changed, µs since the epoch.
    pub updated_us: UnixMicros,
}

impl From<LorebookListing> for LorebookSummary {
    fn from(listing: LorebookListing) -> Self {
        LorebookSummary {
            name: listing.name,
            entry_count: listing.entry_count,
            updated_us: listing.updated_us,
        }
    }
}

/// One entry of a book, and the book (after the change, for an edit).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LorebookEntry {
    /// The entry's uid (its key in `entries`).
    pub uid: String,
    /// The entry's JSON object text, as the book holds it.
    pub json: String,
    /// The book.
    pub book: LorebookSummary,
}

/// Refuses a lorebook name that is empty, longer than [`MAX_NAME_BYTES`]
/// or holds a control character (INVALID_ARGUMENT on `name`).
pub fn check_name(name: &str) -> Result<(), DomainError> {
    if name.is_empty() {
        return Err(DomainError::invalid("name", "is empty"));
    }
    if name.len() > MAX_NAME_BYTES {
        return Err(DomainError::invalid(
            "name",
            format!("is {} bytes, more than {MAX_NAME_BYTES}", name.len()),
        ));
    }
    if name.chars().any(char::is_control) {
        return Err(DomainError::invalid("name", "holds a control character"));
    }
    Ok(())
}

/// A book's limit refusal with the flag that sets the limit named, so the
/// caller (or its operator) knows what to raise.
pub(in crate::engine) fn naming_the_flag(error: DomainError) -> DomainError {
    let DomainError::ResourceExhausted(reason) = error else {
        return error;
    };
    let flag = if reason.contains("the book's file") {
        Some("--max-lorebook-bytes")
    } else if reason.contains("content of") {
        Some("--max-lorebook-content-bytes")
    } else if reason.contains("entries") {
        Some("--max-lorebook-entries")
    } else if reason.contains("bytes is longer") {
        Some("--max-lorebook-key-bytes")
    } else {
        None
    };
    DomainError::ResourceExhausted(match flag {
        Some(flag) => format!("{reason} ({flag})"),
        None => reason,
    })
}

/// The error for a book the tenant does not have.
fn unknown_book(name: &str) -> EngineError {
    DomainError::NotFound(format!("lorebook {name:?}")).into()
}

/// A new version for a book row: random below 2^63, never
/// [`NO_LOREBOOK`] nor the version it replaces.
fn fresh_version(replacing: u64) -> u64 {
    loop {
        let version = rand::random::<u64>() >> 1;
        if version != NO_LOREBOOK && version != replacing {
            return version;
        }
    }
}

/// Runs `work` (parsing or writing out a book of megabytes) off the async
/// workers.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, DomainError> + Send + 'static,
) -> Result<T, EngineError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(EngineError::from_join)?
        .map_err(EngineError::from)
}

/// A stored book read back: its text parsed (without limits, see
/// [`STORED`]) and its entry edits replayed in order.
fn read_stored(stored: &StoredLorebook) -> Result<Book, DomainError> {
    let mut book = Book::parse(&stored.json, &STORED)?;
    book.replay_edits(
        stored
            .edits
            .iter()
            .map(|(uid, entry)| (uid.as_str(), entry.as_deref())),
    )?;
    Ok(book)
}

/// What a write of a book stores: its whole text, or one entry's edit
/// (its uid and new text, `None` for a deletion).
enum BookWrite {
    Whole(Arc<str>),
    Entry { uid: String, entry: Option<String> },
}

/// The tenants' lorebooks: a handle over the store they are kept in, the
/// per-book locks, the parsed-book cache and the operator's lorebook
/// limits. Cheap to clone (one `Arc`), like mini-redis's `Db`: the locks
/// and the cache must be one per process, so the chats
/// ([`super::Chats`]) and `LorebookApi` each hold a clone of the same
/// handle (the job runners and World Info reach it through the chats).
/// It holds no chat: a lorebook never needs a chat's lock.
#[derive(Clone)]
pub struct Lorebooks {
    inner: Arc<Books>,
}

/// What a [`Lorebooks`] handle shares.
struct Books {
    /// Where the books are stored.
    store: Arc<dyn ChatStore>,
    /// Whether other replicas write the store too: the cache is then
    /// trusted only once the stored version is read and matches.
    shared: bool,
    /// The lorebook limits (`--max-lorebook*`).
    limits: LorebookLimits,
    /// The books' locks and parsed books.
    shelf: Shelf,
    /// The clock a book's `updated_us` is read from.
    wall_clock: Arc<dyn WallClock>,
}

impl Lorebooks {
    /// The lorebooks kept in `store` (`shared`: other replicas write it
    /// too) under `limits`, their changes timed by `wall_clock`.
    pub(super) fn new(
        store: Arc<dyn ChatStore>,
        shared: bool,
        limits: LorebookLimits,
        wall_clock: Arc<dyn WallClock>,
    ) -> Lorebooks {
        Lorebooks {
            inner: Arc::new(Books {
                store,
                shared,
                limits,
                shelf: Shelf::default(),
                wall_clock,
            }),
        }
    }

    /// The lorebook limits enforced.
    pub fn limits(&self) -> &LorebookLimits {
        &self.inner.limits
    }

    /// The tenant's lock of new books, held, once a new book is known to
    /// fit under `--max-lorebooks-per-tenant` (RESOURCE_EXHAUSTED when it
    /// does not). A new book is counted and written under this lock (taken
    /// after a book's lock, never before), so two new names at once in
    /// this process cannot both take the last place.
    async fn new_book_place(&self, tenant: &Tenant) -> Result<BookGuard<'_>, EngineError> {
        let counting = self
            .inner
            .shelf
            .lock(&(tenant.clone(), NEW_BOOKS.to_owned()))
            .await;
        let max = self.inner.limits.max_books_per_tenant;
        if self.inner.store.lorebook_count(tenant).await? >= max {
            return Err(DomainError::ResourceExhausted(format!(
                "a tenant keeps at most {max} lorebooks (--max-lorebooks-per-tenant)"
            ))
            .into());
        }
        Ok(counting)
    }

    /// The stored version of the book, [`NO_LOREBOOK`] when it has none.
    async fn stored_version(&self, key: &BookKey) -> Result<u64, EngineError> {
        let versions = self
            .inner
            .store
            .lorebook_versions(&key.0, std::slice::from_ref(&key.1))
            .await?;
        Ok(versions.first().map_or(NO_LOREBOOK, |(_, v)| *v))
    }

    /// Reads the book's row and parses it, caching the result. The
    /// caller holds the book's lock.
    async fn fetch_locked(&self, key: &BookKey) -> Result<Option<Loaded>, EngineError> {
        let Some(stored) = self.inner.store.lorebook(&key.0, &key.1).await? else {
            self.inner.shelf.forget(key);
            return Ok(None);
        };
        let listing = stored.listing.clone();
        let log_bytes = stored.log_bytes;
        let name = key.1.clone();
        let book = tokio::task::spawn_blocking(move || read_stored(&stored))
            .await
            .map_err(EngineError::from_join)?
            .map_err(|e| StoreError::corrupt(format!("lorebook {name:?}"), e))?;
        let loaded = Loaded {
            version: listing.version,
            bytes: book.file_bytes(),
            book: Arc::new(book),
            updated_us: listing.updated_us,
            log_bytes,
        };
        self.inner.shelf.keep(key.clone(), loaded.clone());
        Ok(Some(loaded))
    }

    /// The book as stored now (`None`: no such book); the caller holds its
    /// lock. The cache serves it when it is current: always with one
    /// writer, after reading the stored version with replicas.
    async fn load_locked(&self, key: &BookKey) -> Result<Option<Loaded>, EngineError> {
        let want = if self.inner.shared {
            match self.stored_version(key).await? {
                NO_LOREBOOK => {
                    self.inner.shelf.forget(key);
                    return Ok(None);
                }
                version => Some(version),
            }
        } else {
            None
        };
        match self.inner.shelf.cached(key, want) {
            Some(hit) => Ok(Some(hit)),
            None => self.fetch_locked(key).await,
        }
    }

    /// Writes `book` as the book's new state over the stored version
    /// `expect` ([`NO_LOREBOOK`]: a new book), as `write` says (the whole
    /// text, or one entry's edit on top of `log_bytes` of edits already
    /// stored), and caches it; the caller holds the book's lock.
    async fn write_locked(
        &self,
        key: &BookKey,
        expect: u64,
        book: Arc<Book>,
        write: BookWrite,
        log_bytes: u64,
    ) -> Result<LorebookSummary, EngineError> {
        let version = fresh_version(expect);
        let updated_us = self.inner.wall_clock.now();
        let entry_count = u64::try_from(book.entry_count()).unwrap_or(u64::MAX);
        let (write, log_bytes) = match write {
            BookWrite::Whole(text) => (
                Write::Lorebook(PutLorebook {
                    tenant: key.0.clone(),
                    name: key.1.clone(),
                    json: LorebookText(text),
                    entry_count,
                    updated_us,
                    expect_version: expect,
                    version,
                }),
                0,
            ),
            BookWrite::Entry { uid, entry } => {
                let put = PutLorebookEntry {
                    tenant: key.0.clone(),
                    name: key.1.clone(),
                    uid,
                    entry,
                    entry_count,
                    updated_us,
                    expect_version: expect,
                    version,
                };
                let log_bytes = log_bytes.saturating_add(put.log_bytes());
                (Write::LorebookEntry(put), log_bytes)
            }
        };
        self.inner.store.commit(vec![write]).await?;
        let loaded = Loaded {
            version,
            bytes: book.file_bytes(),
            book,
            updated_us,
            log_bytes,
        };
        self.inner.shelf.keep(key.clone(), loaded);
        Ok(LorebookSummary {
            name: key.1.clone(),
            entry_count,
            updated_us,
        })
    }

    /// Stores `book` under `name`, replacing a book of that name; a new
    /// name counts against `--max-lorebooks-per-tenant`.
    async fn replace_book(
        &self,
        tenant: &Tenant,
        name: &str,
        book: Book,
    ) -> Result<LorebookSummary, EngineError> {
        let key: BookKey = (tenant.clone(), name.to_owned());
        let _locked = self.inner.shelf.lock(&key).await;
        let (book, text) = blocking(move || {
            let text: Arc<str> = book.to_json().into();
            Ok((Arc::new(book), text))
        })
        .await?;
        let (key, book, text) = (&key, &book, &text);
        Retry::BOOKS
            .run(move || async move {
                let expect = self.stored_version(key).await?;
                let _counting = match expect {
                    NO_LOREBOOK => Some(self.new_book_place(tenant).await?),
                    _ => None,
                };
                self.write_locked(key, expect, book.clone(), BookWrite::Whole(text.clone()), 0)
                    .await
            })
            .await
    }

    /// ImportLorebook: parses the World Info file `json` under the
    /// lorebook limits, checks its entries' field types (INVALID_ARGUMENT
    /// naming the first value at fault) and stores it under `name`,
    /// replacing a book of that name.
    pub async fn import_lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
        json: String,
    ) -> Result<LorebookSummary, EngineError> {
        check_name(name)?;
        let limits = self.inner.limits.book;
        let book = blocking(move || {
            let book = Book::parse(&json, &limits).map_err(naming_the_flag)?;
            // SillyTavern's entry types, checked on the way in only: a
            // stored book is read back without them.
            book.check_types()?;
            Ok(book)
        })
        .await?;
        self.replace_book(tenant, name, book).await
    }

    /// ImportCharacterBook: converts the card's `character_book` as
    /// SillyTavern does and stores it under `name`, or (empty `name`)
    /// under the name SillyTavern gives it.
    pub async fn import_character_book(
        &self,
        tenant: &Tenant,
        name: &str,
        card: Vec<u8>,
    ) -> Result<LorebookSummary, EngineError> {
        if !name.is_empty() {
            check_name(name)?;
        }
        let limits = self.inner.limits.book;
        let (card_name, book) =
            blocking(move || card::character_book(&card, &limits).map_err(naming_the_flag)).await?;
        let name = if name.is_empty() {
            check_name(&card_name).map_err(|e| {
                DomainError::invalid(
                    "name",
                    format!("is empty, and the card's book name cannot be used: {e}"),
                )
            })?;
            card_name
        } else {
            name.to_owned()
        };
        self.replace_book(tenant, &name, book).await
    }

    /// ExportLorebook: the book's file text.
    pub async fn export_lorebook(
        &self,
        tenant: &Tenant,
        name: &str,
    ) -> Result<String, EngineError> {
        check_name(name)?;
        let Some(stored) = self.inner.store.lorebook(tenant, name).await? else {
            return Err(unknown_book(name));
        };
        if stored.edits.is_empty() {
            return Ok(stored.json);
        }
        let name = name.to_owned();
        tokio::task::spawn_blocking(move || read_stored(&stored).map(|book| book.to_json()))
            .await
            .map_err(EngineError::from_join)?
            .map_err(|e| StoreError::corrupt(format!("lorebook {name:?}"), e).into())
    }

    /// ListLorebooks: at most `limit` of the tenant's books by name (as
    /// bytes), strictly after `after` when given.
    pub async fn list_lorebooks(
        &self,
        tenant: &Tenant,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<LorebookSummary>, EngineError> {
        let books = self
            .inner
            .store
            .list_lorebooks(tenant, after, limit)
            .await?;
        Ok(books.into_iter().map(Into::into).collect())
    }

    /// DeleteLorebook.
    pub async fn delete_lorebook(&self, tenant: &Tenant, name: &str) -> Result<(), EngineError> {
        check_name(name)?;
        let key: BookKey = (tenant.clone(), name.to_owned());
        let _locked = self.inner.shelf.lock(&key).await;
        let key = &key;
        Retry::BOOKS
            .run(move || async move {
                let expect = self.stored_version(key).await?;
                if expect == NO_LOREBOOK {
                    self.inner.shelf.forget(key);
                    return Err(unknown_book(name));
                }
                self.inner
                    .store
                    .commit(vec![Write::DeleteLorebook(DeleteLorebook {
                        tenant: tenant.clone(),
                        name: name.to_owned(),
                        expect_version: expect,
                    })])
                    .await?;
                self.inner.shelf.forget(key);
                Ok(())
            })
            .await
    }

    /// The book as stored now, from the cache when it is current; a miss
    /// is read under the book's lock.
    async fn current(&self, key: &BookKey) -> Result<Option<Loaded>, EngineError> {
        if !self.inner.shared
            && let Some(hit) = self.inner.shelf.cached(key, None)
        {
            return Ok(Some(hit));
        }
        let _locked = self.inner.shelf.lock(key).await;
        self.load_locked(key).await
    }

    /// The parsed books of `tenant` named in `names`, in the order named
    /// (a name given twice once, at its first place); names the tenant
    /// has no book of (or that no book could have) are skipped. With one
    /// writer, cached books are used as they are; with replicas, the
    /// stored versions of all the books are read in one query first, and
    /// only books changed since are read again.
    pub async fn lorebooks_for_scan(
        &self,
        tenant: &Tenant,
        names: &[String],
    ) -> Result<Vec<(String, Arc<Book>)>, EngineError> {
        let mut wanted: Vec<&String> = Vec::with_capacity(names.len());
        for name in names {
            if check_name(name).is_ok() && !wanted.contains(&name) {
                wanted.push(name);
            }
        }
        let versions: Option<std::collections::HashMap<String, u64>> =
            if self.inner.shared && !wanted.is_empty() {
                let named: Vec<String> = wanted.iter().map(|n| (*n).clone()).collect();
                Some(
                    self.inner
                        .store
                        .lorebook_versions(tenant, &named)
                        .await?
                        .into_iter()
                        .collect(),
                )
            } else {
                None
            };
        let mut books = Vec::with_capacity(wanted.len());
        for name in wanted {
            let key: BookKey = (tenant.clone(), name.clone());
            let want = match &versions {
                Some(versions) => match versions.get(name) {
                    Some(version) => Some(*version),
                    None => continue,
                },
                None => None,
            };
            let loaded = match self.inner.shelf.cached(&key, want) {
                Some(hit) => Some(hit),
                None => {
                    let _locked = self.inner.shelf.lock(&key).await;
                    match self.inner.shelf.cached(&key, want) {
                        Some(hit) => Some(hit),
                        None => self.fetch_locked(&key).await?,
                    }
                }
            };
            if let Some(loaded) = loaded {
                books.push((name.clone(), loaded.book));
            }
        }
        Ok(books)
    }
}

#[cfg(test)]
mod tests;
