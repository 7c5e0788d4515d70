//! The tokens file's format: comments, blank lines, refusals by line number.

use super::*;

#[test]
fn the_tokens_file_skips_comments_and_blank_lines_and_names_a_bad_line() {
    let tokens =
        TenantTokens::parse("# tenants\n\nacme  0123456789abcdef\n\tglobex\tfedcba9876543210  \n")
            .unwrap();
    assert_eq!(
        tokens.iter().collect::<Vec<_>>(),
        [("0123456789abcdef", "acme"), ("fedcba9876543210", "globex")]
    );
    assert_eq!(tokens.len(), 2);
    let err = TenantTokens::parse("acme 0123456789abcdef\nbroken\n").unwrap_err();
    assert!(err.starts_with("line 2:"), "{err}");
    assert!(!err.contains("0123456789abcdef"), "never the token: {err}");
    assert!(
        TenantTokens::parse("a b c\n")
            .unwrap_err()
            .starts_with("line 1:")
    );
    assert!(
        TenantTokens::parse("acme short\n")
            .unwrap_err()
            .contains("16")
    );
    assert!(TenantTokens::parse("# nothing\n").is_err());
    assert_eq!(format!("{tokens:?}"), "TenantTokens(2 tokens)");
}

#[test]
fn a_token_is_given_to_one_tenant_and_a_tenant_name_is_short_and_printable() {
    let err = TenantTokens::parse("acme 0123456789abcdef\nglobex 0123456789abcdef\n").unwrap_err();
    assert!(err.starts_with("line 2:"), "{err}");
    assert!(err.contains("already given"), "{err}");
    assert!(!err.contains("0123456789abcdef"), "never the token: {err}");
    let long = format!("{} 0123456789abcdef\n", "t".repeat(129));
    assert!(TenantTokens::parse(&long).unwrap_err().contains("128"));
    let control = "ac\u{7}me 0123456789abcdef\n";
    assert!(
        TenantTokens::parse(control)
            .unwrap_err()
            .contains("control")
    );
    // One tenant may hold several tokens.
    let tokens = TenantTokens::parse("acme 0123456789abcdef\nacme fedcba9876543210\n").unwrap();
    assert!(tokens.iter().all(|(_, tenant)| tenant == "acme"));
}
