//! Profiles rows: kept per tenant, read with the global settings, also for
//! a tenant that has no global settings, and kept across a reopening.

use super::*;
use crate::domain::profiles::{Group, Profiles};

#[tokio::test]
async fn profiles_are_read_with_the_global_settings_per_tenant_and_survive_reopening() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let mut acme = Profiles::default();
    acme.put_profile(
        "quiet",
        SettingsPatch {
            depth: Some(7),
            ..Default::default()
        },
    )
    .unwrap();
    acme.put_group(
        "g1",
        Group {
            disabled_members: vec!["bob.png".into()],
            ..Group::default()
        },
    )
    .unwrap();
    store
        .commit(vec![
            Write::GlobalSettings {
                tenant: Tenant("".into()),
                patch: SettingsPatch {
                    depth: Some(3),
                    ..Default::default()
                },
            },
            // A tenant with profiles and no global settings row.
            Write::Profiles {
                tenant: Tenant("acme".into()),
                profiles: acme.clone(),
            },
        ])
        .await
        .unwrap();
    store.close().await;
    drop(store);
    let store = SqliteStore::open(dir.path(), true).await.unwrap();
    let globals = store.global_settings().await.unwrap();
    let read: Vec<(String, Option<u32>, Profiles)> = globals
        .into_iter()
        .map(|g| (g.tenant.name().to_owned(), depth(&g.patch), g.profiles))
        .collect();
    assert_eq!(
        read,
        vec![
            (String::new(), Some(3), Profiles::default()),
            ("acme".to_owned(), None, acme),
        ]
    );
}
