//! The one migration runner both stores use: each store's schema is a list
//! of numbered SQL files (`migrations/V<n>__<what>.sql` beside the store),
//! embedded at build time, applied in order from the version the database
//! records, each exactly once.
//!
//! Why not `refinery`: its version bounds fit (rusqlite 0.41, tokio-postgres
//! 0.7), but it records what it applied in a table of its own, while the
//! databases recapd already wrote record it in theirs (the embedded store's
//! `schema_version` in `kv`, PostgreSQL's `schema_migrations`), which the
//! upgrade tests and operators read. Keeping both ledgers in step would be
//! more code than this runner. The stores keep their ledgers and their
//! locking (PostgreSQL's advisory lock), and ask this module only which
//! migrations a database lacks.

/// One migration: a schema change, written once and never edited after a
/// release (a change of schema is a new migration at the end).
#[derive(Debug)]
pub(crate) struct Migration {
    /// Its number: 1 for the first, one more for each next.
    pub(crate) version: i64,
    /// What it does, as its file names it (for the log).
    pub(crate) name: &'static str,
    /// Its statements, run as one batch.
    pub(crate) sql: &'static str,
}

/// Declares a store's migration list from its numbered SQL files:
/// `migration!(1, "first_schema")` embeds `migrations/V1__first_schema.sql`
/// beside the invoking module.
macro_rules! migration {
    ($version:literal, $name:literal) => {
        $crate::store::migrations::Migration {
            version: $version,
            name: $name,
            sql: include_str!(concat!("migrations/V", $version, "__", $name, ".sql")),
        }
    };
}
pub(crate) use migration;

/// A store's migrations, in order. Invariant (each store tests it with
/// [`Migrations::check_numbering`]): their versions are 1, 2, 3… with no gap.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Migrations(pub(crate) &'static [Migration]);

impl Migrations {
    /// The newest schema version these migrations reach (0 for none).
    pub(crate) fn latest(self) -> i64 {
        self.0.last().map_or(0, |m| m.version)
    }

    /// The migrations a database at version `applied` lacks, in order; None
    /// when it is newer than every migration here (a newer recapd wrote it).
    pub(crate) fn after(self, applied: i64) -> Option<&'static [Migration]> {
        if applied > self.latest() {
            return None;
        }
        let done = self.0.iter().take_while(|m| m.version <= applied).count();
        self.0.get(done..)
    }

    /// Whether the versions run 1, 2, 3… without gap or repeat.
    #[cfg(test)]
    pub(crate) fn check_numbering(self) -> bool {
        self.0.iter().zip(1..).all(|(m, n)| m.version == n)
    }
}

#[cfg(test)]
mod tests;
