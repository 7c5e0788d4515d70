//! Where activated entries go: SillyTavern's grouping of one activation's
//! entries into the texts and prompts a generation uses (`world-info.js`
//! 5084-5153 and `script.js` 4580-4619 at 51ad27f; facts file §3).
//!
//! Order: the entries are taken in the scan's final order and sorted,
//! stably, by `order` descending (`world-info.js:88`, 5084). Lists built
//! by putting each entry first (before, after, author's note top/bottom,
//! the entries of one depth group) therefore end ascending by `order`,
//! equal orders in reverse scan order; outlets are appended, so they end
//! descending. Examples go through two lists (`world-info.js:5099-5108`,
//! `script.js:4580-4596`): examples-top end descending, examples-bottom
//! ascending.
//!
//! recapd keeps no regex scripts: SillyTavern passes each content through
//! its WORLD_INFO regex scripts first (`world-info.js:5086`); here the
//! content is placed as the scan hands it. An empty content is dropped
//! (`world-info.js:5088`); a blank one is kept, as in SillyTavern.

use std::collections::BTreeMap;

use super::scan::sort_by_order_desc;
use super::types::{Activated, WiPosition};
use crate::settings::ExtensionPrompt;
use crate::settings::{Position, Role};

/// The depth SillyTavern looks an at-depth entry's group up with when the
/// entry has no `depth` (`world-info.js:96`, 5117).
const DEFAULT_DEPTH: u32 = 4;

/// The key prefix of World Info's at-depth extension prompts
/// (`constants.js:54`).
const DEPTH_KEY_PREFIX: &str = "customDepthWI";

/// The one outlet name SillyTavern never fills: its outlets are a plain
/// JavaScript object, where assigning `__proto__` sets the prototype
/// instead of a member, so `Object.entries` never lists it
/// (`world-info.js:5133-5137`, `script.js:4615-4616`).
const PROTO: &str = "__proto__";

/// The at-depth entries of one depth and one role, joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DepthPrompt {
    /// How many messages from the end of the chat.
    pub depth: u32,
    /// The role of the injected message.
    pub role: Role,
    /// The group's contents joined with `\n`, ascending by `order`; never
    /// empty (a group holds at least one non-empty content).
    pub text: String,
}

/// Activated entries grouped by where SillyTavern places them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Placement {
    /// Position 0 (`wiBefore` / `loreBefore`): contents joined with `\n`;
    /// empty when none.
    pub before: String,
    /// Position 1 (`wiAfter` / `loreAfter`): contents joined with `\n`;
    /// empty when none.
    pub after: String,
    /// At-depth groups, sorted by depth then role number; one per
    /// (depth, role). Entries without a depth are not here (SillyTavern
    /// never inserts them, facts file §7) unless they joined a depth-4
    /// group of their role that an earlier entry made.
    pub depth: Vec<DepthPrompt>,
    /// Position 2: the contents that go above the author's note, joined
    /// with `\n`; empty when none.
    pub an_top: String,
    /// Position 3: the contents that go below the author's note, joined
    /// with `\n`; empty when none.
    pub an_bottom: String,
    /// Position 5: contents to put above the example messages, in the
    /// order they end up there (descending by `order`). Each is still one
    /// raw text to parse into example blocks.
    pub examples_top: Vec<String>,
    /// Position 6: contents to put below the example messages, in the
    /// order they end up there (ascending by `order`).
    pub examples_bottom: Vec<String>,
    /// Position 7: per outlet name (as the entry spells it, never empty),
    /// the contents joined with `\n`, descending by `order`.
    pub outlets: BTreeMap<String, String>,
}

/// One at-depth group while placing: `depth` is `None` for a group an
/// entry without a depth started (SillyTavern keys it `undefined`).
struct Group {
    depth: Option<u32>,
    role: Role,
    /// Contents, most recent first (SillyTavern unshifts).
    contents: Vec<String>,
}

/// Groups `activated` (in the scan's final order) by where SillyTavern
/// places each entry, exactly in SillyTavern's order per list.
///
/// An entry with no position (`None`) is placed nowhere; an outlet entry
/// without a name is skipped (`world-info.js:5130`), and so is one named
/// `__proto__` (see `PROTO`). An at-depth entry
/// without a depth looks for an existing group of depth 4 and its role and
/// joins it when there is one; otherwise it starts a group SillyTavern
/// never inserts (`world-info.js:5116-5125`, `script.js:4610-4613`: its
/// depth becomes `NaN`).
pub fn place(activated: &[Activated]) -> Placement {
    let mut sorted: Vec<&Activated> = activated.iter().collect();
    // `sortFn` as V8 runs it (a missing `order` is NaN, which compares
    // neither less nor greater): the scan's own sort.
    sort_by_order_desc(&mut sorted, |a| a.order);

    let mut before: Vec<&str> = Vec::new();
    let mut after: Vec<&str> = Vec::new();
    let mut an_top: Vec<&str> = Vec::new();
    let mut an_bottom: Vec<&str> = Vec::new();
    // (is top, content), most recent first.
    let mut examples: Vec<(bool, &str)> = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut outlets: BTreeMap<String, Vec<&str>> = BTreeMap::new();

    for entry in sorted {
        let content = entry.content.as_str();
        if content.is_empty() {
            continue;
        }
        let Some(position) = entry.position else {
            continue;
        };
        match position {
            WiPosition::Before => before.push(content),
            WiPosition::After => after.push(content),
            WiPosition::AnTop => an_top.push(content),
            WiPosition::AnBottom => an_bottom.push(content),
            WiPosition::ExamplesTop => examples.push((true, content)),
            WiPosition::ExamplesBottom => examples.push((false, content)),
            WiPosition::AtDepth => {
                let wanted = entry.depth.unwrap_or(DEFAULT_DEPTH);
                match groups
                    .iter_mut()
                    .find(|g| g.depth == Some(wanted) && g.role == entry.role)
                {
                    Some(group) => group.contents.push(content.to_owned()),
                    None => groups.push(Group {
                        depth: entry.depth,
                        role: entry.role,
                        contents: vec![content.to_owned()],
                    }),
                }
            }
            WiPosition::Outlet => {
                if !entry.outlet_name.is_empty() && entry.outlet_name != PROTO {
                    outlets
                        .entry(entry.outlet_name.clone())
                        .or_default()
                        .push(content);
                }
            }
        }
    }

    // The lists above were built by appending; SillyTavern prepends.
    let prepended = |mut list: Vec<&str>| {
        list.reverse();
        list.join("\n")
    };
    // SillyTavern's example list is prepended to (ascending); then each
    // top content is prepended to the examples and each bottom appended.
    examples.reverse();
    let mut examples_top: Vec<String> = Vec::new();
    let mut examples_bottom: Vec<String> = Vec::new();
    for (top, content) in examples {
        if top {
            examples_top.insert(0, content.to_owned());
        } else {
            examples_bottom.push(content.to_owned());
        }
    }

    let mut depth: Vec<DepthPrompt> = groups
        .into_iter()
        .filter_map(|g| {
            let depth = g.depth?;
            let mut contents = g.contents;
            contents.reverse();
            Some(DepthPrompt {
                depth,
                role: g.role,
                text: contents.join("\n"),
            })
        })
        .collect();
    depth.sort_by_key(|d| (d.depth, role_number(d.role)));

    Placement {
        before: prepended(before),
        after: prepended(after),
        depth,
        an_top: prepended(an_top),
        an_bottom: prepended(an_bottom),
        examples_top,
        examples_bottom,
        outlets: outlets
            .into_iter()
            .map(|(name, contents)| (name, contents.join("\n")))
            .collect(),
    }
}

impl Placement {
    /// The at-depth prompts as extension prompts keyed
    /// `customDepthWI_<depth>_<role number>`, IN_CHAT, at their depth,
    /// with their role, `scan` false (`script.js:4608-4614`), so they merge
    /// with other IN_CHAT prompts of the same depth and role by sorted key
    /// name as in SillyTavern. Sorted like [`Placement::depth`].
    pub fn depth_prompts(&self) -> Vec<ExtensionPrompt> {
        self.depth
            .iter()
            .map(|d| ExtensionPrompt {
                key: format!("{DEPTH_KEY_PREFIX}_{}_{}", d.depth, role_number(d.role)),
                value: d.text.clone(),
                position: Position::InChat,
                depth: d.depth,
                role: d.role,
                scan: false,
            })
            .collect()
    }

    /// The outlet's text for `{{outlet::name}}`: `name` as the macro
    /// gives it, trimmed as JavaScript trims (`macros.js:668`, 597-600);
    /// empty when no entry fills that outlet.
    pub fn outlet(&self, name: &str) -> &str {
        let name = name.trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
        self.outlets.get(name).map_or("", String::as_str)
    }
}

/// SillyTavern's number for an extension prompt role (`script.js`'s
/// `extension_prompt_roles`).
fn role_number(role: Role) -> u8 {
    match role {
        Role::System => 0,
        Role::User => 1,
        Role::Assistant => 2,
    }
}

#[cfg(test)]
mod tests;
