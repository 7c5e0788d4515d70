use super::*;

#[test]
fn versions_are_consecutive_from_one() {
    assert!(MIGRATIONS.check_numbering());
    assert_eq!(MIGRATIONS.latest(), 9);
}

#[test]
fn a_schema_name_is_quoted_as_one_identifier() {
    assert_eq!(quoted_identifier("recapd"), "\"recapd\"");
    assert_eq!(quoted_identifier("a\"b"), "\"a\"\"b\"");
}
