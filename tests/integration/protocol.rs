//! One schema: the run events' TypeScript and Lua shapes, what became of
//! each edit (`EditStatus`, whether it landed, its words; `RunEdit`,
//! `FileEffect`) and the `tandem.ask` answer are generated from the Rust
//! types of `server/src/protocol/` (their JSON Schema, from the same
//! derives serde uses), and `docs/protocol.md` names every event and every
//! `tandem/*` method.
//!
//! The generated files are checked in; when a Rust type changes, these
//! tests fail until they are regenerated:
//!
//! ```text
//! UPDATE_EXPECT=1 cargo test --locked --test integration protocol::
//! ```
#![allow(clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::path::Path;

use schemars::schema_for;
use serde_json::{Map, Value};
use tandem::host::RunEvent;
use tandem::protocol::{AskAnswer, AskStarted, EditStatus, FileEffect};

const HEADER: &str = "Generated from the Rust types (server/src/protocol/) by\n\
     `UPDATE_EXPECT=1 cargo test --locked --test integration protocol::`. Do not edit: the test fails when this\n\
     file differs from what the types give.";

/// One run event variant: its `type`, its description, its fields
/// (name, TypeScript type, required, description).
struct Variant {
    tag: String,
    description: Option<String>,
    fields: Vec<Field>,
}

struct Field {
    name: String,
    ts: String,
    required: bool,
    description: Option<String>,
}

fn schema() -> Value {
    serde_json::to_value(schema_for!(RunEvent)).unwrap()
}

fn defs(schema: &Value) -> Map<String, Value> {
    schema.get("$defs").and_then(Value::as_object).cloned().unwrap_or_default()
}

/// The types the clients name beside the events, each a root of its own.
fn other_roots() -> Vec<Value> {
    [schema_for!(AskAnswer), schema_for!(AskStarted), schema_for!(FileEffect)].into_iter().map(|s| serde_json::to_value(s).unwrap()).collect()
}

/// Every named type: the events' definitions, then each other root's and
/// the root itself (by its title).
fn named_types(schema: &Value) -> Map<String, Value> {
    let mut named = defs(schema);
    for root in other_roots() {
        for (name, def) in defs(&root) {
            named.entry(name).or_insert(def);
        }
        let title = root["title"].as_str().unwrap().to_string();
        let mut def = root.as_object().unwrap().clone();
        for key in ["$schema", "$defs", "title"] {
            def.remove(key);
        }
        named.insert(title, Value::Object(def));
    }
    named
}

fn description(schema: &Value) -> Option<String> {
    schema.get("description").and_then(Value::as_str).map(str::to_string)
}

/// The variants of a `oneOf` of objects tagged by `type`.
fn tagged_variants(schema: &Value) -> Vec<Variant> {
    let variants = schema.get("oneOf").or_else(|| schema.get("anyOf")).and_then(Value::as_array).unwrap_or_else(|| panic!("not a oneOf: {schema}"));
    variants
        .iter()
        .map(|variant| {
            let properties = variant.get("properties").and_then(Value::as_object).unwrap_or_else(|| panic!("a variant without properties: {variant}"));
            let tag = properties
                .get("type")
                .and_then(|t| t.get("const"))
                .and_then(Value::as_str)
                .unwrap_or_else(|| panic!("a variant without a `type` const: {variant}"))
                .to_string();
            let required: BTreeSet<&str> = variant.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let fields = properties
                .iter()
                .filter(|(name, _)| *name != "type")
                .map(|(name, property)| Field { name: name.clone(), ts: ts_type(property), required: required.contains(name.as_str()), description: description(property) })
                .collect();
            Variant { tag, description: description(variant), fields }
        })
        .collect()
}

/// A schema as a TypeScript type.
fn ts_type(schema: &Value) -> String {
    if schema == &Value::Bool(true) || schema.as_object().is_some_and(|o| o.keys().all(|k| k == "description")) {
        return "unknown".into();
    }
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return reference.rsplit('/').next().unwrap_or(reference).to_string();
    }
    if let Some(value) = schema.get("const") {
        return value.to_string().replace('"', "'");
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        return values.iter().map(|v| v.to_string().replace('"', "'")).collect::<Vec<_>>().join(" | ");
    }
    for key in ["oneOf", "anyOf"] {
        if let Some(options) = schema.get(key).and_then(Value::as_array) {
            return options.iter().map(ts_type).collect::<Vec<_>>().join(" | ");
        }
    }
    match schema.get("type") {
        Some(Value::Array(types)) => types.iter().map(|t| simple_type(t.as_str().unwrap_or("?"), schema)).collect::<Vec<_>>().join(" | "),
        Some(Value::String(t)) => simple_type(t, schema),
        _ => panic!("a schema the generator does not know: {schema}"),
    }
}

fn simple_type(name: &str, schema: &Value) -> String {
    match name {
        "string" => "string".into(),
        "integer" | "number" => "number".into(),
        "boolean" => "boolean".into(),
        "null" => "null".into(),
        "array" => {
            let item = schema.get("items").map_or_else(|| "unknown".to_string(), ts_type);
            if item.contains(' ') { format!("({item})[]") } else { format!("{item}[]") }
        }
        "object" => {
            let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                return "Record<string, unknown>".into();
            };
            let required: BTreeSet<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
            let fields: Vec<String> = properties
                .iter()
                .map(|(field, property)| format!("{field}{}: {}", if required.contains(field.as_str()) { "" } else { "?" }, ts_type(property)))
                .collect();
            format!("{{ {} }}", fields.join("; "))
        }
        other => panic!("a JSON type the generator does not know: {other}"),
    }
}

fn pascal(tag: &str) -> String {
    tag.split('_').map(|word| {
        let mut chars = word.chars();
        chars.next().map(|c| c.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
    }).collect()
}

fn doc_comment(text: &str, indent: &str) -> String {
    let text = text.replace("*/", "* /");
    let lines: Vec<&str> = text.lines().collect();
    if lines.len() == 1 {
        return format!("{indent}/** {} */\n", lines[0]);
    }
    let mut out = format!("{indent}/**\n");
    for line in lines {
        out.push_str(&format!("{indent} *{}{line}\n", if line.is_empty() { "" } else { " " }));
    }
    out.push_str(&format!("{indent} */\n"));
    out
}

/// `editors/vscode/src/protocol.generated.ts`.
fn typescript() -> String {
    let schema = schema();
    let mut out = String::new();
    for line in HEADER.lines() {
        out.push_str(&format!("// {}\n", line.trim()));
    }
    out.push_str("/* eslint-disable */\n\n");
    for (name, def) in named_types(&schema) {
        if let Some(text) = description(&def) {
            out.push_str(&doc_comment(&text, ""));
        }
        out.push_str(&format!("export type {name} = {};\n\n", ts_type(&def)));
    }
    let quoted = |s: &EditStatus| format!("'{}'", s.as_str());
    let landed: Vec<String> = EditStatus::ALL.iter().filter(|s| s.landed()).map(quoted).collect();
    out.push_str(&format!(
        "/** The edit statuses whose change is (at least partly) in the file. */\nexport const LANDED_EDIT_STATUSES: readonly EditStatus[] = [{}];\n\n",
        landed.join(", ")
    ));
    out.push_str("/** Each edit status as a run's summary counts it (`written` is `applied` to the user). */\nexport const EDIT_STATUS_WORDS: Readonly<Record<EditStatus, string>> = {\n");
    for status in EditStatus::ALL {
        out.push_str(&format!("  {}: '{}',\n", status.as_str(), status.label()));
    }
    out.push_str("};\n\n");
    let variants = tagged_variants(&schema);
    for variant in &variants {
        if let Some(text) = &variant.description {
            out.push_str(&doc_comment(text, ""));
        }
        out.push_str(&format!("export interface {}Event {{\n  type: '{}';\n", pascal(&variant.tag), variant.tag));
        for field in &variant.fields {
            if let Some(text) = &field.description {
                out.push_str(&doc_comment(text, "  "));
            }
            out.push_str(&format!("  {}{}: {};\n", field.name, if field.required { "" } else { "?" }, field.ts));
        }
        out.push_str("  /** A sub-agent's event: the id of the parent's call it is nested under. */\n  parent?: string;\n}\n\n");
    }
    out.push_str("/** A run event (`tandem/runEvent`'s `event`, a line of `tandem ask --json`). */\nexport type RunEvent =\n");
    for variant in &variants {
        out.push_str(&format!("  | {}Event\n", pascal(&variant.tag)));
    }
    out.pop();
    out.push_str(";\n\nexport type RunEventType = RunEvent['type'];\n\n/** Every run event's `type`, in the Rust type's order. */\nexport const RUN_EVENT_TYPES: readonly RunEventType[] = [\n");
    for variant in &variants {
        out.push_str(&format!("  '{}',\n", variant.tag));
    }
    out.push_str("];\n");
    out
}

/// `editors/nvim/lua/tandem/protocol.lua`.
fn lua() -> String {
    let schema = schema();
    let mut out = String::new();
    for line in HEADER.lines() {
        out.push_str(&format!("-- {}\n", line.trim()));
    }
    out.push_str("--\n-- run_events: each run event's `type` and its fields (required ones first); `parent` on any\n-- of them marks a sub-agent's event.\nreturn {\n  run_events = {\n");
    for variant in tagged_variants(&schema) {
        let mut fields: Vec<&Field> = variant.fields.iter().collect();
        fields.sort_by_key(|f| !f.required);
        let required: Vec<String> = fields.iter().filter(|f| f.required).map(|f| format!("'{}'", f.name)).collect();
        let optional: Vec<String> = fields.iter().filter(|f| !f.required).map(|f| format!("'{}'", f.name)).collect();
        out.push_str(&format!("    ['{}'] = {{ required = {{ {} }}, optional = {{ {} }} }},\n", variant.tag, required.join(", "), optional.join(", ")));
    }
    out.push_str("  },\n  order = {");
    let tags: Vec<String> = tagged_variants(&schema).iter().map(|v| format!(" '{}'", v.tag)).collect();
    out.push_str(&tags.join(","));
    out.push_str(" },\n");
    out.push_str("  -- each edit status: whether its change is (at least partly) in the file, and the words a\n  -- run's summary counts it under; edit_status_order: the order of the counts.\n  edit_statuses = {\n");
    for status in EditStatus::ALL {
        out.push_str(&format!("    ['{}'] = {{ landed = {}, words = '{}' }},\n", status.as_str(), status.landed(), status.label()));
    }
    out.push_str("  },\n  edit_status_order = {");
    let statuses: Vec<String> = EditStatus::ALL.iter().map(|s| format!(" '{}'", s.as_str())).collect();
    out.push_str(&statuses.join(","));
    out.push_str(" },\n  -- the fields of the other shapes (required ones first): the tandem.ask answer, an edit of\n  -- the run (the answer's edits, a tool_result's edit), what one call did to one file.\n  shapes = {\n");
    let named = named_types(&schema);
    for name in ["AskAnswer", "AskStarted", "RunEdit", "FileEffect"] {
        out.push_str(&lua_shape(name, &named[name]));
    }
    out.push_str("  },\n}\n");
    out.replace("{  }", "{}")
}

/// One object's fields as a line of the Lua table, required ones first.
fn lua_shape(name: &str, def: &Value) -> String {
    let required: BTreeSet<&str> = def["required"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
    let (first, rest): (Vec<&String>, Vec<&String>) = def["properties"].as_object().unwrap().keys().partition(|name| required.contains(name.as_str()));
    let quoted = |names: Vec<&String>| names.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ");
    format!("    ['{name}'] = {{ required = {{ {} }}, optional = {{ {} }} }},\n", quoted(first), quoted(rest))
}

#[test]
fn the_typescript_run_events_are_generated_from_the_rust_types() {
    expect_test::expect_file!["../../editors/vscode/src/protocol.generated.ts"].assert_eq(&typescript());
}

#[test]
fn the_lua_run_events_are_generated_from_the_rust_types() {
    expect_test::expect_file!["../../editors/nvim/lua/tandem/protocol.lua"].assert_eq(&lua());
}

#[test]
fn every_run_event_serializes_with_a_type_the_schema_lists() {
    // The schema and serde agree: each variant's `type` is what serde writes.
    let tags: BTreeSet<String> = tagged_variants(&schema()).into_iter().map(|v| v.tag).collect();
    let text = serde_json::to_value(RunEvent::Text { text: "x".into() }).unwrap();
    assert!(tags.contains(text["type"].as_str().unwrap()), "{tags:?}");
    assert!(!tags.contains("nested"), "a nested event is its inner event with `parent`, not a type of its own");
}

/// The `tandem/*` methods the server speaks: every `"tandem/NAME"` string
/// in `server/src/lsp/` (outside tests).
fn tandem_methods() -> BTreeSet<String> {
    let mut methods = BTreeSet::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("server/src/lsp");
    let mut stack = vec![root];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
                continue;
            }
            if path.extension().is_none_or(|e| e != "rs") || path.file_name().is_some_and(|n| n == "tests.rs") {
                continue;
            }
            let source = std::fs::read_to_string(&path).unwrap();
            // Unit tests at the end of a file use made-up methods.
            let source = source.split("#[cfg(test)]").next().unwrap_or_default();
            for (at, _) in source.match_indices("\"tandem/") {
                // The whole literal, and only a method's characters.
                let name: String = source[at + 1..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '/' || *c == '_').collect();
                let whole = source[at + 1 + name.len()..].starts_with('"');
                if whole && name.len() > "tandem/".len() {
                    methods.insert(name);
                }
            }
        }
    }
    methods
}

#[test]
fn docs_protocol_md_names_every_run_event_and_every_tandem_method() {
    let docs = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/protocol.md")).unwrap();
    let events = docs.split("## Run events").nth(1).and_then(|s| s.split("\n## ").next()).expect("docs/protocol.md has a `## Run events` section");
    let missing_events: Vec<String> =
        tagged_variants(&schema()).into_iter().map(|v| v.tag).filter(|tag| !events.contains(&format!("\"type\": \"{tag}\""))).collect();
    assert!(missing_events.is_empty(), "docs/protocol.md's `## Run events` has no `{{\"type\": \"…\"}}` line for {missing_events:?}");
    let methods = tandem_methods();
    assert!(methods.contains("tandem/runEvent"), "the method scan finds nothing: {methods:?}");
    let missing_methods: Vec<&String> = methods.iter().filter(|m| !docs.contains(&format!("`{m}`"))).collect();
    assert!(missing_methods.is_empty(), "docs/protocol.md does not name (as `tandem/…`) {missing_methods:?}");
}
