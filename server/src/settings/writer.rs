//! The writer: what Tandem itself writes to a settings file — the rules
//! "Always allow in this project" saves to `.tandem/settings.local.json`,
//! keeping everything else in the file as it was.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::layers::read_file;
use super::SettingsFiles;

/// "Always allow" saved: add `rules` to `permissions.allow` in the
/// workspace's `.tandem/settings.local.json`, keeping everything else in
/// it. A file that is not valid JSON is left alone (the error says so).
pub fn save_local_allow(root: &Path, rules: &[String]) -> Result<PathBuf, String> {
    save_local_allow_keeping(root, rules, crate::trust::TrustStore::for_user())
}

/// [`save_local_allow`], keeping the file's trust in `trust` (`None`: in no store).
fn save_local_allow_keeping(root: &Path, rules: &[String], trust: Option<crate::trust::TrustStore>) -> Result<PathBuf, String> {
    let path = SettingsFiles::with_home(root, None).local;
    // The write happens only if the file still holds what was read here.
    let before = std::fs::read(&path).ok();
    let expected = before.as_deref().map(crate::workspace::fingerprint);
    let mut value = match read_file(&path, Some(root)) {
        Ok(Some(value)) => value,
        Ok(None) => Value::Object(Map::new()),
        Err((err, _)) => return Err(format!("{}: {err}; not changed", path.display())),
    };
    let Some(object) = value.as_object_mut() else { return Err(format!("{}: not a JSON object", path.display())) };
    let permissions = object.entry("permissions").or_insert_with(|| Value::Object(Map::new()));
    let Some(permissions) = permissions.as_object_mut() else {
        return Err(format!("{}: \"permissions\" is not an object; not changed", path.display()));
    };
    let allow = permissions.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    let Some(allow) = allow.as_array_mut() else {
        return Err(format!("{}: \"permissions.allow\" is not a list; not changed", path.display()));
    };
    for rule in rules {
        if !allow.iter().any(|r| r.as_str() == Some(rule)) {
            allow.push(Value::String(rule.clone()));
        }
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
    let dir = path.parent().unwrap_or(root);
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let after = format!("{text}\n");
    crate::workspace::atomic_write(&path, after.as_bytes(), expected).map_err(|e| format!("cannot write {}: {e:?}", path.display()))?;
    // The user's own answer keeps the trust the file had (none: it is all Tandem's now).
    if let Some(store) = trust {
        if let Err(err) = store.keep_written(root, ".tandem/settings.local.json", before.as_deref(), after.as_bytes()) {
            tracing::warn!(%err, "cannot keep the folder's trust for the rules just saved; `tandem trust` trusts them");
        }
    }
    Ok(path)
}

/// The project's local settings file as the permission layer's place for
/// "Always allow in this project" rules.
pub struct LocalAllowRules(pub PathBuf);

impl crate::permissions::ProjectRules for LocalAllowRules {
    fn save_allow(&self, rules: &[String]) -> Result<PathBuf, String> {
        save_local_allow(&self.0, rules)
    }

    fn save_network_allow(&self, host: &str) -> Result<PathBuf, String> {
        let Some(path) = SettingsFiles::for_workspace(&self.0).user else { return Err(format!("{host} was not saved: no home folder to keep user settings in")) };
        save_network_allow(&path, host)
    }
}

/// "Always allow HOST": add `host` to `sandbox.network.allow` in the user's
/// settings file `path`, keeping everything else in it. A network that is
/// `true` or `false` there is left alone (the error says so): turning it
/// into lists is the user's choice.
pub fn save_network_allow(path: &Path, host: &str) -> Result<PathBuf, String> {
    let before = std::fs::read(path).ok();
    let expected = before.as_deref().map(crate::workspace::fingerprint);
    let mut value = match read_file(path, None) {
        Ok(Some(value)) => value,
        Ok(None) => Value::Object(Map::new()),
        Err((err, _)) => return Err(format!("{}: {err}; not changed", path.display())),
    };
    let Some(object) = value.as_object_mut() else { return Err(format!("{}: not a JSON object", path.display())) };
    let sandbox = object.entry("sandbox").or_insert_with(|| Value::Object(Map::new()));
    let Some(sandbox) = sandbox.as_object_mut() else { return Err(format!("{}: \"sandbox\" is not an object; not changed", path.display())) };
    let network = sandbox.entry("network").or_insert_with(|| Value::Object(Map::new()));
    let Some(network) = network.as_object_mut() else {
        return Err(format!("{}: \"sandbox.network\" is not lists but {network}; not changed", path.display()));
    };
    let allow = network.entry("allow").or_insert_with(|| Value::Array(Vec::new()));
    let Some(allow) = allow.as_array_mut() else { return Err(format!("{}: \"sandbox.network.allow\" is not a list; not changed", path.display())) };
    if !allow.iter().any(|entry| entry.as_str() == Some(host)) {
        allow.push(Value::String(host.to_string()));
    }
    let text = serde_json::to_string_pretty(&value).map_err(|e| e.to_string())?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    crate::workspace::atomic_write(path, format!("{text}\n").as_bytes(), expected).map_err(|e| format!("cannot write {}: {e:?}", path.display()))?;
    Ok(path.to_path_buf())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_host_saved_joins_the_user_lists_and_keeps_the_rest() {
        let home = tempfile::tempdir().unwrap();
        let path = home.path().join(".tandem/settings.json");
        save_network_allow(&path, "pypi.org").unwrap();
        let read = |p: &Path| serde_json::from_str::<Value>(&std::fs::read_to_string(p).unwrap()).unwrap();
        assert_eq!(read(&path), json!({"sandbox": {"network": {"allow": ["pypi.org"]}}}));
        std::fs::write(&path, json!({"model": "m", "sandbox": {"network": {"allow": ["a.org"], "allowLocal": true}}}).to_string()).unwrap();
        save_network_allow(&path, "pypi.org").unwrap();
        save_network_allow(&path, "pypi.org").unwrap();
        assert_eq!(read(&path), json!({"model": "m", "sandbox": {"network": {"allow": ["a.org", "pypi.org"], "allowLocal": true}}}));
        std::fs::write(&path, json!({"sandbox": {"network": false}}).to_string()).unwrap();
        assert!(save_network_allow(&path, "pypi.org").unwrap_err().contains("not lists"));
        assert_eq!(read(&path), json!({"sandbox": {"network": false}}));
    }

    #[test]
    fn always_allow_is_saved_to_the_local_settings_keeping_the_rest() {
        let root = tempfile::tempdir().unwrap();
        let local = root.path().join(".tandem/settings.local.json");
        let trust = crate::trust::TrustStore::at(root.path().join("data/trust.json"));
        let save = |rules: &[String]| save_local_allow_keeping(root.path(), rules, Some(trust.clone()));
        let saved = save(&["run_shell(git push:*)".into()]).unwrap();
        assert_eq!(saved, local);
        // All Tandem's: the new file is trusted.
        let source = crate::trust::TrustSource::At(trust.path().to_path_buf());
        assert!(source.trust(root.path()).trusts(".tandem/settings.local.json", &std::fs::read(&local).unwrap()));
        std::fs::write(&local, r#"{"model": "m", "permissions": {"allow": ["run_shell(git push:*)"], "deny": ["x"]}}"#).unwrap();
        save(&["run_shell(git push:*)".into(), "web_fetch(domain:docs.rs)".into()]).unwrap();
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&local).unwrap()).unwrap();
        assert_eq!(value, json!({"model": "m", "permissions": {"allow": ["run_shell(git push:*)", "web_fetch(domain:docs.rs)"], "deny": ["x"]}}));
        // A file written by someone else is not trusted by Tandem adding to it.
        assert!(!source.trust(root.path()).trusts(".tandem/settings.local.json", &std::fs::read(&local).unwrap()));
        std::fs::write(&local, "{broken").unwrap();
        assert!(save(&["x".into()]).unwrap_err().contains("not valid JSON"));
        assert_eq!(std::fs::read_to_string(&local).unwrap(), "{broken");
    }
}
