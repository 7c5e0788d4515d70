//! Reads a message of `recap.v1` field by field, by name, through the
//! descriptors compiled into recapd (`pb::FILE_DESCRIPTOR_SET`), so that a
//! test can go over every field of a message without naming them: a field
//! added to the proto shows up here with no change to the tests.
//!
//! Covers the field types recapd's messages use (integers, booleans, enums,
//! strings, nested messages, repeated strings and messages); any other type
//! fails the test with the field's name, to be added here when a message
//! first needs it.

use std::collections::HashMap;

use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, EnumDescriptorProto, FileDescriptorSet};
use recapd::grpc::pb;

/// One field's value as read from the wire.
#[derive(Clone, Debug, PartialEq)]
pub enum FieldValue {
    /// A field with presence (`optional`, or a message) that is absent.
    Unset,
    Bool(bool),
    Int(i64),
    /// A `double`.
    Double(f64),
    /// An enum value by its name in the proto, without the prefix the
    /// proto's style adds (`INJECTION_POSITION_IN_CHAT` reads `IN_CHAT`).
    Enum(String),
    Text(String),
    /// A nested message's fields, in declaration order.
    Message(Vec<(String, FieldValue)>),
    List(Vec<FieldValue>),
}

impl FieldValue {
    /// Whether the value holds nothing: an empty string or list, or a
    /// message whose fields all hold nothing.
    pub fn is_empty(&self) -> bool {
        match self {
            FieldValue::Text(text) => text.is_empty(),
            FieldValue::List(items) => items.is_empty(),
            FieldValue::Message(fields) => fields
                .iter()
                .all(|(_, v)| *v == FieldValue::Unset || v.is_empty()),
            _ => false,
        }
    }
}

/// The fields of `message` (a `recap.v1` message, `name` as in the proto,
/// e.g. `"Settings"`), by name, in declaration order.
pub fn fields_of(name: &str, message: &impl Message) -> Vec<(String, FieldValue)> {
    let descriptors = Descriptors::load();
    let descriptor = descriptors.message(&format!(".recap.v1.{name}"));
    descriptors.decode(descriptor, &message.encode_to_vec())
}

/// Every message and enum of the compiled descriptors, by full name
/// (`.recap.v1.Settings`, as field descriptors name their types).
struct Descriptors {
    messages: HashMap<String, DescriptorProto>,
    enums: HashMap<String, EnumDescriptorProto>,
}

impl Descriptors {
    fn load() -> Descriptors {
        let set = FileDescriptorSet::decode(pb::FILE_DESCRIPTOR_SET)
            .expect("recapd's compiled descriptor set decodes");
        let mut descriptors = Descriptors {
            messages: HashMap::new(),
            enums: HashMap::new(),
        };
        for file in set.file {
            let scope = format!(".{}", file.package());
            descriptors.add(&scope, file.message_type, file.enum_type);
        }
        descriptors
    }

    fn add(
        &mut self,
        scope: &str,
        messages: Vec<DescriptorProto>,
        enums: Vec<EnumDescriptorProto>,
    ) {
        for enumeration in enums {
            self.enums
                .insert(format!("{scope}.{}", enumeration.name()), enumeration);
        }
        for mut message in messages {
            let name = format!("{scope}.{}", message.name());
            let nested = std::mem::take(&mut message.nested_type);
            let nested_enums = std::mem::take(&mut message.enum_type);
            self.add(&name, nested, nested_enums);
            self.messages.insert(name, message);
        }
    }

    fn message(&self, full_name: &str) -> &DescriptorProto {
        self.messages
            .get(full_name)
            .unwrap_or_else(|| panic!("no message {full_name} in the descriptors"))
    }

    /// Decodes `bytes`, an encoded `descriptor` message, into its fields.
    fn decode(&self, descriptor: &DescriptorProto, mut bytes: &[u8]) -> Vec<(String, FieldValue)> {
        let mut fields: Vec<(String, FieldValue)> = descriptor
            .field
            .iter()
            .map(|field| {
                let absent = if field.label() == Label::Repeated {
                    FieldValue::List(vec![])
                } else if field.proto3_optional() || field.r#type() == Type::Message {
                    FieldValue::Unset
                } else {
                    match field.r#type() {
                        Type::Bool => FieldValue::Bool(false),
                        Type::String => FieldValue::Text(String::new()),
                        Type::Enum => self.enum_name(field.type_name(), 0),
                        _ => FieldValue::Int(0),
                    }
                };
                (field.name().to_owned(), absent)
            })
            .collect();
        while !bytes.is_empty() {
            let key = read_varint(&mut bytes);
            let (number, wire_type) = (key >> 3, key & 7);
            let index = descriptor
                .field
                .iter()
                .position(|f| u64::try_from(f.number()) == Ok(number))
                .unwrap_or_else(|| panic!("field number {number} is not in the descriptor"));
            let field = &descriptor.field[index];
            let value = match (wire_type, field.r#type()) {
                (0, Type::Bool) => FieldValue::Bool(read_varint(&mut bytes) != 0),
                (0, Type::Int32 | Type::Int64 | Type::Uint32 | Type::Uint64) => {
                    FieldValue::Int(read_varint(&mut bytes) as i64)
                }
                (1, Type::Double) => {
                    let (eight, rest) = bytes.split_at(8);
                    bytes = rest;
                    let eight: [u8; 8] = eight.try_into().expect("split at 8 bytes");
                    FieldValue::Double(f64::from_le_bytes(eight))
                }
                (0, Type::Enum) => {
                    let number = read_varint(&mut bytes) as i32;
                    self.enum_name(field.type_name(), number)
                }
                (2, Type::String) => FieldValue::Text(
                    String::from_utf8(take(&mut bytes).to_vec()).expect("strings are UTF-8"),
                ),
                (2, Type::Message) => {
                    let inner = self.message(field.type_name());
                    FieldValue::Message(self.decode(inner, take(&mut bytes)))
                }
                (wire_type, kind) => panic!(
                    "field {} ({kind:?}, wire type {wire_type}): a type this reader \
                     does not cover yet; add it to tests/it/common/wire.rs",
                    field.name()
                ),
            };
            match &mut fields[index].1 {
                FieldValue::List(items) if field.label() == Label::Repeated => items.push(value),
                slot => *slot = value,
            }
        }
        fields
    }

    /// The enum value `number` of the enum `type_name`, by its name without
    /// the enum's prefix; an unknown number reads as `Int`.
    fn enum_name(&self, type_name: &str, number: i32) -> FieldValue {
        let enumeration = self
            .enums
            .get(type_name)
            .unwrap_or_else(|| panic!("no enum {type_name} in the descriptors"));
        let prefix = format!("{}_", screaming_snake_case(enumeration.name()));
        match enumeration.value.iter().find(|v| v.number() == number) {
            Some(value) => {
                let name = value.name();
                FieldValue::Enum(name.strip_prefix(&prefix).unwrap_or(name).to_owned())
            }
            None => FieldValue::Int(i64::from(number)),
        }
    }
}

/// `InjectionPosition` → `INJECTION_POSITION`.
fn screaming_snake_case(name: &str) -> String {
    let mut out = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c.is_ascii_uppercase() && previous_lower {
            out.push('_');
        }
        previous_lower = c.is_ascii_lowercase() || c.is_ascii_digit();
        out.push(c.to_ascii_uppercase());
    }
    out
}

fn read_varint(bytes: &mut &[u8]) -> u64 {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes
            .split_first()
            .expect("a varint ends before the message");
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return value;
        }
    }
    panic!("a varint longer than 10 bytes")
}

/// A length-delimited field's bytes.
fn take<'a>(bytes: &mut &'a [u8]) -> &'a [u8] {
    let length = usize::try_from(read_varint(bytes)).expect("a length fits usize");
    let (field, rest) = bytes.split_at(length);
    *bytes = rest;
    field
}
