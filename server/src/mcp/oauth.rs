//! OAuth 2.1 for streamable-HTTP MCP servers, on rmcp's `auth` module: it
//! already does protected-resource metadata (RFC 9728, with the `resource`
//! checked against the server's URL), authorization-server metadata
//! (RFC 8414, issuer checked), dynamic client registration (RFC 7591),
//! PKCE S256, the code exchange and the refresh before expiry. What Tandem
//! adds is around it:
//!
//! - [`TokenFile`] keeps the credentials of one server in a 0600 file under
//!   `~/.tandem/mcp-auth/`, named by the server's name, URL and scope: a
//!   server from a folder's file gets its own file (per workspace), never
//!   the one the user signed in with for their own server.
//! - [`login`] is the browser step. A loopback listener takes the redirect;
//!   the authorization URL goes to `show` (the terminal prints it).
//! - [`client`] is the HTTP client a connection uses when signed in.
//! - [`logout`] revokes (RFC 7009, when the server has an endpoint for it)
//!   and deletes.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rmcp::transport::auth::{
    AuthClient, AuthError, AuthorizationCallback, AuthorizationManager, AuthorizationMetadata, AuthorizationRequest, AuthorizationSession,
    CredentialStore, StoredCredentials,
};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::config::{Origin, ServerConfig};

/// How long `login` waits for the browser to come back.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);
/// A callback request larger than this is not one.
const MAX_CALLBACK_BYTES: usize = 16 * 1024;
/// A token file larger than this is not one of ours.
const MAX_TOKEN_FILE_BYTES: u64 = 256 * 1024;
/// The client name Tandem registers under (RFC 7591 `client_name`).
const CLIENT_NAME: &str = "Tandem";

/// The HTTP client connections use, signed in.
pub type Client = AuthClient<reqwest_mcp::Client>;

/// One server's credentials, in a 0600 file. The name carries a hash of the
/// URL and, for a server from the workspace's files, of the workspace: a
/// folder that names the user's server (same name, same URL) still gets a
/// file of its own, empty until someone signs it in.
#[derive(Debug, Clone)]
pub struct TokenFile {
    path: PathBuf,
}

impl TokenFile {
    /// The file for `config` reached at `url`, under `dir` (`~/.tandem/mcp-auth`).
    pub fn for_server(dir: &Path, config: &ServerConfig, root: &Path, url: &str) -> TokenFile {
        use sha2::{Digest, Sha256};
        let scope = match config.origin {
            Origin::UserMcp | Origin::UserSettings | Origin::Client => "user".to_string(),
            Origin::ProjectMcp | Origin::ProjectSettings | Origin::LocalSettings => format!("project:{}", root.display()),
        };
        let digest = Sha256::digest(format!("{scope}\n{}\n{url}", config.name).as_bytes());
        let hash: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        let name: String = config.name.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(40).collect();
        TokenFile { path: dir.join(format!("{name}-{hash}.json")) }
    }

    pub fn at(path: PathBuf) -> TokenFile {
        TokenFile { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    pub fn exists(&self) -> bool {
        self.path.is_file()
    }

    fn read(&self) -> Result<Option<StoredCredentials>, String> {
        match std::fs::metadata(&self.path) {
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(format!("cannot read {}: {err}", self.path.display())),
            Ok(metadata) if !metadata.is_file() || metadata.len() > MAX_TOKEN_FILE_BYTES => {
                return Err(format!("{} is not a token file", self.path.display()))
            }
            Ok(_) => {}
        }
        let text = std::fs::read_to_string(&self.path).map_err(|err| format!("cannot read {}: {err}", self.path.display()))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|err| format!("{} is not a token file ({err}); sign in again", self.path.display()))
    }

    /// Write the whole file: a temporary file in the folder (0600, the
    /// folder 0700) renamed over the old one.
    fn write(&self, credentials: &StoredCredentials) -> std::io::Result<()> {
        use std::io::Write;
        let dir = self.path.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
        }
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            temp.as_file().set_permissions(std::fs::Permissions::from_mode(0o600))?;
        }
        let text = serde_json::to_string_pretty(credentials).map_err(std::io::Error::other)?;
        temp.write_all(text.as_bytes())?;
        temp.persist(&self.path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Delete the file. True when there was one.
    pub fn delete(&self) -> std::io::Result<bool> {
        match std::fs::remove_file(&self.path) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(err),
        }
    }
}

#[async_trait::async_trait]
impl CredentialStore for TokenFile {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        self.read().map_err(AuthError::CredentialStoreError)
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        self.write(&credentials).map_err(|err| AuthError::CredentialStoreError(format!("cannot write {}: {err}", self.path.display())))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        self.delete().map(|_| ()).map_err(|err| AuthError::CredentialStoreError(format!("cannot delete {}: {err}", self.path.display())))
    }
}

/// The reqwest client under the OAuth one: no redirects (an MCP endpoint
/// that redirects is not followed with the user's token), no idle pool.
fn http_client() -> Result<reqwest_mcp::Client, String> {
    reqwest_mcp::Client::builder()
        .redirect(reqwest_mcp::redirect::Policy::none())
        .pool_max_idle_per_host(0)
        .build()
        .map_err(|err| format!("cannot build the HTTP client: {err}"))
}

/// A manager for `url` with its metadata discovered: the server's
/// protected-resource metadata naming an authorization server that
/// publishes its own. The endpoints rmcp would guess for a server that
/// publishes none are not used: such a server is not signed in to.
async fn discovered(url: &str) -> Result<(AuthorizationManager, AuthorizationMetadata), String> {
    check_resource(url).await?;
    let mut manager = AuthorizationManager::new(url).await.map_err(|err| format!("OAuth: {err}"))?;
    let resolution = manager.resolve_metadata().await.map_err(|err| format!("OAuth discovery failed: {err}"))?;
    if !resolution.source.is_discovered() {
        return Err(format!("{url} publishes no OAuth metadata (RFC 9728 protected-resource or RFC 8414 authorization-server)"));
    }
    manager.set_metadata(resolution.metadata.clone());
    Ok((manager, resolution.metadata))
}

/// Refuse a server whose protected-resource metadata (RFC 9728, at its
/// well-known address) names a resource on another host than its own.
/// rmcp would set such a document aside and go on discovering at the
/// server's address; Tandem stops, saying why.
async fn check_resource(url: &str) -> Result<(), String> {
    let parsed = url::Url::parse(url).map_err(|err| format!("{url} is not a URL: {err}"))?;
    let path = parsed.path().trim_end_matches('/');
    let well_known = format!("{}/.well-known/oauth-protected-resource{path}", parsed.origin().ascii_serialization());
    let client = http_client()?;
    // No document (or none readable) is for rmcp's discovery to handle.
    let Ok(response) = client.get(&well_known).send().await else { return Ok(()) };
    if !response.status().is_success() {
        return Ok(());
    }
    let Ok(document) = response.json::<serde_json::Value>().await else { return Ok(()) };
    let Some(resource) = document.get("resource").and_then(serde_json::Value::as_str) else { return Ok(()) };
    let same_host = url::Url::parse(resource).is_ok_and(|r| r.host_str() == parsed.host_str() && r.port_or_known_default() == parsed.port_or_known_default());
    if same_host {
        Ok(())
    } else {
        Err(format!("the server's OAuth metadata names another resource ({resource}) than its address ({url}): refused"))
    }
}

/// The signed-in client for `url`, when `store` holds credentials.
/// `Ok(None)`: not signed in (the server is reached without a token).
pub async fn client(url: &str, store: TokenFile) -> Result<Option<Client>, String> {
    if !store.exists() {
        return Ok(None);
    }
    let (mut manager, _) = discovered(url).await?;
    manager.set_credential_store(store);
    if !manager.initialize_from_store().await.map_err(|err| format!("OAuth: {err}"))? {
        return Ok(None);
    }
    Ok(Some(AuthClient::new(http_client()?, manager)))
}

/// Sign in to the server at `url`: discovery, registration, the browser
/// step (the authorization URL goes to `show`; a loopback listener takes
/// the redirect, within `wait`), the code exchange; the tokens end in `store`.
pub async fn login(url: &str, store: TokenFile, wait: Duration, show: impl FnOnce(&str)) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
        .await
        .map_err(|err| format!("cannot listen on loopback for the redirect: {err}"))?;
    let port = listener.local_addr().map_err(|err| format!("cannot listen on loopback: {err}"))?.port();
    let redirect_uri = format!("http://127.0.0.1:{port}/callback");
    let (mut manager, _) = discovered(url).await?;
    manager.set_credential_store(store);
    let request = AuthorizationRequest::new(redirect_uri.clone()).with_client_name(CLIENT_NAME);
    let session = AuthorizationSession::new(manager, request).await.map_err(|(_, err)| format!("OAuth: {err}"))?;
    show(session.get_authorization_url());
    let callback = tokio::time::timeout(wait, accept_callback(&listener, port))
        .await
        .map_err(|_| format!("the browser did not come back within {} s; run the sign-in again", wait.as_secs()))??;
    session
        .handle_callback_with_issuer(&callback.code, &callback.csrf_token, callback.issuer.as_deref())
        .await
        .map_err(|err| match err {
            AuthError::TokenExchangeFailed(reason) => format!("the token endpoint's answer is not a token: {reason}"),
            other => format!("OAuth: {other}"),
        })?;
    Ok(())
}

/// Wait for the redirect to `/callback` (other requests, a browser's
/// favicon for one, get a 404) and answer the browser.
async fn accept_callback(listener: &tokio::net::TcpListener, port: u16) -> Result<AuthorizationCallback, String> {
    loop {
        let (mut stream, _) = listener.accept().await.map_err(|err| format!("the redirect listener failed: {err}"))?;
        let mut buffer = Vec::new();
        let mut chunk = [0u8; 2048];
        while !buffer.windows(4).any(|w| w == b"\r\n\r\n") && buffer.len() < MAX_CALLBACK_BYTES {
            match stream.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buffer.extend_from_slice(&chunk[..n]),
            }
        }
        let head = String::from_utf8_lossy(&buffer);
        let target = head.lines().next().and_then(|line| line.split_whitespace().nth(1)).unwrap_or("");
        if !target.starts_with("/callback?") {
            let _ = stream.write_all(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await;
            continue;
        }
        let url = format!("http://127.0.0.1:{port}{target}");
        let refused = url::Url::parse(&url)
            .ok()
            .and_then(|u| u.query_pairs().find(|(k, _)| k == "error").map(|(_, v)| v.into_owned()));
        let outcome = match refused {
            Some(error) => Err(format!("the authorization server refused the sign-in: {error}")),
            None => AuthorizationCallback::from_redirect_url(&url).map_err(|err| format!("the redirect is not usable: {err}")),
        };
        let page = match &outcome {
            Ok(_) => "Tandem: signed in. You can close this tab.".to_string(),
            Err(reason) => format!("Tandem: the sign-in failed: {reason}"),
        };
        let response = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = stream.write_all(response.as_bytes()).await;
        return outcome;
    }
}

/// What `logout` did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Logout {
    /// There were no credentials.
    NotSignedIn,
    /// Revoked at the authorization server, and the file deleted.
    Revoked,
    /// The file is deleted; the server could not be told (why).
    Deleted { not_revoked: String },
}

/// Sign out: revoke the tokens where the authorization server has a
/// revocation endpoint (RFC 7009), and delete the file in any case.
pub async fn logout(url: &str, store: TokenFile) -> Result<Logout, String> {
    let credentials = match store.read() {
        Ok(Some(credentials)) => Some(credentials),
        Ok(None) => return Ok(Logout::NotSignedIn),
        // An unreadable file is deleted all the same.
        Err(_) => None,
    };
    let revoked = match credentials {
        Some(credentials) => revoke(url, &credentials).await,
        None => Err("the token file is unreadable".to_string()),
    };
    store.delete().map_err(|err| format!("cannot delete {}: {err}", store.path().display()))?;
    Ok(match revoked {
        Ok(()) => Logout::Revoked,
        Err(not_revoked) => Logout::Deleted { not_revoked },
    })
}

async fn revoke(url: &str, credentials: &StoredCredentials) -> Result<(), String> {
    let (_, metadata) = discovered(url).await?;
    let endpoint = metadata
        .additional_fields
        .get("revocation_endpoint")
        .and_then(serde_json::Value::as_str)
        .ok_or("the authorization server has no revocation endpoint")?
        .to_string();
    if !(endpoint.starts_with("https://") || endpoint.starts_with("http://")) {
        return Err(format!("the revocation endpoint is not an http(s) URL: {endpoint}"));
    }
    let Some(tokens) = &credentials.token_response else { return Ok(()) };
    let tokens = serde_json::to_value(tokens).map_err(|err| err.to_string())?;
    let client = http_client()?;
    // The refresh token first: revoking it ends the grant (RFC 7009 §2.1).
    for hint in ["refresh_token", "access_token"] {
        let Some(token) = tokens.get(hint).and_then(serde_json::Value::as_str) else { continue };
        let body = url::form_urlencoded::Serializer::new(String::new())
            .append_pair("token", token)
            .append_pair("token_type_hint", hint)
            .append_pair("client_id", &credentials.client_id)
            .finish();
        let response = client
            .post(&endpoint)
            .header("Content-Type", "application/x-www-form-urlencoded")
            .body(body)
            .send()
            .await
            .map_err(|err| format!("the revocation request failed: {err}"))?;
        if !response.status().is_success() {
            return Err(format!("the revocation endpoint answered {}", response.status()));
        }
    }
    Ok(())
}
