use super::*;

#[test]
fn migrations_are_numbered_from_one_without_gap_up_to_the_schema_version() {
    assert!(MIGRATIONS.check_numbering());
    assert_eq!(MIGRATIONS.latest(), SCHEMA_VERSION);
}
