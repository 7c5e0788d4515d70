//! The writing rules' tests beyond each module's own: properties on
//! random chats, and the builder of test chats they share.

mod proptests;
pub(crate) mod test_chat;
