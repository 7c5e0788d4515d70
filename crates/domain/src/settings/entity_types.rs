//! The entity types a chat's lorebook is written with: the
//! `lore_entity_types` setting, its parsing, checks and default.

use serde::{Deserialize, Serialize};

use crate::DomainError;

/// One kind of thing the book keeps entries for (`character`,
/// `location`...), with the one-line description the extraction prompt
/// shows, and whether its entries are constant (always in the prompt, as
/// SillyTavern's `constant` flag; recapd's default `rule` type is).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct EntityType {
    /// The type's name: 1..=[`MAX_TYPE_NAME_CHARS`] lowercase ASCII
    /// letters, digits, `_`; the prefix of its entries' `comment`.
    pub name: String,
    /// What entities of this type are, for the extraction prompt; one line.
    pub description: String,
    /// Whether its entries are written with `constant: true`.
    pub constant: bool,
}

/// The most characters of an entity type's name.
pub const MAX_TYPE_NAME_CHARS: usize = 32;
/// The most characters of an entity type's description.
pub const MAX_TYPE_DESCRIPTION_CHARS: usize = 300;
/// The most entity types a setting lists.
pub const MAX_TYPES: usize = 32;
/// How a line marks a constant type: `rule(constant): ...`.
const CONSTANT_MARK: &str = "(constant)";

impl EntityType {
    /// Reads one line of the `lore_entity_types` setting:
    /// `<name>: <description>` or `<name>(constant): <description>`.
    /// The error is the reason.
    pub fn parse_line(line: &str) -> Result<EntityType, String> {
        let (head, description) = line
            .split_once(':')
            .ok_or_else(|| format!("{line:?} is not `<name>: <description>`"))?;
        let head = head.trim();
        let (name, constant) = match head.strip_suffix(CONSTANT_MARK) {
            Some(name) => (name.trim(), true),
            None => (head, false),
        };
        if name.is_empty() || name.chars().count() > MAX_TYPE_NAME_CHARS {
            return Err(format!(
                "the type name {name:?} must have 1 to {MAX_TYPE_NAME_CHARS} characters"
            ));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        {
            return Err(format!(
                "the type name {name:?} may hold only lowercase ASCII letters, digits and `_`"
            ));
        }
        let description = description.trim();
        if description.chars().count() > MAX_TYPE_DESCRIPTION_CHARS
            || description.contains(['\n', '\r'])
        {
            return Err(format!(
                "the description of {name:?} must be one line of at most {MAX_TYPE_DESCRIPTION_CHARS} characters"
            ));
        }
        Ok(EntityType {
            name: name.to_owned(),
            description: description.to_owned(),
            constant,
        })
    }

    /// The type as a line of the setting ([`EntityType::parse_line`] reads
    /// it back).
    pub fn to_line(&self) -> String {
        let mark = if self.constant { CONSTANT_MARK } else { "" };
        format!("{}{mark}: {}", self.name, self.description)
    }
}

/// The `lore_entity_types` setting: the types extraction may answer, in
/// the order the prompt lists them; names are unique, at least one type,
/// at most [`MAX_TYPES`]. Stored and carried on the API as its lines
/// ([`EntityType::to_line`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(try_from = "Vec<String>", into = "Vec<String>")]
pub struct EntityTypes(Vec<EntityType>);

impl EntityTypes {
    /// Checks a list of types (unique names, 1..=[`MAX_TYPES`] of them).
    pub fn new(types: Vec<EntityType>) -> Result<EntityTypes, String> {
        if types.is_empty() {
            return Err("at least one entity type is needed".into());
        }
        if types.len() > MAX_TYPES {
            return Err(format!(
                "{} entity types is more than {MAX_TYPES}",
                types.len()
            ));
        }
        for (i, t) in types.iter().enumerate() {
            if types[..i].iter().any(|o| o.name == t.name) {
                return Err(format!("the entity type {:?} is listed twice", t.name));
            }
        }
        Ok(EntityTypes(types))
    }

    /// Reads the setting's lines (see [`EntityType::parse_line`]); errors
    /// name `field` and the line.
    pub fn parse(field: &str, lines: &[String]) -> Result<EntityTypes, DomainError> {
        let types = lines
            .iter()
            .enumerate()
            .map(|(i, line)| {
                EntityType::parse_line(line)
                    .map_err(|reason| DomainError::invalid(format!("{field}[{i}]"), reason))
            })
            .collect::<Result<Vec<_>, _>>()?;
        EntityTypes::new(types).map_err(|reason| DomainError::invalid(field, reason))
    }

    /// The types, in the setting's order.
    pub fn types(&self) -> &[EntityType] {
        &self.0
    }

    /// The type named `name`, if listed.
    pub fn get(&self, name: &str) -> Option<&EntityType> {
        self.0.iter().find(|t| t.name == name)
    }

    /// The setting's lines.
    pub fn to_lines(&self) -> Vec<String> {
        self.0.iter().map(EntityType::to_line).collect()
    }
}

impl Default for EntityTypes {
    fn default() -> Self {
        default_entity_types()
    }
}

impl TryFrom<Vec<String>> for EntityTypes {
    type Error = String;
    fn try_from(lines: Vec<String>) -> Result<Self, String> {
        let types = lines
            .iter()
            .map(|l| EntityType::parse_line(l))
            .collect::<Result<Vec<_>, _>>()?;
        EntityTypes::new(types)
    }
}

impl From<EntityTypes> for Vec<String> {
    fn from(types: EntityTypes) -> Self {
        types.to_lines()
    }
}

/// recapd's default entity types: the extension's eight (character,
/// location, item, faction, lore, event, document, rule), in its order,
/// described in recapd's own words; `rule` entries are constant.
pub fn default_entity_types() -> EntityTypes {
    let types = [
        (
            "character",
            false,
            "a person or creature with a name: who they are, how they look, what they want, their ties to others",
        ),
        (
            "location",
            false,
            "a place that can be visited or named again: what it is like, who is there, what happened there",
        ),
        (
            "item",
            false,
            "an object that matters to the story: what it is, who holds it, what it can do",
        ),
        (
            "faction",
            false,
            "a group, family, guild or nation: its members, aims and standing with others",
        ),
        (
            "lore",
            false,
            "history, magic, technology or customs of the world that the story relies on",
        ),
        (
            "event",
            false,
            "a past happening the story refers back to: what happened, who took part, what it changed",
        ),
        (
            "document",
            false,
            "a letter, book, contract or message whose wording matters: who wrote it, what it says",
        ),
        (
            "rule",
            true,
            "a standing rule of the roleplay or the world that always applies",
        ),
    ];
    EntityTypes(
        types
            .into_iter()
            .map(|(name, constant, description)| EntityType {
                name: name.to_owned(),
                description: description.to_owned(),
                constant,
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_types_round_trip_through_their_lines() {
        let types = default_entity_types();
        let lines = types.to_lines();
        assert_eq!(lines.len(), 8);
        assert!(lines[7].starts_with("rule(constant): "));
        assert_eq!(EntityTypes::try_from(lines).unwrap(), types);
    }

    #[test]
    fn bad_lines_are_refused_with_the_line_named() {
        let err = EntityTypes::parse("settings.lore_entity_types", &["Person: x".into()])
            .unwrap_err()
            .to_string();
        assert!(err.contains("lore_entity_types[0]"), "{err}");
        assert!(EntityType::parse_line("nocolon").is_err());
        assert!(EntityTypes::new(vec![]).is_err());
        let twice = vec!["a: x".to_owned(), "a: y".to_owned()];
        assert!(EntityTypes::try_from(twice).is_err());
    }
}
