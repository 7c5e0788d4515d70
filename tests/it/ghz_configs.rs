//! The ghz load-test configurations in `bench/ghz`: each one's `call` names
//! an RPC recapd serves, and every field of its `data` is a field of that
//! RPC's request message (at any depth), so a renamed RPC or field breaks
//! this test rather than the benchmark run. Checked against the descriptors
//! recapd serves for reflection, i.e. the compiled proto.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use prost::Message as _;
use prost_types::field_descriptor_proto::Type;
use prost_types::{DescriptorProto, FileDescriptorSet, MethodDescriptorProto};
use serde_json::Value;

/// The compiled proto, indexed by fully qualified names (`.recap.v1.Event`,
/// `recap.v1.EventService/Publish`).
struct Schema {
    messages: HashMap<String, DescriptorProto>,
    methods: HashMap<String, MethodDescriptorProto>,
}

impl Schema {
    fn load() -> Schema {
        let set = FileDescriptorSet::decode(recapd::grpc::pb::FILE_DESCRIPTOR_SET)
            .expect("the served descriptor set decodes");
        let mut schema = Schema {
            messages: HashMap::new(),
            methods: HashMap::new(),
        };
        for file in set.file {
            let package = file.package().to_owned();
            for message in file.message_type {
                schema.add_message(&format!(".{package}"), message);
            }
            for service in file.service {
                let service_name = service.name().to_owned();
                for method in service.method {
                    let call = format!("{package}.{service_name}/{}", method.name());
                    schema.methods.insert(call, method);
                }
            }
        }
        schema
    }

    fn add_message(&mut self, scope: &str, message: DescriptorProto) {
        let name = format!("{scope}.{}", message.name());
        for nested in &message.nested_type {
            self.add_message(&name, nested.clone());
        }
        self.messages.insert(name, message);
    }

    /// Checks that every key of `data` (at `path`, for messages) is a field
    /// of `type_name`, recursing into message-typed fields.
    fn check(&self, type_name: &str, data: &Value, path: &str) -> Result<(), String> {
        let message = self
            .messages
            .get(type_name)
            .ok_or_else(|| format!("{path}: unknown message type {type_name}"))?;
        let Value::Object(fields) = data else {
            return Err(format!("{path}: {type_name} expects a JSON object"));
        };
        for (key, value) in fields {
            let path = format!("{path}.{key}");
            let field = message
                .field
                .iter()
                .find(|f| f.name() == key || f.json_name() == key)
                .ok_or_else(|| format!("{path}: {type_name} has no field {key:?}"))?;
            if field.r#type() != Type::Message {
                continue;
            }
            let field_type = field.type_name();
            let is_map = self
                .messages
                .get(field_type)
                .is_some_and(|entry| entry.options.as_ref().is_some_and(|o| o.map_entry()));
            match value {
                Value::Array(items) => {
                    for (i, item) in items.iter().enumerate() {
                        self.check(field_type, item, &format!("{path}[{i}]"))?;
                    }
                }
                Value::Object(entries) if is_map => {
                    let entry = &self.messages[field_type];
                    let value_field = entry.field.iter().find(|f| f.name() == "value");
                    if let Some(value_field) = value_field.filter(|f| f.r#type() == Type::Message) {
                        for (map_key, item) in entries {
                            let item_path = format!("{path}[{map_key:?}]");
                            self.check(value_field.type_name(), item, &item_path)?;
                        }
                    }
                }
                Value::Null => {}
                _ => self.check(field_type, value, &path)?,
            }
        }
        Ok(())
    }
}

fn ghz_configs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/ghz");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn every_ghz_config_calls_a_served_rpc_with_known_fields() {
    let schema = Schema::load();
    let configs = ghz_configs();
    assert!(!configs.is_empty(), "no ghz configuration in bench/ghz");
    let mut problems = Vec::new();
    for path in &configs {
        let name = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let config: Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{name}: not JSON: {e}"));
        let Some(call) = config["call"].as_str() else {
            problems.push(format!("{name}: no \"call\""));
            continue;
        };
        let Some(method) = schema.methods.get(call) else {
            problems.push(format!("{name}: {call} is not an RPC of the proto"));
            continue;
        };
        if let Some(data) = config.get("data")
            && let Err(problem) = schema.check(method.input_type(), data, "data")
        {
            problems.push(format!("{name}: {problem}"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_field_check_catches_a_misspelt_field() {
    let schema = Schema::load();
    let publish = &schema.methods["recap.v1.EventService/Publish"];
    let good = serde_json::json!({ "event": { "chat_id": "c", "chat_changed": { "messages": [ { "id": "m1", "is_user": true } ] } } });
    let misspelt = serde_json::json!({ "event": { "chat_id": "c", "chat_changed": { "messages": [ { "id": "m1", "is_usr": true } ] } } });
    assert_eq!(schema.check(publish.input_type(), &good, "data"), Ok(()));
    let problem = schema
        .check(publish.input_type(), &misspelt, "data")
        .expect_err("is_usr is not a field");
    assert!(problem.contains("is_usr"), "{problem}");
}
