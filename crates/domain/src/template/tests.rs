use super::*;

#[test]
fn replaces_every_placeholder_literally() {
    assert_eq!(
        render("A {{running_recap}} B {{running_recap}}", Some("x$1\\n")),
        "A x$1\\n B x$1\\n"
    );
    assert_eq!(render("no placeholder", Some("c")), "no placeholder");
}

#[test]
fn blank_template_gives_raw_content_and_no_content_gives_nothing() {
    assert_eq!(render(" \n\t", Some("raw")), "raw");
    assert_eq!(render("", Some("raw")), "raw");
    assert_eq!(render("T {{running_recap}}", None), "");
    assert_eq!(render("T {{running_recap}}", Some("")), "");
}
