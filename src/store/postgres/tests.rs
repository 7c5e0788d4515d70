use super::*;

#[test]
fn schema_names_are_plain_identifiers() {
    for good in ["recapd", "_x", "rt_0af3", &"a".repeat(48)] {
        assert!(check_schema(good).is_ok(), "{good}");
    }
    for bad in ["", "Recapd", "1abc", "a-b", "a\"b", "a b", &"a".repeat(49)] {
        assert!(check_schema(bad).is_err(), "{bad}");
    }
}
