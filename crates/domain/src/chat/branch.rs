//! A branch of a chat: the chat as it stood at one of its messages, as
//! SillyTavern's "Create branch" and checkpoints copy it.

use super::Chat;
use crate::message::Message;

/// Why a file's messages are not the start of a chat
/// ([`Chat::starting_with`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotItsStart {
    /// The file has no message to branch at.
    #[error("the file has no message")]
    NoMessage,
    /// The file has more messages than the chat.
    #[error("the file has {file} messages and the chat {chat}")]
    Longer {
        /// The file's messages.
        file: usize,
        /// The chat's.
        chat: usize,
    },
    /// The message at `index` (from 0) differs in speaker or text.
    #[error("its message {index} (from 0) differs from the chat's in speaker or text")]
    Differs {
        /// Its position in the file.
        index: usize,
    },
}

impl Chat {
    /// The chat up to and including message `message_id` (`None`: no such
    /// message): those messages with every swipe and their data (scene
    /// breaks and scene recaps with them), the running-recap versions
    /// whose scene ends at or before that message, and the SillyTavern
    /// file's header. Current: the version current here when it is kept,
    /// else the highest kept; none when no version is kept. A version that
    /// names no scene it ends at is left out (what it covers is unknown).
    /// The result shares nothing with this chat: a change to either never
    /// shows in the other.
    pub fn branch_through(&self, message_id: &str) -> Option<Chat> {
        let (through, _) = self.message(message_id)?;
        let messages: Vec<_> = self
            .messages()
            .take_while(|(seq, _)| *seq <= through)
            .map(|(seq, message)| (seq, message.clone()))
            .collect();
        let ends_in_branch = |id: &Option<String>| {
            id.as_deref()
                .and_then(|id| self.message(id))
                .is_some_and(|(seq, _)| seq <= through)
        };
        let versions: Vec<_> = self
            .recaps()
            .versions()
            .filter(|v| ends_in_branch(&v.new_scene_message_id))
            .cloned()
            .collect();
        let current = self
            .recaps()
            .current_version()
            .filter(|c| versions.iter().any(|v| v.version == *c))
            .or_else(|| versions.iter().map(|v| v.version).max());
        let mut branch = Chat::from_parts(messages, versions, current);
        branch.set_st_file(self.st_file().cloned());
        Some(branch)
    }

    /// The id of this chat's message where `messages` end, when they are
    /// its first messages: the same speaker (`name`, `is_user`) and shown
    /// text, in order, as SillyTavern copies them into a branch file.
    /// Swipes that are not shown and message data are not compared: a
    /// branch made there takes this chat's.
    pub fn starting_with<'a>(
        &self,
        messages: impl ExactSizeIterator<Item = &'a Message>,
    ) -> Result<&str, NotItsStart> {
        let count = messages.len();
        if count == 0 {
            return Err(NotItsStart::NoMessage);
        }
        if count > self.len() {
            return Err(NotItsStart::Longer {
                file: count,
                chat: self.len(),
            });
        }
        let mut last = None;
        for (index, (file, (_, own))) in messages.zip(self.messages()).enumerate() {
            if file.name != own.name || file.is_user != own.is_user || file.text() != own.text() {
                return Err(NotItsStart::Differs { index });
            }
            last = Some(own.id.as_str());
        }
        // `count` is at least 1 and at most the chat's length, so the loop
        // ran and set it.
        last.ok_or(NotItsStart::NoMessage)
    }
}

#[cfg(test)]
mod tests {
    use super::NotItsStart;
    use crate::chat::tests::{ids, msg};
    use crate::chat::{Chat, ChatEvent};
    use crate::message::MessageData;
    use crate::recaps::NewRecap;

    /// Issue 45's story: 36 messages, scene breaks with recaps at m11,
    /// m23 and m35, a running-recap version after each.
    fn story() -> Chat {
        let mut chat = Chat::default();
        chat.apply(ChatEvent::ChatChanged(
            (0..36)
                .map(|i| msg(&format!("m{i}"), &format!("line {i}")))
                .collect(),
        ))
        .expect("36 new messages");
        let mut previous = None;
        for (n, at) in ["m11", "m23", "m35"].into_iter().enumerate() {
            let scene = MessageData {
                scene_break: Some(true),
                scene_recap_memory: Some(format!("scene {n}")),
                ..MessageData::default()
            };
            chat.set_message_data(at, &scene)
                .expect("the message exists");
            chat.add_recap(
                NewRecap {
                    content: format!("recap through scene {n}"),
                    scene_count: n as u32 + 1,
                    excluded_count: 0,
                    prev_scene_message_id: previous.clone(),
                    new_scene_message_id: Some(at.to_owned()),
                },
                crate::time::UnixMillis(1_000 + n as i64),
            )
            .expect("the scenes exist");
            previous = Some(at.to_owned());
        }
        chat
    }

    #[test]
    fn a_branch_keeps_the_messages_scenes_and_versions_up_to_its_message() {
        let chat = story();
        let branch = chat.branch_through("m25").expect("m25 exists");
        assert_eq!(ids(&branch).len(), 26);
        assert_eq!(ids(&branch).last().map(String::as_str), Some("m25"));
        let versions: Vec<u32> = branch.recaps().versions().map(|v| v.version).collect();
        assert_eq!(versions, [0, 1]);
        assert_eq!(
            branch.recaps().current().map(|v| v.content.as_str()),
            Some("recap through scene 1")
        );
        let recaps: Vec<_> = branch
            .messages()
            .filter_map(|(_, m)| m.data().scene_recap_memory.clone())
            .collect();
        assert_eq!(recaps, ["scene 0", "scene 1"]);
        assert_eq!(branch.scene_breaks().len(), 2);
    }

    #[test]
    fn a_branch_keeps_the_current_version_chosen_and_none_before_the_first_scene() {
        let mut chat = story();
        chat.select_recap(0).expect("version 0 exists");
        let branch = chat.branch_through("m30").expect("m30 exists");
        assert_eq!(branch.recaps().current_version(), Some(0));
        let early = chat.branch_through("m5").expect("m5 exists");
        assert_eq!(early.recaps().versions().count(), 0);
        assert!(early.recaps().current().is_none());
        assert!(chat.branch_through("m99").is_none());
    }

    #[test]
    fn a_files_messages_are_the_chats_start_when_speakers_and_texts_match() {
        let chat = story();
        let start: Vec<_> = chat.messages().take(26).map(|(_, m)| m.clone()).collect();
        assert_eq!(chat.starting_with(start.iter()), Ok("m25"));
        let mut edited = start.clone();
        edited[7] = msg("m7", "a line the chat never had");
        assert_eq!(
            chat.starting_with(edited.iter()),
            Err(NotItsStart::Differs { index: 7 })
        );
        let mut renamed = start.clone();
        renamed[3].name = "Someone else".into();
        assert_eq!(
            chat.starting_with(renamed.iter()),
            Err(NotItsStart::Differs { index: 3 })
        );
        assert_eq!(chat.starting_with([].iter()), Err(NotItsStart::NoMessage));
        let mut longer: Vec<_> = chat.messages().map(|(_, m)| m.clone()).collect();
        longer.push(msg("m36", "one more"));
        assert_eq!(
            chat.starting_with(longer.iter()),
            Err(NotItsStart::Longer { file: 37, chat: 36 })
        );
    }

    #[test]
    fn a_branch_and_its_chat_change_apart() {
        let chat = story();
        let mut branch = chat.branch_through("m25").expect("m25 exists");
        branch
            .apply(ChatEvent::MessageSent(msg("b0", "only in the branch")))
            .expect("a new id");
        assert_eq!(branch.len(), 27);
        assert_eq!(chat.len(), 36);
        assert!(chat.message("b0").is_none());
    }
}
