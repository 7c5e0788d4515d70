use super::*;

/// Finding 7's name: NUL, an ANSI colour, CR LF and a right-to-left
/// override around a fake log line.
const HOSTILE_NAME: &str = "Mi\u{0}ra\u{1b}[31m\r\nFAKE LOG LINE\u{202e}";

#[test]
fn a_name_loses_controls_and_bidi_characters_and_keeps_its_words() {
    assert_eq!(clean_name(HOSTILE_NAME), "Mira[31m FAKE LOG LINE");
    assert_eq!(
        clean_name("  Lady\tMira\u{85}Vale\u{200f} "),
        "Lady Mira Vale"
    );
    assert_eq!(
        clean_name("\u{2066}Ævar\u{2069} \u{61c}東京\u{feff}"),
        "Ævar 東京"
    );
    assert_eq!(clean_name("\u{0}\u{1b}\u{202e}\r\n"), "");
    assert_eq!(
        clean_name(&clean_name(HOSTILE_NAME)),
        clean_name(HOSTILE_NAME)
    );
}

#[test]
fn content_keeps_line_breaks_and_tabs_and_loses_the_other_controls() {
    assert_eq!(
        clean_content("Leads\tthe guard.\r\nHas a scar.\rRight\u{202e}-handed\u{0}.\u{9b}"),
        "Leads\tthe guard.\nHas a scar.\nRight-handed."
    );
}

#[test]
fn the_hidden_characters_are_exactly_the_controls_and_bidi_marks() {
    let hidden: Vec<u32> = (0..=0x10ffff_u32)
        .filter_map(char::from_u32)
        .filter(|c| is_hidden_char(*c))
        .map(u32::from)
        .collect();
    let mut expected: Vec<u32> = (0..=0x1f).chain(0x7f..=0x9f).collect();
    expected.extend([0x61c, 0x200e, 0x200f]);
    expected.extend(0x202a..=0x202e);
    expected.extend(0x2066..=0x2069);
    expected.push(0xfeff);
    assert_eq!(hidden, expected);
}

#[test]
fn a_regex_shaped_keyword_becomes_plain_text() {
    // Finding 7's keyword: a lookbehind SillyTavern would run as a regex.
    assert!(is_regex_shaped("/(?<=(a+)+)b/i"));
    assert_eq!(defuse_key("/(?<=(a+)+)b/i"), "(?=(a+)+)b/i");
    assert!(!is_regex_shaped(&defuse_key("/(?<=(a+)+)b/i")));
    // Every leading slash and the spaces a scan trims go, not only one.
    assert_eq!(defuse_key(" //a+//g"), "a+//g");
    assert_eq!(defuse_key("\u{feff}/x+/"), "x+/");
    assert_eq!(defuse_key("\u{a0}/x+/"), "x+/");
    // A macro cannot hide the shape until the scan substitutes it.
    assert_eq!(defuse_key("{{noop}}/(a+)+b/"), "noop/(a+)+b/");
    assert_eq!(defuse_key("<USER>/(a+)+b/"), "USER/(a+)+b/");
    assert_eq!(defuse_key("/(a+)+b/{{trim}}"), "/(a+)+b/trim");
    assert!(!is_regex_shaped("/(a+)+b/trim"));
    // Keys are stored lowercase, so flags in capitals count.
    assert_eq!(defuse_key("/A+/G"), "A+/G");
    // Plain keys, slashes inside included, stay as they are.
    assert_eq!(defuse_key("AC/DC"), "AC/DC");
    assert_eq!(defuse_key("/kill"), "/kill");
    assert_eq!(defuse_key("the captain"), "the captain");
}

#[test]
fn the_regex_shape_is_sillytaverns_split() {
    // A scan trims the key first, so surrounding spaces do not hide it.
    for key in [
        "/a/",
        "/a/gi",
        "///",
        "  /a b/s ",
        "/a/b/i",
        "/a\\/b/",
        "/a/g ",
    ] {
        assert!(is_regex_shaped(key), "{key}");
    }
    for key in ["//", "/a", "a/b/", "/a/x", "a", ""] {
        assert!(!is_regex_shaped(key), "{key}");
    }
}
