//! Lore answers checked before they land, as recap answers are
//! ([`crate::writing::check`]): a parsed answer can still be unusable, and
//! is then retried like a malformed one.
//!
//! - Extraction: at most [`MAX_ENTITIES`] entities (skipped ones
//!   counted); not every one skipped as invalid; at least one of one of
//!   the chat's entity types (the others are left out when it lands);
//!   names and facts not a placeholder of the instructions and holding no
//!   unreplaced macro.
//! - Resolution: the uid is one the request listed (or none).
//! - Merge: the content passes the text checks, has at least
//!   `running_recap_min_ratio` of the old entry's characters (a model that
//!   answers a line where the entry had a page lost it) and at most the
//!   recap length limit; a new name passes the text checks.
//! - Compaction: the content passes the text checks and is shorter than
//!   the entry it compacts.

use crate::request::check::AnswerCheck;
pub use crate::request::check::{LoreCheck, LoreRule};

use super::LoreAnswer;

/// The most entities one extraction may answer.
pub const MAX_ENTITIES: usize = 32;

impl LoreCheck {
    /// Whether `answer` may land; `outer` is the request's whole check (its
    /// placeholders). The error is the reason.
    pub fn check(&self, outer: &AnswerCheck, answer: &LoreAnswer) -> Result<(), String> {
        match (&self.rule, answer) {
            (LoreRule::Extract { types }, LoreAnswer::Entities { entities, skipped }) => {
                let listed = entities.len() + skipped.len();
                if listed > MAX_ENTITIES {
                    return Err(format!(
                        "the answer has {listed} entities, more than {MAX_ENTITIES}"
                    ));
                }
                // Some invalid entities are skipped; all of them is an
                // answer with nothing usable.
                if entities.is_empty()
                    && let Some(first) = skipped.first()
                {
                    return Err(format!(
                        "every entity is invalid ({} of them; {first})",
                        skipped.len()
                    ));
                }
                // An entity of another type is left out where the answer
                // lands (a small model says "person" for "character"); an
                // answer with none of the chat's types is unusable.
                if let Some(entity) = entities.first()
                    && !entities.iter().any(|e| types.contains(&e.kind))
                {
                    return Err(format!(
                        "no entity has one of the types {} (the first, {:?}, is a {:?})",
                        types.join(", "),
                        entity.name,
                        entity.kind
                    ));
                }
                for (i, entity) in entities.iter().enumerate() {
                    outer.text(&format!("entities[{i}].name"), &entity.name, true)?;
                    for line in &entity.content {
                        outer.text(&format!("entities[{i}].content"), line, false)?;
                    }
                }
                Ok(())
            }
            (LoreRule::Resolve { uids }, LoreAnswer::Resolved(uid)) => match uid {
                Some(uid) if !uids.contains(uid) => Err(format!(
                    "uid {uid:?} is not one of the entries listed ({})",
                    uids.join(", ")
                )),
                _ => Ok(()),
            },
            (
                LoreRule::Merge {
                    min_chars,
                    basis,
                    max_chars,
                },
                LoreAnswer::Merged { content, name, .. },
            ) => {
                outer.text("content", content, true)?;
                let chars = content.trim().chars().count();
                if chars < *min_chars {
                    return Err(format!(
                        "the merged entry has {chars} characters, fewer than {min_chars} ({basis})"
                    ));
                }
                if chars > *max_chars {
                    return Err(format!(
                        "the merged entry has {chars} characters, more than {max_chars}"
                    ));
                }
                match name {
                    Some(name) => outer.text("name", name, true),
                    None => Ok(()),
                }
            }
            (LoreRule::Compact { shorter_than }, LoreAnswer::Compacted(content)) => {
                outer.text("content", content, true)?;
                let chars = content.trim().chars().count();
                if chars >= *shorter_than {
                    return Err(format!(
                        "the compacted entry has {chars} characters, not fewer than the entry's {shorter_than}"
                    ));
                }
                Ok(())
            }
            (rule, answer) => Err(format!(
                "the answer ({answer:?}) is not what the request asked ({rule:?})"
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lore::{Entity, Skipped};

    fn entity(kind: &str, name: &str, content: &str) -> Entity {
        Entity {
            kind: kind.into(),
            name: name.into(),
            keywords: vec![],
            content: vec![content.into()],
        }
    }

    fn entities(entities: Vec<Entity>) -> LoreAnswer {
        LoreAnswer::Entities {
            entities,
            skipped: vec![],
        }
    }

    fn check(rule: LoreRule) -> (LoreCheck, AnswerCheck) {
        (
            LoreCheck { rule },
            AnswerCheck::for_instructions("Answer with the facts, not <the facts>."),
        )
    }

    #[test]
    fn an_extraction_keeps_to_the_types_and_real_text() {
        let (lore, outer) = check(LoreRule::Extract {
            types: vec!["character".into(), "location".into()],
        });
        let ok = entities(vec![entity("character", "Mira", "Leads the guard.")]);
        assert_eq!(lore.check(&outer, &ok), Ok(()));
        let person = entities(vec![entity("person", "Mira", "Leads the guard.")]);
        assert!(
            lore.check(&outer, &person)
                .unwrap_err()
                .contains("\"person\"")
        );
        // One entity of another type among good ones does not spoil them.
        let mixed = entities(vec![
            entity("person", "Oda", "Runs the inn."),
            entity("character", "Mira", "Leads the guard."),
        ]);
        assert_eq!(lore.check(&outer, &mixed), Ok(()));
        let placeholder = entities(vec![entity("character", "Mira", "<the facts>")]);
        assert!(lore.check(&outer, &placeholder).is_err());
        let macro_left = entities(vec![entity("character", "{{char}}", "Leads.")]);
        assert!(lore.check(&outer, &macro_left).is_err());
        let many = entities(
            (0..33)
                .map(|i| entity("character", &format!("N{i}"), "x."))
                .collect(),
        );
        assert!(lore.check(&outer, &many).is_err());
        // Skipped entities count toward the most an answer may list, and
        // an answer whose every entity was skipped is unusable.
        let skipped = |n: usize| {
            (0..n)
                .map(|i| Skipped {
                    what: format!("entities[{i}]"),
                    reason: "is 3, not an object".into(),
                })
                .collect::<Vec<_>>()
        };
        let some_skipped = LoreAnswer::Entities {
            entities: vec![entity("character", "Mira", "Leads the guard.")],
            skipped: skipped(31),
        };
        assert_eq!(lore.check(&outer, &some_skipped), Ok(()));
        let too_many = LoreAnswer::Entities {
            entities: vec![entity("character", "Mira", "Leads the guard.")],
            skipped: skipped(32),
        };
        assert!(lore.check(&outer, &too_many).is_err());
        let none_left = LoreAnswer::Entities {
            entities: vec![],
            skipped: skipped(1),
        };
        let reason = lore.check(&outer, &none_left).unwrap_err();
        assert!(
            reason.contains("entities[0]: is 3, not an object"),
            "{reason}"
        );
    }

    #[test]
    fn a_resolution_names_a_listed_entry_or_none() {
        let (lore, outer) = check(LoreRule::Resolve {
            uids: vec!["3".into(), "7".into()],
        });
        assert_eq!(
            lore.check(&outer, &LoreAnswer::Resolved(Some("7".into()))),
            Ok(())
        );
        assert_eq!(lore.check(&outer, &LoreAnswer::Resolved(None)), Ok(()));
        assert!(
            lore.check(&outer, &LoreAnswer::Resolved(Some("4".into())))
                .is_err()
        );
    }

    #[test]
    fn a_merge_keeps_enough_and_a_compaction_must_shorten() {
        let (lore, outer) = check(LoreRule::Merge {
            min_chars: 10,
            basis: "test".into(),
            max_chars: 40,
        });
        let merged = |content: &str| LoreAnswer::Merged {
            content: content.into(),
            name: None,
            skipped: vec![],
        };
        assert_eq!(
            lore.check(&outer, &merged("Mira is the Master Smith.")),
            Ok(())
        );
        assert!(lore.check(&outer, &merged("Mira.")).is_err());
        assert!(lore.check(&outer, &merged(&"x".repeat(41))).is_err());
        let (lore, outer) = check(LoreRule::Compact { shorter_than: 20 });
        assert_eq!(
            lore.check(&outer, &LoreAnswer::Compacted("Short now.".into())),
            Ok(())
        );
        assert!(
            lore.check(&outer, &LoreAnswer::Compacted("x".repeat(20)))
                .is_err()
        );
        // An answer of another kind never passes.
        assert!(lore.check(&outer, &LoreAnswer::Resolved(None)).is_err());
        assert!(
            LoreCheck::default()
                .check(&outer, &LoreAnswer::Resolved(None))
                .is_err()
        );
    }
}
