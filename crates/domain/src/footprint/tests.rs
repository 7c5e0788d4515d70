use super::*;
use crate::Limits;
use crate::chat::{Chat, ChatEvent};
use crate::message::{Message, MessageData, NewMessage, Swipe};

#[test]
fn allocations_count_as_glibc_spends_them() {
    assert_eq!(
        allocation_bytes(0),
        0,
        "a zero-capacity buffer owns nothing"
    );
    assert_eq!(allocation_bytes(1), 32, "the smallest chunk is 32 bytes");
    assert_eq!(allocation_bytes(24), 32);
    assert_eq!(allocation_bytes(25), 48, "8 bytes of header, then up to 16");
    assert_eq!(allocation_bytes(210), 224);
    assert_eq!(allocation_bytes(1000), 1008);
}

#[test]
fn strings_and_vectors_count_their_capacity_not_their_length() {
    let mut text = String::with_capacity(100);
    text.push('a');
    assert_eq!(text.heap_bytes(), allocation_bytes(100));
    assert_eq!(String::new().heap_bytes(), 0);
    let texts = vec!["hello".to_owned(), String::new()];
    assert_eq!(
        texts.heap_bytes(),
        allocation_bytes(2 * size_of::<String>()) + allocation_bytes(5)
    );
    assert_eq!(Some(Box::new(7u64)).heap_bytes(), 32);
    assert_eq!(None::<Box<u64>>.heap_bytes(), 0);
    assert_eq!(
        Arc::new("abc".to_owned()).heap_bytes(),
        allocation_bytes(16 + size_of::<String>()) + 32
    );
}

#[test]
fn a_small_tree_is_one_leaf_and_a_larger_one_has_internal_nodes() {
    assert_eq!(btree_bytes::<i64, u64>(0), 0);
    let leaf = btree_bytes::<i64, u64>(1);
    assert_eq!(leaf, btree_bytes::<i64, u64>(11), "one leaf up to 11");
    assert!(btree_bytes::<i64, u64>(12) > leaf);
    // 1,000 appended entries: 143 leaves of 208 bytes (16 + 11 * 16,
    // rounded) and 25 internal nodes of 304 bytes above them.
    assert_eq!(btree_bytes::<i64, u64>(1_000), 143 * 208 + 25 * 304);
}

#[test]
fn hash_tables_count_their_buckets() {
    assert_eq!(hash_table_bytes(0, 8), 0);
    // 3 usable of 4 buckets; 7 of 8; 14 of 16.
    assert_eq!(hash_table_bytes(3, 8), allocation_bytes(32 + 4 + 16));
    assert_eq!(hash_table_bytes(7, 8), allocation_bytes(64 + 8 + 16));
    assert_eq!(hash_table_bytes(14, 8), allocation_bytes(128 + 16 + 16));
    let map: std::collections::HashMap<u64, u64> = (0..100).map(|i| (i, i)).collect();
    assert_eq!(
        hash_table_bytes(map.capacity(), 16),
        allocation_bytes(128 * 16 + 128 + 16)
    );
}

fn message(id: &str, text: &str) -> Message {
    NewMessage {
        id: id.into(),
        name: "Alice".into(),
        text: text.into(),
        ..Default::default()
    }
    .build("message", &Limits::default())
    .expect("a valid message")
}

#[test]
fn a_message_counts_its_strings_swipes_and_data() {
    let plain = message("m1", &"x".repeat(210));
    let base = plain.heap_bytes();
    // A short id and name are inline, and so is the only swipe: the text
    // alone.
    assert_eq!(base, allocation_bytes(210));
    // A second swipe boxes both swipes, besides its own text.
    let mut two = plain.clone();
    two.push_swipe(Swipe {
        text: "z".repeat(50),
        ..Swipe::default()
    });
    assert_eq!(
        two.heap_bytes(),
        base + allocation_bytes(2 * size_of::<Swipe>()) + allocation_bytes(50)
    );
    // Past 24 bytes an id has an allocation of its own.
    let long_id = message(&"i".repeat(40), &"x".repeat(210));
    assert!(long_id.heap_bytes() >= base + allocation_bytes(40));
    let mut with_memory = plain.clone();
    with_memory.data_mut().memory = Some("y".repeat(100));
    // Data boxes its 152 bytes only once it holds something.
    assert_eq!(
        with_memory.heap_bytes(),
        base + allocation_bytes(size_of::<MessageData>()) + allocation_bytes(100)
    );
}

#[test]
fn a_chat_grows_with_each_message_and_shrinks_back_when_it_goes() {
    let mut chat = Chat::default();
    let empty = chat.resident_bytes();
    assert_eq!(empty, size_of::<Chat>());
    chat.apply(ChatEvent::MessageSent(message("m1", &"x".repeat(210))))
        .unwrap();
    let one = chat.resident_bytes();
    assert!(one > empty + allocation_bytes(210), "{one}");
    chat.set_message_data(
        "m1",
        &MessageData {
            scene_recap_memory: Some("z".repeat(500)),
            ..Default::default()
        },
    )
    .unwrap();
    assert!(chat.resident_bytes() >= one + allocation_bytes(500));
    assert_eq!(chat.resident_bytes(), chat.resident_bytes_recounted());
    chat.apply(ChatEvent::MessageDeleted {
        message_id: "m1".into(),
    })
    .unwrap();
    assert_eq!(chat.resident_bytes(), chat.resident_bytes_recounted());
    assert!(chat.resident_bytes() < one);
}
