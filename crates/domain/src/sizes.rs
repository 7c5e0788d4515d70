//! [`Footprint`] of the domain types a resident chat (and the engine
//! around it) holds. Each destructures its type whole, so a new field
//! does not compile until it is counted here.
//!
//! The trait and the counting rules stay at the bottom of the crate
//! ([`crate::footprint`]); these impls sit at the top, above every type
//! they count, so that counting a type never ties its module to another.

use crate::footprint::{Footprint, allocation_bytes, inline_only};
use crate::ids::{ChatKey, Tenant};
use crate::jobs::{Job, JobKind, JobState, Lease, ReadSet};
use crate::message::{Message, MessageData, Swipe, SwipeData, Swipes};
use crate::recaps::RecapVersion;
use crate::refresh::{Injection, InjectionKey, Trigger};
use crate::settings::{
    BookNames, CharacterStrategy, ContextType, MaxTokensField, Milli, Position, Role,
    StructuredOutput, TokenizerKind,
};
use crate::verbatim::{FileSwipe, Kept, OwnData, StFile, StHeader, StMessage, StSwipe, StVersion};

inline_only!(
    JobKind,
    JobState,
    InjectionKey,
    Trigger,
    ContextType,
    Milli,
    Position,
    Role,
    TokenizerKind,
    StructuredOutput,
    MaxTokensField,
    CharacterStrategy,
);

impl Footprint for crate::settings::entity_types::EntityTypes {
    fn heap_bytes(&self) -> usize {
        self.types()
            .iter()
            .map(|t| {
                let crate::settings::entity_types::EntityType {
                    name,
                    description,
                    constant: _,
                } = t;
                std::mem::size_of::<crate::settings::entity_types::EntityType>()
                    + name.heap_bytes()
                    + description.heap_bytes()
            })
            .sum()
    }
}

impl Footprint for crate::settings::ChatIds {
    fn heap_bytes(&self) -> usize {
        let crate::settings::ChatIds(ids) = self;
        ids.heap_bytes()
    }
}

impl Footprint for BookNames {
    fn heap_bytes(&self) -> usize {
        let BookNames(names) = self;
        names.heap_bytes()
    }
}

impl Footprint for Message {
    fn heap_bytes(&self) -> usize {
        let Message {
            id,
            name,
            is_user: _,
            hidden: _,
            is_narrator: _,
            is_thoughts: _,
            character_key,
            swipes,
            swipe_id: _,
            text_tokens: _,
            st,
        } = self;
        id.heap_bytes()
            + name.heap_bytes()
            + character_key.heap_bytes()
            + swipes.heap_bytes()
            + st.heap_bytes()
    }
}

/// The only swipe is inline (its heap alone); two or more are one
/// allocation of exactly their number.
impl Footprint for Swipes {
    fn heap_bytes(&self) -> usize {
        self.allocated()
            .map_or(0, |list| allocation_bytes(std::mem::size_of_val(list)))
            + self.iter().map(Footprint::heap_bytes).sum::<usize>()
    }
}

impl Footprint for Swipe {
    fn heap_bytes(&self) -> usize {
        let Swipe { text, data, st } = self;
        text.heap_bytes() + data.heap_bytes() + st.heap_bytes()
    }
}

impl Footprint for SwipeData {
    fn heap_bytes(&self) -> usize {
        self.boxed().heap_bytes()
    }
}

impl Footprint for MessageData {
    fn heap_bytes(&self) -> usize {
        let MessageData {
            memory,
            prefill,
            exclude: _,
            error,
            reasoning,
            edited: _,
            scene_break: _,
            scene_break_visible: _,
            scene_break_name,
            scene_recap_memory,
            is_auto_recap_system_memory: _,
            scene_recap_versions,
            scene_recap_current_index: _,
        } = self;
        let versions = scene_recap_versions.as_ref().map_or(0, |versions| {
            allocation_bytes(versions.capacity() * std::mem::size_of::<String>())
                + versions
                    .iter()
                    .map(|v| allocation_bytes(v.capacity()))
                    .sum::<usize>()
        });
        [
            memory,
            prefill,
            error,
            reasoning,
            scene_break_name,
            scene_recap_memory,
        ]
        .into_iter()
        .map(Footprint::heap_bytes)
        .sum::<usize>()
            + versions
    }
}

/// Kept JSON is a boxed `str` of exactly its length.
impl Footprint for Kept {
    fn heap_bytes(&self) -> usize {
        allocation_bytes(self.len())
    }
}

impl Footprint for FileSwipe {
    fn heap_bytes(&self) -> usize {
        match self {
            FileSwipe::Missing => 0,
            FileSwipe::Text(text) => text.heap_bytes(),
        }
    }
}

impl Footprint for OwnData {
    fn heap_bytes(&self) -> usize {
        match self {
            OwnData::Missing => 0,
            OwnData::Kept(kept) => kept.heap_bytes(),
        }
    }
}

impl Footprint for StMessage {
    fn heap_bytes(&self) -> usize {
        let StMessage {
            has: _,
            keys,
            extra,
            data,
            current_swipe,
            info_len: _,
            info_rest,
        } = self;
        keys.heap_bytes()
            + extra.heap_bytes()
            + data.heap_bytes()
            + current_swipe.heap_bytes()
            + info_rest.heap_bytes()
    }
}

impl Footprint for StSwipe {
    fn heap_bytes(&self) -> usize {
        let StSwipe {
            has: _,
            entry,
            extra,
            data,
            own_data,
        } = self;
        entry.heap_bytes() + extra.heap_bytes() + data.heap_bytes() + own_data.heap_bytes()
    }
}

impl Footprint for StVersion {
    fn heap_bytes(&self) -> usize {
        let StVersion {
            lacks: _,
            keys,
            position: _,
        } = self;
        keys.heap_bytes()
    }
}

impl Footprint for StHeader {
    fn heap_bytes(&self) -> usize {
        let StHeader {
            has: _,
            keys,
            metadata,
            recaps,
        } = self;
        keys.heap_bytes() + metadata.heap_bytes() + recaps.heap_bytes()
    }
}

impl Footprint for StFile {
    fn heap_bytes(&self) -> usize {
        match self {
            StFile::Headerless => 0,
            StFile::Header(header) => header.heap_bytes(),
        }
    }
}

impl Footprint for RecapVersion {
    fn heap_bytes(&self) -> usize {
        let RecapVersion {
            version: _,
            created_at_ms: _,
            content,
            scene_count: _,
            excluded_count: _,
            prev_scene_message_id,
            new_scene_message_id,
            st,
            carried_from,
        } = self;
        content.heap_bytes()
            + prev_scene_message_id.heap_bytes()
            + new_scene_message_id.heap_bytes()
            + st.heap_bytes()
            + carried_from.heap_bytes()
    }
}

impl Footprint for Tenant {
    fn heap_bytes(&self) -> usize {
        self.0.heap_bytes()
    }
}

impl Footprint for ChatKey {
    fn heap_bytes(&self) -> usize {
        let ChatKey { tenant, id } = self;
        tenant.heap_bytes() + id.heap_bytes()
    }
}

impl Footprint for Injection {
    fn heap_bytes(&self) -> usize {
        let Injection {
            chat,
            key: _,
            text,
            position: _,
            depth: _,
            role: _,
            scan: _,
            enabled: _,
            revision: _,
            running_recap_version: _,
            token_count: _,
            auto_hidden_count: _,
            trigger: _,
            refreshed_at_us: _,
            deleted: _,
            encoded,
        } = self;
        chat.heap_bytes() + text.heap_bytes() + encoded.heap_bytes()
    }
}

impl Footprint for Lease {
    fn heap_bytes(&self) -> usize {
        let Lease { owner, until_us: _ } = self;
        owner.heap_bytes()
    }
}

impl Footprint for ReadSet {
    fn heap_bytes(&self) -> usize {
        let ReadSet {
            messages,
            recap_version: _,
            scene_recap: _,
            entry,
        } = self;
        messages.heap_bytes()
            + entry
                .as_ref()
                .map_or(0, |e| e.book.heap_bytes() + e.uid.heap_bytes())
    }
}

impl Footprint for Job {
    fn heap_bytes(&self) -> usize {
        let Job {
            id,
            chat,
            kind: _,
            state: _,
            message_id,
            attempts: _,
            last_error,
            result,
            created_us: _,
            updated_us: _,
            not_before_us: _,
            automatic: _,
            depends_on,
            lease,
            fence: _,
            read,
            cancelled_by,
            subject,
            lore,
            traced_by,
        } = self;
        id.heap_bytes()
            + chat.heap_bytes()
            + message_id.heap_bytes()
            + last_error.heap_bytes()
            + result.heap_bytes()
            + depends_on.heap_bytes()
            + lease.heap_bytes()
            + read.heap_bytes()
            + cancelled_by.heap_bytes()
            + subject.heap_bytes()
            + traced_by.heap_bytes()
            + lore.as_ref().map_or(0, lore_heap_bytes)
    }
}

/// A lore task's heap bytes: its entity's texts and its uids.
fn lore_heap_bytes(task: &crate::jobs::LoreTask) -> usize {
    let crate::jobs::LoreTask {
        entity,
        uid,
        candidates,
        compacted: _,
    } = task;
    entity.as_ref().map_or(0, |e| {
        let crate::jobs::lore_data::Entity {
            kind,
            name,
            keywords,
            content,
        } = e;
        kind.heap_bytes() + name.heap_bytes() + keywords.heap_bytes() + content.heap_bytes()
    }) + uid.heap_bytes()
        + candidates.heap_bytes()
}
