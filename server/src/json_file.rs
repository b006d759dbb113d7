//! Reading a JSON file a person wrote (settings, `.mcp.json`), strictly:
//! anything that is not plainly one JSON object in a regular file is an
//! error naming why, so that a caller can fail closed instead of running
//! with part of what the file says.
//!
//! - It is read as every file a folder brings is ([`crate::confined_file`]):
//!   only a regular file (a FIFO or `/dev/zero` is refused, also when
//!   swapped in between a look and the read), at most [`MAX_BYTES`].
//! - A duplicate key at any depth is an error, with its line and column:
//!   serde_json keeps the last value, so a second `"permissions"` would
//!   silently drop the first one's deny rules.
//! - A UTF-8 byte order mark (Windows editors write one) is skipped.
//!   Comments are not JSON: they are an error that says so.
//! - A file that must stay inside a folder (a project's settings, inside
//!   the workspace) may be a symlink only to a file in that folder.

use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The largest file read: settings are hand-written, a megabyte is plenty.
pub const MAX_BYTES: u64 = 1024 * 1024;

/// Why a file cannot be used, and where in it when its JSON is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonFileError {
    pub message: String,
    /// Line and column (from 1), when the text is at fault.
    pub position: Option<(usize, usize)>,
}

impl JsonFileError {
    fn new(message: impl Into<String>) -> Self {
        JsonFileError { message: message.into(), position: None }
    }
}

impl std::fmt::Display for JsonFileError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{} (line {line}, column {column})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// A store of the user's data folder that Tandem writes itself (consent,
/// workspace trust): its content, or `T::default()` when it is missing, not
/// a regular file, larger than `max_bytes` or not valid JSON — an empty
/// store, so that a broken one grants nothing (fail closed) — with a log
/// line naming `what` for all but a missing one.
pub fn read_store<T: serde::de::DeserializeOwned + Default>(path: &Path, max_bytes: u64, what: &str) -> T {
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() || metadata.len() > max_bytes => {
            tracing::warn!(path = %path.display(), "the {what} is not a file or too large; ignoring it");
            return T::default();
        }
        Ok(_) => {}
        Err(_) => return T::default(),
    }
    match std::fs::read_to_string(path).map(|text| serde_json::from_str(&text)) {
        Ok(Ok(file)) => file,
        Ok(Err(err)) => {
            tracing::warn!(path = %path.display(), %err, "the {what} is not valid JSON; ignoring it");
            T::default()
        }
        Err(err) => {
            tracing::warn!(path = %path.display(), %err, "cannot read the {what}");
            T::default()
        }
    }
}

/// Write a store ([`read_store`]) whole: pretty JSON in a temporary file
/// of its folder (made when missing), renamed over the old one, so that a
/// reader sees the old store or the new, never half of one.
pub fn write_store<T: serde::Serialize>(path: &Path, value: &T) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    let text = serde_json::to_string_pretty(value).map_err(std::io::Error::other)?;
    temp.write_all(text.as_bytes())?;
    temp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

/// The file's bytes: `Ok(None)` when there is no such file. `inside`: the
/// folder the file (after following symlinks) must be in. Read the one
/// way every loader reads ([`crate::confined_file`]).
pub fn read_bytes(path: &Path, inside: Option<&Path>) -> Result<Option<Vec<u8>>, JsonFileError> {
    use crate::confined_file::Refusal;
    let folders = inside.map(|folder| vec![folder.to_path_buf()]);
    crate::confined_file::read(path, folders.as_deref(), MAX_BYTES).map_err(|refusal| match refusal {
        Refusal::Outside { .. } => JsonFileError::new(format!("{refusal}: a project's settings must be its own files")),
        Refusal::TooLarge { bytes, .. } => JsonFileError::new(format!("it is {bytes} bytes; settings files are at most {MAX_BYTES}")),
        refusal => JsonFileError::new(refusal.to_string()),
    })
}

/// The file's JSON object: `Ok(None)` when there is no file, or it holds
/// nothing but white space.
pub fn read_object(path: &Path, inside: Option<&Path>) -> Result<Option<Value>, JsonFileError> {
    let Some(bytes) = read_bytes(path, inside)? else { return Ok(None) };
    parse_object(&bytes)
}

/// Text of a settings file as a JSON object (`None`: only white space).
pub fn parse_object(bytes: &[u8]) -> Result<Option<Value>, JsonFileError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let text = std::str::from_utf8(bytes).map_err(|err| JsonFileError::new(format!("it is not UTF-8 text: {err}")))?;
    if text.trim().is_empty() {
        return Ok(None);
    }
    let value = parse_strict(text)?;
    if !value.is_object() {
        return Err(JsonFileError::new("expected a JSON object at the top"));
    }
    Ok(Some(value))
}

/// JSON text to a value, refusing duplicate keys at any depth.
pub fn parse_strict(text: &str) -> Result<Value, JsonFileError> {
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let parsed = StrictValue::deserialize(&mut deserializer).and_then(|value| deserializer.end().map(|()| value));
    parsed.map(|StrictValue(value)| value).map_err(|err| {
        // serde_json's message ends with " at line L column C": the position is kept apart.
        let message = err.to_string();
        let message = message.split(" at line ").next().unwrap_or(&message).to_string();
        let position = (err.line() > 0).then(|| (err.line(), err.column()));
        let at_comment = position.and_then(|(line, column)| text.lines().nth(line - 1).map(|l| (l, column))).is_some_and(|(line, column)| {
            let rest: String = line.chars().skip(column.saturating_sub(1)).collect();
            rest.starts_with("//") || rest.starts_with("/*")
        });
        let message = if at_comment {
            "a comment: comments are not JSON, remove it (settings files are plain JSON)".to_string()
        } else if message.starts_with("duplicate key") {
            message
        } else {
            format!("not valid JSON: {message}")
        };
        JsonFileError { message, position }
    })
}

/// A [`Value`] whose objects have no key twice.
struct StrictValue(Value);

impl<'de> Deserialize<'de> for StrictValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(StrictVisitor).map(StrictValue)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(StrictVisitor)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(StrictValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom(format!(
                    "duplicate key \"{key}\": a JSON object names each key once (the earlier value would be lost)"
                )));
            }
            let StrictValue(value) = map.next_value()?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn error(text: &str) -> String {
        parse_object(text.as_bytes()).unwrap_err().to_string()
    }

    #[test]
    fn duplicate_keys_at_any_depth_are_errors_with_their_position() {
        expect_test::expect![[r#"duplicate key "permissions": a JSON object names each key once (the earlier value would be lost) (line 3, column 14)"#]]
            .assert_eq(&error("{\"permissions\": {\"deny\": [\"read_file(.env)\"]},\n \"model\": \"m\",\n \"permissions\": {\"allow\": [\"run_shell\"]}}"));
        assert!(error(r#"{"permissions": {"deny": ["a"], "deny": []}}"#).starts_with("duplicate key \"deny\""));
        assert!(error(r#"{"a": [{"x": 1, "x": 2}]}"#).starts_with("duplicate key \"x\""));
        // The same key in two objects is not a duplicate.
        assert_eq!(parse_object(br#"{"a": {"x": 1}, "b": {"x": 2}}"#).unwrap().unwrap()["b"]["x"], 2);
    }

    #[test]
    fn a_bom_is_skipped_and_comments_are_named() {
        let value = parse_object(b"\xEF\xBB\xBF{\"model\": \"m\"}").unwrap().unwrap();
        assert_eq!(value["model"], "m");
        expect_test::expect![[r#"a comment: comments are not JSON, remove it (settings files are plain JSON) (line 2, column 2)"#]]
            .assert_eq(&error("{\n // the model\n \"model\": \"m\"}"));
        assert!(error("{\"model\": \"m\" /* x */}").starts_with("a comment"), "{}", error("{\"model\": \"m\" /* x */}"));
        assert_eq!(error("[1]"), "expected a JSON object at the top");
        assert_eq!(parse_object(b" \n").unwrap(), None);
        assert!(error("{\"a\": 1} {\"b\": 2}").starts_with("not valid JSON: trailing characters"));
    }

    #[cfg(unix)]
    #[test]
    fn only_a_regular_file_is_read_and_never_past_the_limit() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.json");
        let c_path = std::ffi::CString::new(fifo.display().to_string()).unwrap();
        // SAFETY: a valid, NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        // A FIFO with no writer would block a plain open and read forever.
        assert_eq!(read_object(&fifo, None).unwrap_err().message, "it is not a regular file (a FIFO)");
        assert_eq!(read_object(Path::new("/dev/zero"), None).unwrap_err().message, "it is not a regular file (a device)");
        assert_eq!(read_object(dir.path(), None).unwrap_err().message, "it is not a regular file (a folder)");
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; MAX_BYTES as usize + 1]).unwrap();
        assert!(read_object(&big, None).unwrap_err().message.starts_with("it is 1048577 bytes"));
        assert_eq!(read_object(&dir.path().join("missing.json"), None).unwrap(), None);
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_must_stay_in_its_folder() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (workspace, outside) = (base.join("ws"), base.join("outside"));
        std::fs::create_dir_all(workspace.join(".tandem")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("s.json"), "{\"model\": \"theirs\"}").unwrap();
        std::fs::write(workspace.join("shared.json"), "{\"model\": \"ours\"}").unwrap();
        let link = workspace.join(".tandem/settings.json");
        crate::platform::symlink(outside.join("s.json"), &link).unwrap();
        let err = read_object(&link, Some(&workspace)).unwrap_err().message;
        assert!(err.starts_with("it is a symlink to ") && err.contains("outside"), "{err}");
        // Without a folder to stay in (the user's own file), a link is followed.
        assert_eq!(read_object(&link, None).unwrap().unwrap()["model"], "theirs");
        std::fs::remove_file(&link).unwrap();
        crate::platform::symlink("../shared.json", &link).unwrap();
        assert_eq!(read_object(&link, Some(&workspace)).unwrap().unwrap()["model"], "ours");
        std::fs::remove_file(&link).unwrap();
        crate::platform::symlink("/dev/zero", &link).unwrap();
        assert!(read_object(&link, None).unwrap_err().message.contains("not a regular file"));
        std::fs::remove_file(&link).unwrap();
        crate::platform::symlink(base.join("nothing"), &link).unwrap();
        assert_eq!(read_object(&link, None).unwrap_err().message, "it is a symlink to nothing");
    }
}
