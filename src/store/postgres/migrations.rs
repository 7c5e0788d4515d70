//! The PostgreSQL schema: the numbered migrations in `migrations/`, applied
//! at start-up by the shared runner (`store::migrations`) from the version
//! the store's `schema_migrations` table records. A migration is never
//! edited once released: a change of schema is a new file at the end.
//!
//! Every migration runs with `search_path` set to the store's schema, so
//! its tables land there without the schema's name in any SQL text.

use deadpool_postgres::Pool;

use super::{pg_err, pool_err};
use crate::store::StoreError;
use crate::store::migrations::{Migrations, migration};

/// The PostgreSQL store's migrations, in order.
const MIGRATIONS: Migrations = Migrations(&[
    migration!(1, "first_schema"),
    migration!(2, "chat_clock_by_change"),
    migration!(3, "tenant_columns"),
    migration!(4, "job_queue"),
    migration!(5, "chat_lifecycle"),
    migration!(6, "lorebooks"),
    migration!(7, "recall"),
    migration!(8, "lorebook_edits"),
    migration!(9, "profiles"),
]);

/// `name` as an SQL identifier, quoted: `CREATE SCHEMA` takes no
/// parameter, so the one statement that names the schema quotes it.
fn quoted_identifier(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// Creates the schema when missing and applies the migrations it lacks, in
/// one transaction under an advisory lock, so replicas starting together
/// migrate once: the second waits for the first's commit, then finds
/// nothing left to apply.
pub(super) async fn migrate(pool: &Pool, schema: &str) -> Result<(), StoreError> {
    let migrating = pg_err("migrating the schema");
    let mut client = pool.get().await.map_err(pool_err)?;
    let tx = client.transaction().await.map_err(&migrating)?;
    tx.execute(
        "SELECT pg_advisory_xact_lock(hashtext('recapd migrations ' || $1::text))",
        &[&schema],
    )
    .await
    .map_err(&migrating)?;
    tx.batch_execute(&format!(
        "CREATE SCHEMA IF NOT EXISTS {}",
        quoted_identifier(schema)
    ))
    .await
    .map_err(&migrating)?;
    tx.execute(
        "SELECT set_config('search_path', quote_ident($1::text), true)",
        &[&schema],
    )
    .await
    .map_err(&migrating)?;
    tx.batch_execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (
             version integer PRIMARY KEY,
             applied_at timestamptz NOT NULL DEFAULT now()
         );",
    )
    .await
    .map_err(&migrating)?;
    let applied: i32 = tx
        .query_one(
            "SELECT coalesce(max(version), 0) FROM schema_migrations",
            &[],
        )
        .await
        .map_err(&migrating)?
        .get(0);
    let Some(pending) = MIGRATIONS.after(i64::from(applied)) else {
        return Err(StoreError::corrupt(
            format!("schema {schema}"),
            format!(
                "at version {applied}; this recapd knows up to {} (a newer recapd migrated it)",
                MIGRATIONS.latest()
            ),
        ));
    };
    for migration in pending {
        let version = migration.version;
        tracing::info!(
            schema,
            version,
            name = migration.name,
            "applying a PostgreSQL migration (on a large database this can take minutes)"
        );
        tx.batch_execute(migration.sql).await.map_err(&migrating)?;
        let recorded =
            i32::try_from(version).map_err(|e| StoreError::database("migrating the schema", e))?;
        tx.execute(
            "INSERT INTO schema_migrations (version) VALUES ($1)",
            &[&recorded],
        )
        .await
        .map_err(&migrating)?;
        tracing::info!(schema, version, "applied a PostgreSQL migration");
    }
    tx.commit().await.map_err(&migrating)
}

#[cfg(test)]
mod tests;
