use super::*;

const THREE: Migrations = Migrations(&[
    Migration {
        version: 1,
        name: "one",
        sql: "",
    },
    Migration {
        version: 2,
        name: "two",
        sql: "",
    },
    Migration {
        version: 3,
        name: "three",
        sql: "",
    },
]);

fn versions(pending: Option<&[Migration]>) -> Option<Vec<i64>> {
    pending.map(|p| p.iter().map(|m| m.version).collect())
}

#[test]
fn a_database_gets_exactly_the_migrations_after_its_version() {
    assert_eq!(versions(THREE.after(0)), Some(vec![1, 2, 3]));
    assert_eq!(versions(THREE.after(2)), Some(vec![3]));
    assert_eq!(versions(THREE.after(3)), Some(vec![]));
    assert_eq!(THREE.latest(), 3);
}

#[test]
fn a_database_newer_than_every_migration_gets_none() {
    assert_eq!(versions(THREE.after(4)), None);
}

#[test]
fn numbering_with_a_gap_is_caught() {
    assert!(THREE.check_numbering());
    let gap = Migrations(&[
        Migration {
            version: 1,
            name: "one",
            sql: "",
        },
        Migration {
            version: 3,
            name: "three",
            sql: "",
        },
    ]);
    assert!(!gap.check_numbering());
}
