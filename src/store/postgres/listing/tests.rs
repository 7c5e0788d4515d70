use super::*;

#[test]
fn a_rows_revision_is_read_alone_and_is_0_when_absent() {
    let row = r#"{"revision":7,"injection":{"text":"x"},"needs_refresh":true}"#;
    assert_eq!(from_json::<RowRevision>("r", row).unwrap().revision, 7);
    assert_eq!(from_json::<RowRevision>("r", "{}").unwrap().revision, 0);
    assert!(from_json::<RowRevision>("r", "not json").is_err());
}
