use super::*;
use crate::writing::tests::test_chat::chat;

#[test]
fn known_macros_are_replaced_everywhere_and_unknown_ones_stay() {
    let values = [("user", "Ann"), ("char", "Bob")];
    assert_eq!(
        expand(
            "{{user}} meets {{char}}; {{user}} waves. {{other}} {{User}} {{ user }}",
            &values
        ),
        "Ann meets Bob; Ann waves. {{other}} {{User}} {{ user }}"
    );
    assert_eq!(expand("no macros", &values), "no macros");
    assert_eq!(expand("", &values), "");
}

#[test]
fn replacement_is_one_pass_so_inserted_text_is_kept_as_written() {
    let values = [
        ("message", "I say {{char}} and {{message}}"),
        ("char", "Bob"),
    ];
    assert_eq!(
        expand("{{message}} / {{char}}", &values),
        "I say {{char}} and {{message}} / Bob"
    );
}

#[test]
fn odd_braces_do_not_lose_text_or_hide_macros() {
    let values = [("char", "Bob")];
    assert_eq!(expand("{{{char}}}", &values), "{Bob}");
    assert_eq!(expand("{{x {{char}}", &values), "{{x Bob");
    assert_eq!(expand("{{char", &values), "{{char");
    assert_eq!(expand("}}{{char}}{{", &values), "}}Bob{{");
    assert_eq!(expand("{{}}", &values), "{{}}");
    assert_eq!(expand("é{{char}}ü", &values), "éBobü");
}

#[test]
fn line_breaks_of_every_kind_become_single_spaces() {
    assert_eq!(one_line("a\r\nb\nc\rd\n\ne"), "a b c d  e");
    assert!(matches!(one_line("plain"), Cow::Borrowed("plain")));
}

#[test]
fn candidate_lines_number_each_message_and_mark_the_ineligible() {
    let candidates = [
        Candidate {
            index: 4,
            message_id: "m4".into(),
            name: "Ann".into(),
            text: "Hello\r\nthere".into(),
            eligible: true,
        },
        Candidate {
            index: 7,
            message_id: "m7".into(),
            name: "Bob".into(),
            text: "Bye {{user}}".into(),
            eligible: false,
        },
    ];
    assert_eq!(
        candidate_lines(&candidates),
        "#4 Ann: Hello there\n#7 (not eligible) Bob: Bye {{user}}"
    );
    assert_eq!(candidate_lines(&[]), "");
}

#[test]
fn speakers_are_the_latest_user_and_character_names() {
    let c = chat(6)
        .name(3, "Cid", false)
        .name(4, "Narrator", false)
        .narrators(&[4])
        .name(5, "Dee", true)
        .build();
    assert_eq!(
        speakers(&c),
        Speakers {
            user: "Dee".into(),
            char: "Cid".into()
        }
    );
    let only_user = chat(1).build();
    assert_eq!(speakers(&only_user).user, "Ann");
    assert_eq!(speakers(&only_user).char, "");
    assert_eq!(speakers(&chat(0).build()), Speakers::default());
}
