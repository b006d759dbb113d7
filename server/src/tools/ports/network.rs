//! The network lists (`sandbox.network` in the settings) that both the
//! sandbox's proxy and `web_fetch` obey, so a host refused to a shell
//! command is refused to the fetch tool too, by the same words.
//!
//! - [`NetworkPolicy`] is the merged setting: off, on, or the `allow` and
//!   `deny` lists with `allowLocal`.
//! - [`Network`] is one run's: the policy, and the hosts it refused so far,
//!   each reported to the user once ([`Network::on_refusal`]) and put to
//!   them as a question once ([`Network::ask_refused`]): "allow pypi.org"
//!   for the session ([`HostGrants`], which every run of the session
//!   shares) or saved in the user's settings.
//!
//! A host passes in three steps, each a reason to refuse: the deny list;
//! the allow list (an IP address only when it is listed as such); then
//! what it resolves to, which must not be a loopback, private, link-local
//! or otherwise local address unless `allowLocal` is set: the allowlist is
//! for the internet, not the user's own services. The addresses checked
//! are the ones connected to (no second lookup a DNS answer could change).
//! `localhost` and its subdomains (`pypi.localhost`) resolve to loopback
//! here, as RFC 6761 asks of name resolution APIs, whatever the system's
//! resolver says.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;

use super::questions::QuestionTurn;
use crate::sync::MutexExt;

/// How approved shell commands reach the network.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum NetworkMode {
    /// `false`: no network (unless the user allows one command when asked).
    #[default]
    Off,
    /// `true`: the network as it is, minus the `deny` list if one is set.
    On,
    /// `{"allow": [...]}`: only the listed hosts, through the proxy.
    Listed,
}

/// `sandbox.network`, merged across the settings' layers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NetworkPolicy {
    pub mode: NetworkMode,
    /// Hosts (`pypi.org`), wildcards (`*.npmjs.org`: its subdomains, not
    /// itself) or IP addresses let through in [`NetworkMode::Listed`].
    pub allow: Vec<String>,
    /// Hosts refused in every mode; a project's settings may add to it.
    pub deny: Vec<String>,
    /// Listed hosts may resolve to local addresses (a company's own hosts).
    pub allow_local: bool,
}

/// How one approved command reaches the network.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    /// None at all: its own empty network namespace.
    None,
    /// The network as it is.
    Direct,
    /// Only through Tandem's proxy, which applies the lists.
    Proxied,
}

impl NetworkPolicy {
    /// The route of an approved command; `asked` is true when the user
    /// allowed this one command the network when asked.
    pub fn route(&self, asked: bool) -> Route {
        match self.mode {
            // The user's answer for this one command is the whole network,
            // as the question says (minus the deny list).
            _ if asked => self.unlisted_route(),
            NetworkMode::Listed => Route::Proxied,
            NetworkMode::On => self.unlisted_route(),
            NetworkMode::Off => Route::None,
        }
    }

    /// The whole network, unless a deny list must be enforced.
    fn unlisted_route(&self) -> Route {
        if self.deny.is_empty() { Route::Direct } else { Route::Proxied }
    }

    /// Whether there is anything to enforce: a list of allowed hosts, or
    /// denied ones.
    pub fn enforced(&self) -> bool {
        self.mode == NetworkMode::Listed || !self.deny.is_empty()
    }

    /// Whether `host` passes the lists (before it is resolved). The
    /// allow list applies in [`NetworkMode::Listed`] only; the deny list
    /// always.
    pub fn check_host(&self, host: &str) -> Result<(), String> {
        let host = normalize(host);
        if host.is_empty() {
            return Err("no host was named".to_string());
        }
        if let Some(pattern) = self.deny.iter().find(|pattern| matches(pattern, &host)) {
            return Err(format!("{host} is denied by sandbox.network.deny (\"{pattern}\")"));
        }
        if self.mode != NetworkMode::Listed {
            return Ok(());
        }
        if host.parse::<IpAddr>().is_ok() {
            return if self.allow.iter().any(|entry| normalize(entry) == host) {
                Ok(())
            } else {
                Err(format!("{host} is an IP address, and only addresses listed as such in sandbox.network.allow are let through"))
            };
        }
        if self.allow.iter().any(|pattern| matches(pattern, &host)) {
            Ok(())
        } else {
            Err(format!("{host} is not in sandbox.network.allow"))
        }
    }

    /// Whether the user may be asked to let `host` through: a name (not an
    /// address) that only the allow list refuses.
    fn askable(&self, host: &str) -> bool {
        let host = normalize(host);
        let listed = |list: &[String]| list.iter().any(|pattern| matches(pattern, &host));
        self.mode == NetworkMode::Listed && !host.is_empty() && host.parse::<IpAddr>().is_err() && !listed(&self.deny) && !listed(&self.allow)
    }

    /// Whether local addresses are let through: with `allowLocal`, and for
    /// every host when the network is on (`true` was the whole network).
    fn local_allowed(&self) -> bool {
        self.allow_local || self.mode != NetworkMode::Listed
    }

    /// Check `host`, resolve it, and check what it resolves to: the
    /// addresses to connect to, or why not.
    pub fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        self.check_host(host)?;
        let name = normalize(host);
        let addresses: Vec<SocketAddr> = if let Ok(ip) = name.parse::<IpAddr>() {
            vec![SocketAddr::new(ip, port)]
        } else if name == "localhost" || name.ends_with(".localhost") {
            vec![SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), port), SocketAddr::new(IpAddr::V6(Ipv6Addr::LOCALHOST), port)]
        } else {
            (name.as_str(), port).to_socket_addrs().map_err(|e| format!("{name} cannot be resolved: {e}"))?.collect()
        };
        if addresses.is_empty() {
            return Err(format!("{name} resolves to no address"));
        }
        if !self.local_allowed() {
            if let Some(local) = addresses.iter().find(|address| is_local(address.ip())) {
                return Err(format!(
                    "{name} resolves to a local address ({}); the allowlist is for the internet, set sandbox.network.allowLocal to reach your own hosts",
                    local.ip()
                ));
            }
        }
        Ok(addresses)
    }

    /// The lists in one line, for `tandem doctor`.
    pub fn describe(&self) -> String {
        let deny = if self.deny.is_empty() { String::new() } else { format!("; denied: {}", self.deny.join(", ")) };
        match self.mode {
            NetworkMode::Off => format!("approved commands have no network (unless the user allows one when asked){deny}"),
            NetworkMode::On if self.deny.is_empty() => "approved commands reach the whole network".to_string(),
            NetworkMode::On => format!("approved commands reach the network through Tandem's proxy{deny}"),
            NetworkMode::Listed => {
                let allow = if self.allow.is_empty() { "none".to_string() } else { self.allow.join(", ") };
                let local = if self.allow_local { " (local addresses too: allowLocal)" } else { "" };
                format!("approved commands reach only these hosts, through Tandem's proxy: {allow}{local}{deny}")
            }
        }
    }
}

/// Whether a list entry is one Tandem can match: a host name, `*.` and a
/// domain, or an IP address; no scheme, port or path. `Err` says why not.
pub fn check_entry(entry: &str) -> Result<(), String> {
    let host = normalize(entry);
    if host.parse::<IpAddr>().is_ok() {
        return Ok(());
    }
    let name = host.strip_prefix("*.").unwrap_or(&host);
    let label_ok = |label: &str| !label.is_empty() && label.len() <= 63 && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if name.is_empty() || name.len() > 253 || !name.split('.').all(label_ok) {
        return Err(format!("\"{entry}\" is not a host name such as \"pypi.org\" or \"*.npmjs.org\", nor an IP address (no scheme, port or path)"));
    }
    Ok(())
}

/// Lower case, without a trailing dot or IPv6 brackets.
fn normalize(host: &str) -> String {
    let host = host.trim().trim_end_matches('.');
    let host = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    host.to_ascii_lowercase()
}

/// `pattern` (a list entry) matches `host` (normalized): equal, or
/// `*.domain` and a subdomain of it.
fn matches(pattern: &str, host: &str) -> bool {
    let pattern = normalize(pattern);
    match pattern.strip_prefix("*.") {
        Some(domain) => host.len() > domain.len() + 1 && host.ends_with(domain) && host[..host.len() - domain.len()].ends_with('.'),
        None => pattern == host,
    }
}

/// Loopback, private, link-local, shared (CGNAT), unique-local,
/// unspecified, multicast or documentation: not the internet.
fn is_local(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, ..] = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast()
                || v4.is_documentation()
                || (a == 100 && (64..128).contains(&b))
                || a == 0
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_local(IpAddr::V4(v4));
            }
            let first = v6.segments()[0];
            v6.is_loopback() || v6.is_unspecified() || v6.is_multicast() || (first & 0xfe00) == 0xfc00 || (first & 0xffc0) == 0xfe80
        }
    }
}

/// Told each host the lists refused, once.
pub type RefusalListener = Box<dyn Fn(String) + Send + Sync>;

/// What the user answered about a host the lists refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HostAnswer {
    /// Let it through for the rest of the session.
    Session,
    /// Let it through, and add it to `sandbox.network.allow` in the user's
    /// settings (it holds for the session at once either way).
    Saved,
    /// Keep refusing it (or nobody answered).
    Deny,
}

/// Who asks the user about a refused host (the permission gate, through
/// the front end's prompter): `turn` puts the question in the run's
/// events first. Saving a [`HostAnswer::Saved`] is the asker's.
#[async_trait]
pub trait HostAsker: Send + Sync {
    async fn ask_host(&self, host: &str, reason: &str, turn: Option<QuestionTurn>) -> HostAnswer;
}

/// The hosts the user let through for the session: every run's
/// [`Network`] of one session holds the same set.
#[derive(Debug, Default)]
pub struct HostGrants(Mutex<BTreeSet<String>>);

impl HostGrants {
    pub fn grant(&self, host: &str) {
        self.0.locked().insert(normalize(host));
    }

    pub fn contains(&self, host: &str) -> bool {
        self.0.locked().contains(&normalize(host))
    }
}

/// One run's network: the policy, and the refusals so far.
#[derive(Default)]
pub struct Network {
    pub policy: NetworkPolicy,
    refused: Mutex<BTreeSet<String>>,
    listener: Mutex<Option<RefusalListener>>,
    /// The session's answers "allow HOST".
    grants: Arc<HostGrants>,
    /// `None`: nobody to ask (a script, `tandem ask` without a terminal).
    asker: Option<Arc<dyn HostAsker>>,
    /// Hosts refused for the first time in this run and not asked about
    /// yet, with the reason.
    unasked: Mutex<Vec<(String, String)>>,
}

impl std::fmt::Debug for Network {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Network").field("policy", &self.policy).finish_non_exhaustive()
    }
}

impl Network {
    pub fn new(policy: NetworkPolicy) -> Self {
        Network { policy, ..Network::default() }
    }

    /// A run's network in a session: the session's `grants`, and who asks
    /// the user about each refused host.
    pub fn in_session(policy: NetworkPolicy, grants: Arc<HostGrants>, asker: Option<Arc<dyn HostAsker>>) -> Self {
        Network { policy, grants, asker, ..Network::default() }
    }

    /// Who is told of each host refused from now on (the run's events).
    /// The first listener stays: a sub-agent shares its parent's lists, and
    /// its parent's events outlive its own.
    pub fn on_refusal(&self, listener: RefusalListener) {
        let mut current = self.listener.locked();
        if current.is_none() {
            *current = Some(listener);
        }
    }

    /// [`NetworkPolicy::resolve`], recording a refusal.
    /// A host the user let through for the session counts as listed in
    /// `allow` (the deny list and the local-address check still apply).
    pub fn resolve(&self, host: &str, port: u16) -> Result<Vec<SocketAddr>, String> {
        let resolved = if self.policy.mode == NetworkMode::Listed && self.grants.contains(host) {
            let mut policy = self.policy.clone();
            policy.allow.push(normalize(host));
            policy.resolve(host, port)
        } else {
            self.policy.resolve(host, port)
        };
        resolved.map_err(|reason| self.refused(host, reason))
    }

    /// Record that `host` was refused for `reason`; the user hears of each
    /// host once per run. The reason comes back, to be passed on.
    pub fn refused(&self, host: &str, reason: String) -> String {
        let first = self.refused.locked().insert(normalize(host));
        if first {
            // Only a host the allow list would let through is worth asking
            // about: a denied one or a local address stays refused.
            if self.policy.askable(host) {
                self.unasked.locked().push((normalize(host), reason.clone()));
            }
            if let Some(listener) = self.listener.locked().as_ref() {
                listener(format!("The sandbox's network refused {}: {reason}. To let it through, add it to \"sandbox\": {{\"network\": {{\"allow\": [...]}}}} in ~/.tandem/settings.json.", normalize(host)));
            }
        }
        reason
    }

    /// The hosts refused so far in this run.
    pub fn refused_hosts(&self) -> Vec<String> {
        self.refused.locked().iter().cloned().collect()
    }

    /// Ask the user about each host refused since the last call (each once
    /// per run): "allow HOST" lets it through from the next connection on.
    /// The notes say what was allowed, for the model (empty: nothing).
    pub async fn ask_refused(&self, turn: Option<QuestionTurn>) -> Vec<String> {
        let Some(asker) = &self.asker else { return Vec::new() };
        let unasked = std::mem::take(&mut *self.unasked.locked());
        let mut notes = Vec::new();
        for (host, reason) in unasked {
            match asker.ask_host(&host, &reason, turn.clone()).await {
                HostAnswer::Session | HostAnswer::Saved => {
                    self.grants.grant(&host);
                    notes.push(format!("The user allowed {host} through the sandbox's network: run the command again to reach it."));
                }
                HostAnswer::Deny => notes.push(format!("The user kept {host} refused: do not try to reach it another way.")),
            }
        }
        notes
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn listed(allow: &[&str], deny: &[&str], allow_local: bool) -> NetworkPolicy {
        NetworkPolicy {
            mode: NetworkMode::Listed,
            allow: allow.iter().map(|s| s.to_string()).collect(),
            deny: deny.iter().map(|s| s.to_string()).collect(),
            allow_local,
        }
    }

    #[test]
    fn hosts_are_matched_exactly_or_as_subdomains_of_a_wildcard_and_deny_wins() {
        let policy = listed(&["pypi.org", "*.npmjs.org", "203.0.113.7"], &["evil.npmjs.org"], false);
        let verdicts: Vec<(&str, bool)> = [
            "pypi.org", "PyPI.org.", "files.pypi.org", "registry.npmjs.org", "a.b.npmjs.org", "npmjs.org", "xnpmjs.org",
            "evil.npmjs.org", "203.0.113.7", "[::1]", "198.51.100.1", "example.com",
        ]
        .into_iter()
        .map(|host| (host, policy.check_host(host).is_ok()))
        .collect();
        assert_eq!(
            verdicts,
            vec![
                ("pypi.org", true), ("PyPI.org.", true), ("files.pypi.org", false), ("registry.npmjs.org", true), ("a.b.npmjs.org", true),
                ("npmjs.org", false), ("xnpmjs.org", false), ("evil.npmjs.org", false), ("203.0.113.7", true), ("[::1]", false),
                ("198.51.100.1", false), ("example.com", false),
            ]
        );
        assert!(policy.check_host("198.51.100.1").unwrap_err().contains("IP address"));
        assert!(policy.check_host("evil.npmjs.org").unwrap_err().contains("sandbox.network.deny"));
    }

    #[test]
    fn a_listed_host_that_resolves_to_a_local_address_is_refused_unless_allow_local() {
        let strict = listed(&["*.localhost", "127.0.0.1"], &[], false);
        assert!(strict.resolve("pypi.localhost", 80).unwrap_err().contains("local address (127.0.0.1)"));
        assert!(strict.resolve("127.0.0.1", 80).unwrap_err().contains("allowLocal"));
        let local = NetworkPolicy { allow_local: true, ..strict };
        assert_eq!(local.resolve("pypi.localhost", 80).unwrap()[0], "127.0.0.1:80".parse().unwrap());
        for ip in ["10.1.2.3", "192.168.0.1", "172.16.0.1", "169.254.169.254", "100.64.0.1", "::1", "fd00::1", "fe80::1", "::ffff:127.0.0.1", "0.0.0.0"] {
            assert!(is_local(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["8.8.8.8", "2606:4700::1111"] {
            assert!(!is_local(ip.parse().unwrap()), "{ip}");
        }
    }

    #[test]
    fn routes_follow_the_mode_and_a_deny_list_puts_the_whole_network_behind_the_proxy() {
        let mut policy = NetworkPolicy::default();
        assert_eq!((policy.route(false), policy.route(true)), (Route::None, Route::Direct));
        policy.mode = NetworkMode::On;
        assert_eq!(policy.route(false), Route::Direct);
        policy.deny.push("ads.example".into());
        assert_eq!(policy.route(false), Route::Proxied);
        assert!(policy.check_host("example.com").is_ok() && policy.check_host("ads.example").is_err());
        assert_eq!(listed(&[], &[], false).route(false), Route::Proxied);
        assert_eq!(listed(&[], &[], false).route(true), Route::Direct);
        assert_eq!(listed(&[], &["ads.example"], false).route(true), Route::Proxied);
    }

    #[test]
    fn entries_must_be_hosts_wildcards_or_addresses() {
        for good in ["pypi.org", "*.npmjs.org", "10.0.0.1", "::1", "[::1]", "my_host.corp"] {
            assert!(check_entry(good).is_ok(), "{good}");
        }
        for bad in ["https://pypi.org", "pypi.org:443", "pypi.org/simple", "*", "*.", "a..b", "", "**.x.org"] {
            assert!(check_entry(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn each_refused_host_is_reported_once() {
        let network = Network::new(listed(&["pypi.org"], &[], false));
        let told = std::sync::Arc::new(Mutex::new(Vec::new()));
        let sink = std::sync::Arc::clone(&told);
        network.on_refusal(Box::new(move |message| sink.locked().push(message)));
        for _ in 0..3 {
            assert!(network.resolve("example.com", 443).is_err());
        }
        assert!(network.resolve("Example.com.", 80).is_err());
        let told = told.locked().clone();
        assert_eq!(told.len(), 1, "{told:?}");
        assert!(told[0].starts_with("The sandbox's network refused example.com: example.com is not in sandbox.network.allow"), "{told:?}");
        assert_eq!(network.refused_hosts(), vec!["example.com".to_string()]);
    }

    /// Answers every host with `answer`, counting the questions.
    struct Answers(HostAnswer, Mutex<Vec<String>>);

    #[async_trait]
    impl HostAsker for Answers {
        async fn ask_host(&self, host: &str, _reason: &str, _turn: Option<QuestionTurn>) -> HostAnswer {
            self.1.locked().push(host.to_string());
            self.0
        }
    }

    #[tokio::test]
    async fn a_refused_host_is_asked_once_and_allowed_for_the_session_but_a_denied_one_is_not_asked() {
        let grants = Arc::new(HostGrants::default());
        let asker = Arc::new(Answers(HostAnswer::Session, Mutex::default()));
        let policy = listed(&["pypi.org"], &["ads.example"], true);
        let network = Network::in_session(policy.clone(), Arc::clone(&grants), Some(asker.clone() as Arc<dyn HostAsker>));
        for _ in 0..3 {
            assert!(network.resolve("other.localhost", 80).is_err());
        }
        assert!(network.resolve("ads.example", 80).is_err());
        let notes = network.ask_refused(None).await;
        assert_eq!(*asker.1.locked(), vec!["other.localhost".to_string()]);
        assert!(notes[0].starts_with("The user allowed other.localhost"), "{notes:?}");
        assert!(network.resolve("other.localhost", 80).is_ok());
        assert!(network.ask_refused(None).await.is_empty());
        // The next run of the session: the grant holds, the deny list still wins.
        let next = Network::in_session(policy, grants, Some(asker.clone() as Arc<dyn HostAsker>));
        assert!(next.resolve("Other.localhost.", 80).is_ok());
        assert!(next.resolve("ads.example", 80).is_err());
        assert!(next.ask_refused(None).await.is_empty());
    }

    #[tokio::test]
    async fn a_denied_answer_grants_nothing() {
        let asker = Arc::new(Answers(HostAnswer::Deny, Mutex::default()));
        let network = Network::in_session(listed(&[], &[], true), Arc::default(), Some(asker as Arc<dyn HostAsker>));
        assert!(network.resolve("other.localhost", 80).is_err());
        assert!(network.ask_refused(None).await[0].starts_with("The user kept other.localhost refused"));
        assert!(network.resolve("other.localhost", 80).is_err());
    }
}
