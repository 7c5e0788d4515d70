//! The scripted story of the `lore` benchmark: ten scenes, each naming a
//! few entities, every one of them new, known (the book has an entry of
//! the same type and name), or ambiguous (its name shares a word with an
//! entry's, so the match needs the model: the same entity under a title,
//! or a different one). The fake LLM answers from this script, and the
//! extension's request count for the same scenes is computed from it.

/// How an entity stands against the book when its scene is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// No entry has its name or a word of it: created without a request.
    New,
    /// An entry of the same type and name exists: merged into it.
    Known,
    /// Its name shares a word with an entry's: a resolution decides.
    /// `Some(name)`: it is that entry's entity (then merged); `None`: it
    /// is a different one (then created).
    Ambiguous(Option<&'static str>),
}

/// One entity a scene establishes or changes.
#[derive(Debug, Clone, Copy)]
pub struct Mention {
    /// Its type (one of recapd's default entity types).
    pub kind: &'static str,
    /// Its name as the scene uses it.
    pub name: &'static str,
    /// Other words for it.
    pub keywords: &'static [&'static str],
    /// The facts the scene tells, one sentence each; unique in the whole
    /// story (the fake LLM recognises an entity by them).
    pub facts: &'static [&'static str],
    pub standing: Standing,
}

/// One scene: its entities, and the recap the fake writes for it.
#[derive(Debug, Clone, Copy)]
pub struct Scene {
    pub mentions: &'static [Mention],
    /// One sentence; the fake's scene recap is `Scene <n>: <recap>`.
    pub recap: &'static str,
}

const fn m(
    kind: &'static str,
    name: &'static str,
    keywords: &'static [&'static str],
    facts: &'static [&'static str],
    standing: Standing,
) -> Mention {
    Mention {
        kind,
        name,
        keywords,
        facts,
        standing,
    }
}

use Standing::{Ambiguous, Known, New};

/// The story. Scene 1 starts with an empty book.
pub const SCENES: [Scene; 10] = [
    Scene {
        recap: "Ann meets the watch sergeant at the market and hears of a strange compass.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &["mara"],
                &[
                    "Mara Voss is a sergeant of the harbour watch.",
                    "Mara Voss has a scar across her left cheek.",
                ],
                New,
            ),
            m(
                "character",
                "Tobin Reed",
                &["tobin"],
                &["Tobin Reed is a ferryman who owes money to smugglers."],
                New,
            ),
            m(
                "location",
                "Harbor Market",
                &[],
                &["Harbor Market fills the quay below the old sea wall."],
                New,
            ),
            m(
                "location",
                "Gilded Anchor",
                &["the anchor"],
                &["The Gilded Anchor is a tavern run by a retired smuggler."],
                New,
            ),
            m(
                "item",
                "Brass Compass",
                &[],
                &["The Brass Compass always points to the nearest shipwreck."],
                New,
            ),
        ],
    },
    Scene {
        recap: "Mara is promoted, Tobin hides the compass, and the archive keeper warns of the smugglers.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss was promoted to lieutenant of the watch.",
                    "Mara Voss distrusts the city council.",
                ],
                Known,
            ),
            m(
                "character",
                "Tobin Reed",
                &[],
                &["Tobin Reed hid the Brass Compass under the planks of his boat."],
                Known,
            ),
            m(
                "faction",
                "Salt Syndicate",
                &["the syndicate"],
                &["The Salt Syndicate controls the smuggling routes of the bay."],
                New,
            ),
            m(
                "character",
                "Elder Quill",
                &["quill"],
                &["Elder Quill keeps the city archive."],
                New,
            ),
        ],
    },
    Scene {
        recap: "The syndicate raids the market; the captain of the watch takes command on the tower.",
        mentions: &[
            m(
                "location",
                "Harbor Market",
                &[],
                &["Harbor Market was half burned in the syndicate raid."],
                Known,
            ),
            m(
                "faction",
                "Salt Syndicate",
                &[],
                &["The Salt Syndicate pays the dock guards in silver."],
                Known,
            ),
            m(
                "character",
                "Captain Voss",
                &["the captain"],
                &[
                    "Captain Voss led the defence of the market during the raid.",
                    "Captain Voss was wounded in the shoulder.",
                ],
                Ambiguous(Some("Mara Voss")),
            ),
            m(
                "location",
                "Lantern Tower",
                &[],
                &["Lantern Tower is the lighthouse at the mouth of the bay."],
                New,
            ),
        ],
    },
    Scene {
        recap: "Mara reads the compass at the new harbour gate and meets a young cartographer.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss learned to read the Brass Compass.",
                    "Mara Voss sleeps in the watch barracks since the raid.",
                ],
                Known,
            ),
            m(
                "item",
                "Brass Compass",
                &[],
                &["The Brass Compass needle turns red near drowned gold."],
                Known,
            ),
            m(
                "location",
                "Harbor Gate",
                &[],
                &["Harbor Gate is the iron portcullis closing the inner harbour at night."],
                Ambiguous(None),
            ),
            m(
                "character",
                "Wren Ashby",
                &["wren"],
                &["Wren Ashby is a cartographer who maps the sea floor."],
                New,
            ),
        ],
    },
    Scene {
        recap: "Tobin and the archivist find a ledger in a drowned chapel below the tower.",
        mentions: &[
            m(
                "character",
                "Tobin Reed",
                &[],
                &["Tobin Reed paid his debt with a pearl from the wreck."],
                Known,
            ),
            m(
                "character",
                "Elder Quill",
                &[],
                &["Elder Quill is going blind."],
                Known,
            ),
            m(
                "location",
                "Lantern Tower",
                &[],
                &["Lantern Tower has a flooded cellar that opens on a sea cave."],
                Known,
            ),
            m(
                "location",
                "Sunken Chapel",
                &[],
                &["Sunken Chapel lies under the bay and is reached at low tide."],
                New,
            ),
            m(
                "document",
                "Moon Ledger",
                &[],
                &["The Moon Ledger lists every bribe the council took."],
                New,
            ),
        ],
    },
    Scene {
        recap: "At the tavern the syndicate offers Mara a bribe; a stranger sells a brass key.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss refused a bribe from the syndicate.",
                    "Mara Voss keeps the Moon Ledger hidden in her boot.",
                ],
                Known,
            ),
            m(
                "faction",
                "Salt Syndicate",
                &[],
                &["The Salt Syndicate put a price on Mara's head."],
                Known,
            ),
            m(
                "location",
                "Gilded Anchor",
                &[],
                &["The Gilded Anchor has a back room where the syndicate meets."],
                Known,
            ),
            m(
                "item",
                "Brass Key",
                &[],
                &["The Brass Key opens the vault of the customs house."],
                Ambiguous(None),
            ),
            m(
                "character",
                "Oren Falk",
                &["oren"],
                &["Oren Falk is a syndicate enforcer with a glass eye."],
                New,
            ),
        ],
    },
    Scene {
        recap: "Wren maps the gate; the old keeper of the archive gives Mara a crown of coral.",
        mentions: &[
            m(
                "character",
                "Wren Ashby",
                &[],
                &["Wren Ashby drew the only map of the sea caves."],
                Known,
            ),
            m(
                "location",
                "Harbor Gate",
                &[],
                &["Harbor Gate was left open on the night of the new moon."],
                Known,
            ),
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss was made captain of the watch.",
                    "Mara Voss swore to burn the Moon Ledger.",
                ],
                Known,
            ),
            m(
                "character",
                "Keeper Quill",
                &["the keeper"],
                &["Keeper Quill gave away the archive's oldest relic."],
                Ambiguous(Some("Elder Quill")),
            ),
            m(
                "item",
                "Coral Crown",
                &[],
                &["The Coral Crown belonged to the drowned kings of the bay."],
                New,
            ),
        ],
    },
    Scene {
        recap: "A grey tide floods the chapel; the crown glows and Tobin meets a diver.",
        mentions: &[
            m(
                "location",
                "Sunken Chapel",
                &[],
                &["Sunken Chapel flooded for good during the storm."],
                Known,
            ),
            m(
                "item",
                "Coral Crown",
                &[],
                &["The Coral Crown glows when the tide turns."],
                Known,
            ),
            m(
                "character",
                "Tobin Reed",
                &[],
                &["Tobin Reed lost his boat in the storm."],
                Known,
            ),
            m(
                "event",
                "Grey Tide",
                &[],
                &["The Grey Tide was a storm surge that drowned the lower town."],
                New,
            ),
            m(
                "character",
                "Ilsa Brand",
                &["ilsa"],
                &["Ilsa Brand is a pearl diver who saved Tobin from the surge."],
                New,
            ),
        ],
    },
    Scene {
        recap: "The council declares a curfew; master Reed ferries Mara past the enforcer.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss arrested the harbourmaster.",
                    "Mara Voss moved into the Lantern Tower.",
                ],
                Known,
            ),
            m(
                "faction",
                "Salt Syndicate",
                &[],
                &["The Salt Syndicate lost its hold on the dock guards."],
                Known,
            ),
            m(
                "character",
                "Oren Falk",
                &[],
                &["Oren Falk deserted the syndicate."],
                Known,
            ),
            m(
                "character",
                "Master Reed",
                &["the ferryman"],
                &["Master Reed ferried the watch across the bay at night."],
                Ambiguous(Some("Tobin Reed")),
            ),
            m(
                "rule",
                "Curfew Law",
                &["curfew"],
                &["The Curfew Law forbids boats on the bay after dark."],
                New,
            ),
        ],
    },
    Scene {
        recap: "The last bell rings over the bay; Wren and Mara crown no king and light the tower.",
        mentions: &[
            m(
                "character",
                "Mara Voss",
                &[],
                &[
                    "Mara Voss gave the Coral Crown back to the sea.",
                    "Mara Voss is no longer on speaking terms with the council.",
                ],
                Known,
            ),
            m(
                "character",
                "Wren Ashby",
                &[],
                &["Wren Ashby became the keeper of the Lantern Tower."],
                Known,
            ),
            m(
                "item",
                "Coral Crown",
                &[],
                &["The Coral Crown now lies in the Sunken Chapel."],
                Known,
            ),
            m(
                "location",
                "Lantern Tower",
                &[],
                &["Lantern Tower was relit after twenty dark years."],
                Known,
            ),
            m(
                "event",
                "Last Bell",
                &[],
                &["The Last Bell marked the end of the syndicate's rule over the bay."],
                New,
            ),
        ],
    },
];

/// The marker the first message of scene `n` (from 1) carries, which the
/// fake finds in the prompts about the scene.
pub fn scene_marker(n: usize) -> String {
    format!("[scene {n}]")
}

/// The messages of scene `n` (from 1), `(speaker is the user, text)`: an
/// opening line, one line per entity telling its facts, a closing line.
pub fn messages(n: usize, scene: &Scene) -> Vec<(bool, String)> {
    let mut out = vec![(
        true,
        format!(
            "{} We go on where we left off. {}",
            scene_marker(n),
            scene.recap
        ),
    )];
    for (i, mention) in scene.mentions.iter().enumerate() {
        out.push((i % 2 == 1, mention.facts.join(" ")));
    }
    out.push((
        out.len() % 2 == 0,
        "Night falls over the bay and the scene ends here.".to_owned(),
    ));
    out
}

/// What one scene is, in counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub new: usize,
    pub known: usize,
    /// Ambiguous ones that are an existing entry's entity.
    pub ambiguous_same: usize,
    /// Ambiguous ones that are a different entity.
    pub ambiguous_new: usize,
}

impl Counts {
    /// The counts of `scene`.
    pub fn of(scene: &Scene) -> Counts {
        let mut c = Counts::default();
        for mention in scene.mentions {
            match mention.standing {
                New => c.new += 1,
                Known => c.known += 1,
                Ambiguous(Some(_)) => c.ambiguous_same += 1,
                Ambiguous(None) => c.ambiguous_new += 1,
            }
        }
        c
    }

    /// Entities in all.
    pub fn entities(&self) -> usize {
        self.new + self.known + self.ambiguous_same + self.ambiguous_new
    }

    /// Ambiguous ones in all.
    pub fn ambiguous(&self) -> usize {
        self.ambiguous_same + self.ambiguous_new
    }
}

/// The entries the book should hold after the whole story: one per new
/// entity and per ambiguous one that is a different entity.
pub fn expected_entries() -> usize {
    SCENES
        .iter()
        .map(|s| {
            let c = Counts::of(s);
            c.new + c.ambiguous_new
        })
        .sum()
}

/// The latest mention of the story whose facts are all in `text` (a
/// prompt): how the fake tells which entity a resolution or merge is
/// about. A merge prompt also holds the entry's older facts (earlier
/// mentions of the entity); the scene's own mention is the latest one all
/// of whose facts are there, later scenes' facts being in no entry yet.
pub fn mention_in(text: &str) -> Option<&'static Mention> {
    let lines: std::collections::HashSet<&str> = text.lines().map(str::trim).collect();
    SCENES
        .iter()
        .rev()
        .flat_map(|s| s.mentions.iter().rev())
        .find(|m| m.facts.iter().all(|f| lines.contains(f)))
}

/// Every fact of the story, for telling fact lines from the rest of a prompt.
pub fn is_fact(line: &str) -> bool {
    SCENES
        .iter()
        .flat_map(|s| s.mentions.iter())
        .any(|m| m.facts.contains(&line))
}

#[cfg(test)]
mod tests;
