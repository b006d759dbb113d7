//! Elicitation: a server asks the user something in the middle of a call
//! (`elicitation/create`, form mode). The front end answers through its
//! [`Elicitor`] (the terminal asks field by field); with none, the
//! capability is not declared and servers do not ask. A question nobody
//! answers in time is cancelled, so the server's call ends instead of
//! waiting for good.

use serde_json::{Map, Value};

/// One field of the form, from the request's (flat, primitive) JSON schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    pub name: String,
    /// The schema's title or description, else the name.
    pub label: String,
    pub kind: FieldKind,
    pub required: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FieldKind {
    Text,
    Number,
    Integer,
    Boolean,
    /// One of these values.
    Choice(Vec<String>),
}

/// A server's question.
#[derive(Debug, Clone, PartialEq)]
pub struct Elicitation {
    pub server: String,
    pub message: String,
    pub fields: Vec<Field>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// Someone who can answer: the front end's user.
#[async_trait::async_trait]
pub trait Elicitor: Send + Sync {
    async fn elicit(&self, question: &Elicitation) -> Answer;
}

/// The form's fields from `requestedSchema`.
pub fn fields(schema: &Value) -> Vec<Field> {
    let required: Vec<&str> = schema.get("required").and_then(Value::as_array).into_iter().flatten().filter_map(Value::as_str).collect();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else { return Vec::new() };
    properties
        .iter()
        .map(|(name, property)| {
            let text = |key: &str| property.get(key).and_then(Value::as_str).filter(|s| !s.is_empty());
            let choices: Option<Vec<String>> = property
                .get("enum")
                .and_then(Value::as_array)
                .map(|values| values.iter().filter_map(Value::as_str).map(str::to_string).collect());
            let kind = match (choices, text("type")) {
                (Some(values), _) if !values.is_empty() => FieldKind::Choice(values),
                (_, Some("boolean")) => FieldKind::Boolean,
                (_, Some("number")) => FieldKind::Number,
                (_, Some("integer")) => FieldKind::Integer,
                _ => FieldKind::Text,
            };
            Field {
                name: name.clone(),
                label: text("title").or(text("description")).unwrap_or(name).to_string(),
                kind,
                required: required.contains(&name.as_str()),
            }
        })
        .collect()
}

/// A typed answer to one field from what the user typed; `Err` says why not.
pub fn parse_value(kind: &FieldKind, typed: &str) -> Result<Value, String> {
    let typed = typed.trim();
    match kind {
        FieldKind::Text => Ok(Value::String(typed.to_string())),
        FieldKind::Number => typed.parse::<f64>().ok().and_then(serde_json::Number::from_f64).map(Value::Number).ok_or_else(|| format!("\"{typed}\" is not a number")),
        FieldKind::Integer => typed.parse::<i64>().map(Value::from).map_err(|_| format!("\"{typed}\" is not a whole number")),
        FieldKind::Boolean => match typed {
            "yes" | "y" | "true" => Ok(Value::Bool(true)),
            "no" | "n" | "false" => Ok(Value::Bool(false)),
            _ => Err(format!("\"{typed}\" is not yes or no")),
        },
        FieldKind::Choice(values) => values.iter().find(|v| *v == typed).map(|v| Value::String(v.clone())).ok_or_else(|| format!("\"{typed}\" is not one of {}", values.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_schema_becomes_fields_and_typed_answers_are_checked() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "title": "Your name"},
            "age": {"type": "integer"},
            "ok": {"type": "boolean", "description": "Agree?"},
            "size": {"type": "string", "enum": ["S", "M"]}
        }});
        let fields = fields(&schema);
        let kinds: Vec<(&str, &str, &FieldKind, bool)> = fields.iter().map(|f| (f.name.as_str(), f.label.as_str(), &f.kind, f.required)).collect();
        assert!(kinds.contains(&("name", "Your name", &FieldKind::Text, true)));
        assert!(kinds.contains(&("age", "age", &FieldKind::Integer, false)));
        assert!(kinds.contains(&("ok", "Agree?", &FieldKind::Boolean, false)));
        assert!(kinds.contains(&("size", "size", &FieldKind::Choice(vec!["S".into(), "M".into()]), false)));
        assert_eq!(parse_value(&FieldKind::Integer, " 42 "), Ok(json!(42)));
        assert_eq!(parse_value(&FieldKind::Integer, "4.2"), Err("\"4.2\" is not a whole number".into()));
        assert_eq!(parse_value(&FieldKind::Boolean, "y"), Ok(json!(true)));
        assert!(parse_value(&FieldKind::Choice(vec!["S".into()]), "XL").is_err());
    }
}
