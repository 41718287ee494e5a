//! Signing in to streamable HTTP servers: the `oauth` and `auth` settings of an entry, the
//! tokens in `<agentDir>/mcp-auth.json` ([`store`]), and the browser sign-in ([`login`]).
//! The OAuth protocol itself (discovery, registration, PKCE, token exchange, refresh) is
//! rmcp's `auth` module; this crate decides where tokens live and how the user is involved.

mod cimd;
pub(crate) mod login;
pub(crate) mod store;

use std::sync::Arc;

use rmcp::transport::auth::AuthClient;
use rmcp::transport::auth::AuthorizationManager;
use serde_json::Value;

/// An entry's `oauth` object: how to sign in when the server asks for it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthConfig {
    /// A client registered beforehand; without it the client registers itself (DCR).
    pub client_id: Option<String>,
    /// As written: `${NAME}` and `!command` are resolved at sign-in.
    pub client_secret: Option<String>,
    pub callback_port: Option<u16>,
    /// The redirect address (loopback http), with the port added when it had none.
    pub callback_url: Option<String>,
    /// Space-separated; the server's advertised scopes when absent.
    pub scope: Option<String>,
    /// The `client_name` of a dynamic registration (`KnightCode` when absent).
    pub client_name: Option<String>,
    /// `cimd` instead of dynamic registration.
    pub cimd: bool,
    /// The authorization server's metadata, when discovery cannot find it.
    pub auth_server_metadata_url: Option<String>,
}

/// The `client_name` a dynamic registration sends unless `oauth.clientName` says otherwise.
pub const DEFAULT_CLIENT_NAME: &str = "KnightCode";

/// Whether `url` names this machine (`localhost`, `127.0.0.1`, `[::1]`).
pub(crate) fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// The key of a server's tokens in `mcp-auth.json`: its address parsed and written back
/// (scheme and host in lower case, default port dropped), without a fragment.
pub fn normalize_url(url: &str) -> String {
    match url::Url::parse(url) {
        Ok(mut parsed) => {
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.to_owned(),
    }
}

/// The scope a `WWW-Authenticate` challenge asks for when its `error` is
/// `insufficient_scope` (RFC 6750 §3.1; empty when it names none); `None` for any other
/// challenge.
pub(crate) fn insufficient_scope(challenge: &str) -> Option<String> {
    let params = challenge_params(challenge);
    let value = |name: &str| {
        params
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.clone())
    };
    (value("error")? == "insufficient_scope").then(|| value("scope").unwrap_or_default())
}

/// The `key=value` and `key="quoted value"` parameters of a challenge, after its scheme.
fn challenge_params(challenge: &str) -> Vec<(String, String)> {
    let mut rest = challenge.trim();
    // The scheme (`Bearer`) is the first word when that word is not itself a parameter.
    if let Some((first, after)) = rest.split_once(char::is_whitespace)
        && !first.contains('=')
    {
        rest = after;
    }
    let mut params = Vec::new();
    loop {
        rest = rest.trim_start_matches(|c: char| c == ',' || c.is_whitespace());
        let Some((key, after)) = rest.split_once('=') else {
            return params;
        };
        let (value, after) = match after.strip_prefix('"') {
            Some(quoted) => {
                let mut value = String::new();
                let mut chars = quoted.char_indices();
                let mut end = quoted.len();
                while let Some((i, c)) = chars.next() {
                    match c {
                        '\\' => value.extend(chars.next().map(|(_, c)| c)),
                        '"' => {
                            end = i + 1;
                            break;
                        }
                        c => value.push(c),
                    }
                }
                (value, &quoted[end..])
            }
            None => {
                let end = after.find(',').unwrap_or(after.len());
                (after[..end].trim().to_owned(), &after[end..])
            }
        };
        params.push((key.trim().to_owned(), value));
        rest = after;
    }
}

/// Every scope of `lists` (space-separated), each once, in order of first appearance.
pub(crate) fn union_scopes<'a>(lists: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut scopes: Vec<String> = Vec::new();
    for scope in lists.into_iter().flat_map(str::split_whitespace) {
        if !scopes.iter().any(|s| s == scope) {
            scopes.push(scope.to_owned());
        }
    }
    scopes
}

fn optional_string(
    name: &str,
    oauth: &serde_json::Map<String, Value>,
    key: &str,
) -> Result<Option<String>, String> {
    match oauth.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("server \"{name}\": oauth.{key} must be a string")),
    }
}

/// Reads and checks an entry's `oauth` object (everything that can be checked before a
/// sign-in runs).
pub(crate) fn parse_oauth(name: &str, oauth: &Value) -> Result<OAuthConfig, String> {
    let Some(map) = oauth.as_object() else {
        return Err(format!("server \"{name}\": oauth must be an object"));
    };
    let callback_port = match map.get("callbackPort") {
        None => None,
        Some(port) => match port.as_u64().and_then(|p| u16::try_from(p).ok()) {
            Some(p) if p > 0 => Some(p),
            _ => {
                return Err(format!(
                    "server \"{name}\": oauth.callbackPort must be an integer from 1 to 65535"
                ));
            }
        },
    };
    let callback_url = match optional_string(name, map, "callbackUrl")? {
        None => None,
        Some(text) => Some(callback_url(name, &text, callback_port)?),
    };
    let cimd = match map.get("clientRegistration") {
        None => false,
        Some(Value::String(s)) if s == "dcr" => false,
        Some(Value::String(s)) if s == "cimd" => true,
        Some(_) => {
            return Err(format!(
                "server \"{name}\": oauth.clientRegistration must be \"dcr\" or \"cimd\""
            ));
        }
    };
    let client_id = optional_string(name, map, "clientId")?;
    let client_name = optional_string(name, map, "clientName")?;
    if cimd && (client_id.is_some() || client_name.is_some()) {
        return Err(format!(
            "server \"{name}\": oauth.clientRegistration \"cimd\" cannot be combined with clientId or clientName"
        ));
    }
    if cimd
        && let Some(url) = callback_url
            .as_deref()
            .and_then(|u| url::Url::parse(u).ok())
        && (url.path() != "/callback" || matches!(url.host(), Some(url::Host::Ipv6(_))))
    {
        return Err(format!(
            "server \"{name}\": oauth.clientRegistration \"cimd\" needs the /callback path on localhost or 127.0.0.1"
        ));
    }
    let auth_server_metadata_url = optional_string(name, map, "authServerMetadataUrl")?;
    if let Some(text) = &auth_server_metadata_url {
        let ok = url::Url::parse(text)
            .is_ok_and(|u| u.scheme() == "https" || (u.scheme() == "http" && is_loopback(&u)));
        if !ok {
            return Err(format!(
                "server \"{name}\": oauth.authServerMetadataUrl must be an https address (or http on localhost)"
            ));
        }
    }
    Ok(OAuthConfig {
        client_id,
        client_secret: optional_string(name, map, "clientSecret")?,
        callback_port,
        callback_url,
        scope: optional_string(name, map, "scope")?,
        client_name,
        cimd,
        auth_server_metadata_url,
    })
}

/// `callbackUrl`: loopback http without query or fragment, its port agreeing with
/// `callbackPort` (and taken from it when the address has none).
fn callback_url(name: &str, text: &str, port: Option<u16>) -> Result<String, String> {
    let invalid = || {
        format!(
            "server \"{name}\": oauth.callbackUrl must be an http address on localhost, 127.0.0.1 or [::1] without query or fragment"
        )
    };
    let mut url = url::Url::parse(text).map_err(|_| invalid())?;
    if url.scheme() != "http"
        || !is_loopback(&url)
        || url.query().is_some()
        || url.fragment().is_some()
    {
        return Err(invalid());
    }
    match (url.port(), port) {
        (Some(a), Some(b)) if a != b => Err(format!(
            "server \"{name}\": oauth.callbackUrl's port {a} differs from oauth.callbackPort {b}"
        )),
        (None, Some(p)) => {
            url.set_port(Some(p)).map_err(|()| invalid())?;
            Ok(url.to_string())
        }
        _ => Ok(url.to_string()),
    }
}

/// Reads and checks an entry's `auth` object: `{provider}`, which sends that KnightCode
/// provider's token; never with `oauth` or an `Authorization` header, and only over https
/// (or to this machine).
pub(crate) fn parse_auth(
    name: &str,
    auth: &Value,
    url: &str,
    has_oauth: bool,
    headers: &[(String, String)],
) -> Result<String, String> {
    let provider = auth
        .as_object()
        .and_then(|a| a.get("provider"))
        .and_then(Value::as_str)
        .filter(|p| !p.trim().is_empty())
        .ok_or_else(|| {
            format!("server \"{name}\": auth must be an object with a \"provider\" string")
        })?;
    if has_oauth {
        return Err(format!(
            "server \"{name}\": auth cannot be combined with oauth"
        ));
    }
    if headers
        .iter()
        .any(|(k, _)| k.eq_ignore_ascii_case("authorization"))
    {
        return Err(format!(
            "server \"{name}\": auth cannot be combined with an Authorization header"
        ));
    }
    let secure = url::Url::parse(url).is_ok_and(|u| u.scheme() == "https" || is_loopback(&u));
    if !secure {
        return Err(format!(
            "server \"{name}\": auth sends a provider's token, so the url must be https (or http on localhost)"
        ));
    }
    Ok(provider.to_owned())
}

/// A KnightCode provider's current token (`auth.provider`), from the session's `auth.json`;
/// `None` when that provider is not logged in.
pub type ProviderToken = Arc<
    dyn Fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Option<String>> + Send>>
        + Send
        + Sync,
>;

/// rmcp's OAuth HTTP client for `url`: sends the stored token (read from `mcp-auth.json` on
/// every request, so another process's sign-in counts), refreshes it under the refresh lock
/// when it is about to expire, and goes out without a token when none is stored (the
/// server's 401 then says that a sign-in is needed).
pub(crate) async fn oauth_client(
    url: &str,
    store: &Arc<store::AuthStore>,
    http: reqwest::Client,
) -> Result<AuthClient<reqwest::Client>, String> {
    let mut manager = manager(url, &http).await.map_err(|e| e.to_string())?;
    manager.set_credential_store(store::FileCredentials {
        store: Arc::clone(store),
        url: url.to_owned(),
    });
    let stored = store.load(url).map_err(|e| e.to_string())?;
    if stored.is_some_and(|c| c.token_response.is_some()) {
        // Finds the token endpoint again, for refreshes.
        manager
            .initialize_from_store()
            .await
            .map_err(|e| format!("cannot use the stored sign-in: {e}"))?;
    }
    Ok(AuthClient::new(http, manager))
}

/// rmcp's OAuth state machine for `url`, its requests going through `http` (the workspace's
/// TLS setup; rmcp's own clients would need a process-wide crypto provider).
pub(crate) async fn manager(
    url: &str,
    http: &reqwest::Client,
) -> Result<AuthorizationManager, rmcp::transport::auth::AuthError> {
    AuthorizationManager::new_with_oauth_http_client(
        url,
        Arc::new(OAuthHttp {
            client: http.clone(),
        }),
    )
    .await
}

/// The OAuth requests (discovery, registration, token) over the caller's client. Redirects
/// follow that client's policy.
struct OAuthHttp {
    client: reqwest::Client,
}

impl rmcp::transport::auth::OAuthHttpClient for OAuthHttp {
    fn execute(
        &self,
        request: rmcp::transport::auth::OAuthHttpRequest,
    ) -> rmcp::transport::auth::OAuthHttpClientFuture<'_> {
        Box::pin(async move {
            let timeout = request.timeout;
            let (parts, body) = request.request.into_parts();
            let mut builder = self
                .client
                .request(parts.method, parts.uri.to_string())
                .headers(parts.headers)
                .body(body);
            if let Some(timeout) = timeout {
                builder = builder.timeout(timeout);
            }
            let response = builder.send().await?;
            let mut answer = http::Response::builder().status(response.status());
            for (name, value) in response.headers() {
                answer = answer.header(name, value);
            }
            let body = response.bytes().await?.to_vec();
            Ok(answer.body(body)?)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::insufficient_scope;
    use super::union_scopes;

    #[test]
    fn challenges_name_the_scope_they_want() {
        assert_eq!(
            insufficient_scope(
                r#"Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a/x""#
            )
            .as_deref(),
            Some("files:read files:write")
        );
        // Unquoted values, another parameter order, an escaped quote elsewhere.
        assert_eq!(
            insufficient_scope(r#"Bearer realm="a \"b\"", scope=admin,error=insufficient_scope"#)
                .as_deref(),
            Some("admin")
        );
        assert_eq!(
            insufficient_scope(r#"Bearer error="insufficient_scope""#).as_deref(),
            Some("")
        );
        assert_eq!(
            insufficient_scope(r#"Bearer error="invalid_token", scope="x""#),
            None
        );
        assert_eq!(
            insufficient_scope(r#"Bearer resource_metadata="https://a/x""#),
            None
        );
        assert_eq!(
            union_scopes(["a b", "", "b c", "a"]),
            ["a", "b", "c"].map(str::to_owned)
        );
    }
}
