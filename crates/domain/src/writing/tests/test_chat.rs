//! A small builder of chats for the writing tests.

use crate::Limits;
use crate::chat::{Chat, ChatEvent};
use crate::message::{MessageData, NewMessage};
use crate::recaps::NewRecap;
use crate::settings::Settings;
use crate::time::UnixMillis;

/// Settings with the given `scene_break_offset` and
/// `scene_break_min_messages`, the rest default.
pub(crate) fn settings(offset: u32, min: u32) -> Settings {
    {
        let mut settings = Settings::default();
        settings.writing.scene_break_offset = offset;
        settings.writing.scene_break_min_messages = min;
        settings
    }
}

/// A chat of `len` messages `m0`, `m1`, ... with text `text <i>`; even
/// ones are written by the user "Ann", odd ones by the character "Bob".
pub(crate) struct Builder {
    len: usize,
    texts: Vec<(usize, String)>,
    names: Vec<(usize, String, bool)>,
    hidden: Vec<usize>,
    thoughts: Vec<usize>,
    narrators: Vec<usize>,
    data: Vec<(usize, MessageData)>,
    recaps: Vec<NewRecap>,
}

/// Starts a [`Builder`] of `len` messages.
pub(crate) fn chat(len: usize) -> Builder {
    Builder {
        len,
        texts: Vec::new(),
        names: Vec::new(),
        hidden: Vec::new(),
        thoughts: Vec::new(),
        narrators: Vec::new(),
        data: Vec::new(),
        recaps: Vec::new(),
    }
}

impl Builder {
    pub(crate) fn text(mut self, i: usize, text: &str) -> Self {
        self.texts.push((i, text.to_owned()));
        self
    }

    pub(crate) fn name(mut self, i: usize, name: &str, is_user: bool) -> Self {
        self.names.push((i, name.to_owned(), is_user));
        self
    }

    pub(crate) fn hidden(mut self, list: &[usize]) -> Self {
        self.hidden.extend_from_slice(list);
        self
    }

    pub(crate) fn thoughts(mut self, list: &[usize]) -> Self {
        self.thoughts.extend_from_slice(list);
        self
    }

    pub(crate) fn narrators(mut self, list: &[usize]) -> Self {
        self.narrators.extend_from_slice(list);
        self
    }

    pub(crate) fn breaks(mut self, list: &[usize]) -> Self {
        for &i in list {
            self.data.push((
                i,
                MessageData {
                    scene_break: Some(true),
                    ..MessageData::default()
                },
            ));
        }
        self
    }

    pub(crate) fn invisible_breaks(mut self, list: &[usize]) -> Self {
        for &i in list {
            self.data.push((
                i,
                MessageData {
                    scene_break: Some(true),
                    scene_break_visible: Some(false),
                    ..MessageData::default()
                },
            ));
        }
        self
    }

    pub(crate) fn scene_recap(mut self, i: usize, recap: &str) -> Self {
        self.data.push((
            i,
            MessageData {
                scene_recap_memory: Some(recap.to_owned()),
                ..MessageData::default()
            },
        ));
        self
    }

    /// A running-recap version covering up to message `scene` (or none).
    pub(crate) fn recap(mut self, content: &str, scene: Option<usize>, scene_count: u32) -> Self {
        self.recaps.push(NewRecap {
            content: content.to_owned(),
            scene_count,
            excluded_count: 0,
            prev_scene_message_id: None,
            new_scene_message_id: scene.map(|i| format!("m{i}")),
        });
        self
    }

    pub(crate) fn build(self) -> Chat {
        let messages = (0..self.len)
            .map(|i| {
                let text = self
                    .texts
                    .iter()
                    .rev()
                    .find(|(j, _)| *j == i)
                    .map_or_else(|| format!("text {i}"), |(_, t)| t.clone());
                let (name, is_user) = self
                    .names
                    .iter()
                    .rev()
                    .find(|(j, _, _)| *j == i)
                    .map_or_else(
                        || {
                            if i % 2 == 0 {
                                ("Ann".to_owned(), true)
                            } else {
                                ("Bob".to_owned(), false)
                            }
                        },
                        |(_, n, u)| (n.clone(), *u),
                    );
                NewMessage {
                    id: format!("m{i}"),
                    name,
                    text,
                    is_user,
                    hidden: self.hidden.contains(&i),
                    is_thoughts: self.thoughts.contains(&i),
                    is_narrator: self.narrators.contains(&i),
                    ..NewMessage::default()
                }
                .build("message", &Limits::default())
                .expect("a valid test message")
            })
            .collect();
        let mut chat = Chat::default();
        chat.apply(ChatEvent::ChatChanged(messages))
            .expect("a valid test chat");
        for (i, data) in &self.data {
            chat.set_message_data(&format!("m{i}"), data)
                .expect("an existing test message");
        }
        for recap in self.recaps {
            chat.add_recap(recap, UnixMillis(0))
                .expect("a valid test recap");
        }
        chat
    }
}
