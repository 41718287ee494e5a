//! Google application default credentials, for Vertex AI requests without an API key, found
//! where Google's client libraries look: the file `GOOGLE_APPLICATION_CREDENTIALS` names,
//! else gcloud's `~/.config/gcloud/application_default_credentials.json`.
//!
//! - A service account key (`"type": "service_account"`) signs a JWT (RS256) and exchanges
//!   it at its `token_uri` for an access token.
//! - A user login (`"type": "authorized_user"`, from `gcloud auth application-default
//!   login`) spends its refresh token.
//!
//! Without either file, the last source is the metadata server of Google Cloud machines
//! (Compute Engine, GKE, Cloud Run): `GET http://<host>/computeMetadata/v1/instance/
//! service-accounts/default/token` with `Metadata-Flavor: Google`, the host
//! `GCE_METADATA_HOST` (else `169.254.169.254`); it also tells the project
//! (`/computeMetadata/v1/project/project-id`) when none is configured.
//! `METADATA_SERVER_DETECTION=none` turns it off, as in Google's libraries.
//!
//! A token is kept until a minute before it expires, so one serves a whole hour of
//! requests; the credentials file is read again only when a new token is needed.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;

use crate::config_value::EnvSource;
use crate::config_value::ProcessEnv;
use crate::error::ErrorClass;
use crate::error::StreamFailure;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// How long before its expiry a token is replaced.
const MARGIN_MS: u64 = 60_000;

/// The metadata server's address when `GCE_METADATA_HOST` names none.
const METADATA_HOST: &str = "169.254.169.254";
/// How long one call to the metadata server may take: it answers at once on a Google Cloud
/// machine, and elsewhere nothing should wait long for it.
const METADATA_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(3);
/// What a request's URL holds in place of the project until the metadata server told it.
pub(crate) const METADATA_PROJECT: &str = "{metadata-project}";

/// One client's access token (and the metadata server's project), shared by its requests.
#[derive(Default)]
pub(crate) struct GoogleAdc {
    token: tokio::sync::Mutex<Option<Token>>,
    project: tokio::sync::Mutex<Option<String>>,
}

struct Token {
    access: String,
    expires_at_ms: u64,
}

enum Credentials {
    ServiceAccount {
        email: String,
        key_id: Option<String>,
        key_der: Vec<u8>,
        token_uri: String,
    },
    AuthorizedUser {
        client_id: String,
        client_secret: String,
        refresh_token: String,
        token_uri: String,
    },
    /// The metadata server at this host (`host[:port]`).
    Metadata { host: String },
}

/// Why the credentials gave no token (the message continues "… in <file>: <this>").
#[derive(Debug, thiserror::Error)]
enum AdcProblem {
    #[error("not JSON ({0})")]
    NotJson(serde_json::Error),
    #[error("\"{0}\" is missing")]
    Missing(&'static str),
    #[error(
        "credentials of type \"{0}\" are not supported (service_account and authorized_user are)"
    )]
    UnsupportedType(String),
    #[error("the private key is not PEM ({0})")]
    NotPem(base64::DecodeError),
    #[error("the private key is not a PKCS #8 RSA key ({0})")]
    BadKey(ring::error::KeyRejected),
    #[error("signing the token request failed")]
    Sign,
    #[error("the token request to {uri} failed ({source})")]
    Request { uri: String, source: reqwest::Error },
    #[error("{uri} answered {status}: {body}")]
    Refused {
        uri: String,
        status: reqwest::StatusCode,
        body: String,
    },
    #[error("the token answer is not JSON ({0})")]
    AnswerNotJson(serde_json::Error),
    #[error("the token answer has no access_token")]
    NoAccessToken,
    #[error("{what} answered {status}: {body}")]
    MetadataRefused {
        what: &'static str,
        status: reqwest::StatusCode,
        body: String,
    },
}

fn auth_failure(message: String) -> StreamFailure {
    StreamFailure::new(ErrorClass::Auth, message)
}

const WHAT_TO_DO: &str = "Run `gcloud auth application-default login`, set \
     GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or set GOOGLE_CLOUD_API_KEY \
     to use an API key instead.";

const METADATA_WHAT_TO_DO: &str = "Off Google Cloud, run `gcloud auth application-default \
     login`, set GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or set \
     GOOGLE_CLOUD_API_KEY to use an API key instead; METADATA_SERVER_DETECTION=none skips the \
     metadata server.";

impl GoogleAdc {
    /// A valid access token, fetched when there is none or it is about to expire.
    pub(crate) async fn access_token(
        &self,
        http: &reqwest::Client,
        now_ms: u64,
    ) -> Result<String, StreamFailure> {
        self.access_token_in(http, now_ms, &ProcessEnv).await
    }

    pub(crate) async fn access_token_in(
        &self,
        http: &reqwest::Client,
        now_ms: u64,
        env: &dyn EnvSource,
    ) -> Result<String, StreamFailure> {
        let mut slot = self.token.lock().await;
        if let Some(token) = slot.as_ref()
            && token.expires_at_ms > now_ms + MARGIN_MS
        {
            return Ok(token.access.clone());
        }
        let (source, credentials) = find(env)?;
        let token = credentials.fetch(http, now_ms).await.map_err(|why| {
            auth_failure(match &credentials {
                Credentials::Metadata { host } => format!(
                    "Could not get a Google access token from the metadata server at {host} \
                     (the last source of application default credentials): {why}. \
                     {METADATA_WHAT_TO_DO}"
                ),
                _ => format!(
                    "Could not get a Google access token with the application default \
                     credentials in {}: {why}. {WHAT_TO_DO}",
                    source.display()
                ),
            })
        })?;
        let access = token.access.clone();
        *slot = Some(token);
        Ok(access)
    }

    /// The project the metadata server tells, asked once per client (for requests built
    /// without a configured project, see [`METADATA_PROJECT`]).
    pub(crate) async fn metadata_project(
        &self,
        http: &reqwest::Client,
        env: &dyn EnvSource,
    ) -> Result<String, StreamFailure> {
        let mut slot = self.project.lock().await;
        if let Some(project) = slot.as_ref() {
            return Ok(project.clone());
        }
        let host = metadata_host(env);
        let project = metadata_get(http, &host, "/computeMetadata/v1/project/project-id")
            .await
            .map_err(|why| {
                auth_failure(format!(
                    "Vertex AI needs a project: none is set and the metadata server at {host} \
                     did not tell it ({why}). Set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT), or \
                     GOOGLE_CLOUD_API_KEY to use an API key instead."
                ))
            })?;
        let project = project.trim().to_owned();
        *slot = Some(project.clone());
        Ok(project)
    }
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// `GCE_METADATA_HOST` (a host, with a port if any), else the standard address.
fn metadata_host(env: &dyn EnvSource) -> String {
    var(env, "GCE_METADATA_HOST")
        .or_else(|| var(env, "GCE_METADATA_IP"))
        .map(|host| host.trim().trim_end_matches('/').to_owned())
        .unwrap_or_else(|| METADATA_HOST.to_owned())
}

/// The credentials file applications default to: `GOOGLE_APPLICATION_CREDENTIALS`, else
/// gcloud's; `None` when the variable is unset and gcloud's file does not exist.
fn credentials_file(env: &dyn EnvSource) -> Option<PathBuf> {
    if let Some(path) = var(env, "GOOGLE_APPLICATION_CREDENTIALS") {
        return Some(PathBuf::from(path));
    }
    let home = var(env, "HOME").or_else(|| var(env, "USERPROFILE"))?;
    let path = PathBuf::from(home).join(".config/gcloud/application_default_credentials.json");
    path.exists().then_some(path)
}

/// Whether the metadata server is a source: no credentials file, and not switched off.
pub(crate) fn uses_metadata_server(env: &dyn EnvSource) -> bool {
    credentials_file(env).is_none()
        && !var(env, "METADATA_SERVER_DETECTION")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("none"))
}

/// Whether this is probably a Google Cloud machine, judged without the network:
/// `GCE_METADATA_HOST` is set, or the firmware names Google (as Google's libraries check).
pub(crate) fn likely_google_cloud(env: &dyn EnvSource) -> bool {
    if !uses_metadata_server(env) {
        return false;
    }
    if var(env, "GCE_METADATA_HOST").is_some() {
        return true;
    }
    let google = |path: &str| {
        std::fs::read_to_string(path).is_ok_and(|text| text.trim().starts_with("Google"))
    };
    google("/sys/class/dmi/id/product_name") || google("/sys/class/dmi/id/bios_vendor")
}

/// One metadata document.
async fn metadata_get(
    http: &reqwest::Client,
    host: &str,
    path: &'static str,
) -> Result<String, AdcProblem> {
    let uri = format!("http://{host}{path}");
    let response = http
        .get(&uri)
        .header("metadata-flavor", "Google")
        .timeout(METADATA_TIMEOUT)
        .send()
        .await
        .map_err(|source| AdcProblem::Request {
            uri: uri.clone(),
            source,
        })?;
    let status = response.status();
    let text = response
        .text()
        .await
        .map_err(|source| AdcProblem::Request { uri, source })?;
    if !status.is_success() {
        return Err(AdcProblem::MetadataRefused {
            what: path,
            status,
            body: text.trim().to_owned(),
        });
    }
    Ok(text)
}

/// The credentials and where they are: a file, or the metadata server.
fn find(env: &dyn EnvSource) -> Result<(PathBuf, Credentials), StreamFailure> {
    let Some(path) = credentials_file(env) else {
        if uses_metadata_server(env) {
            let host = metadata_host(env);
            return Ok((PathBuf::from(&host), Credentials::Metadata { host }));
        }
        return Err(auth_failure(format!(
            "No Google application default credentials: gcloud's \
             ~/.config/gcloud/application_default_credentials.json does not exist and \
             METADATA_SERVER_DETECTION=none. {WHAT_TO_DO}"
        )));
    };
    let text = std::fs::read_to_string(&path).map_err(|e| {
        auth_failure(format!(
            "Could not read the Google application default credentials at {}: {e}. {WHAT_TO_DO}",
            path.display()
        ))
    })?;
    let credentials = parse(&text).map_err(|why| {
        auth_failure(format!(
            "The Google application default credentials at {} cannot be used: {why}. \
             {WHAT_TO_DO}",
            path.display()
        ))
    })?;
    Ok((path, credentials))
}

fn parse(text: &str) -> Result<Credentials, AdcProblem> {
    let json: Value = serde_json::from_str(text).map_err(AdcProblem::NotJson)?;
    let field = |name: &'static str| {
        json[name]
            .as_str()
            .filter(|v| !v.is_empty())
            .map(str::to_owned)
            .ok_or(AdcProblem::Missing(name))
    };
    let token_uri = json["token_uri"]
        .as_str()
        .filter(|v| !v.is_empty())
        .unwrap_or(TOKEN_URI)
        .to_owned();
    match json["type"].as_str() {
        Some("service_account") => Ok(Credentials::ServiceAccount {
            email: field("client_email")?,
            key_id: json["private_key_id"].as_str().map(str::to_owned),
            key_der: pem_to_der(&field("private_key")?)?,
            token_uri,
        }),
        Some("authorized_user") => Ok(Credentials::AuthorizedUser {
            client_id: field("client_id")?,
            client_secret: field("client_secret")?,
            refresh_token: field("refresh_token")?,
            token_uri,
        }),
        Some(other) => Err(AdcProblem::UnsupportedType(other.to_owned())),
        None => Err(AdcProblem::Missing("type")),
    }
}

/// The DER bytes of a PEM `PRIVATE KEY` (PKCS #8, as service account files hold it).
fn pem_to_der(pem: &str) -> Result<Vec<u8>, AdcProblem> {
    let body: String = pem
        .lines()
        .map(str::trim)
        .filter(|line| !line.starts_with("-----"))
        .collect();
    base64::engine::general_purpose::STANDARD
        .decode(body)
        .map_err(AdcProblem::NotPem)
}

fn b64url(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

pub(crate) fn form_encode(pairs: &[(&str, &str)]) -> String {
    let encode = |text: &str| -> String {
        text.bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    };
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

impl Credentials {
    async fn fetch(&self, http: &reqwest::Client, now_ms: u64) -> Result<Token, AdcProblem> {
        let (uri, form) = match self {
            Self::Metadata { host } => {
                let text = metadata_get(
                    http,
                    host,
                    "/computeMetadata/v1/instance/service-accounts/default/token",
                )
                .await?;
                return token_from(&text, now_ms);
            }
            Self::ServiceAccount {
                email,
                key_id,
                key_der,
                token_uri,
            } => {
                let assertion = signed_jwt(email, key_id.as_deref(), key_der, token_uri, now_ms)?;
                (
                    token_uri,
                    form_encode(&[
                        ("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer"),
                        ("assertion", &assertion),
                    ]),
                )
            }
            Self::AuthorizedUser {
                client_id,
                client_secret,
                refresh_token,
                token_uri,
            } => (
                token_uri,
                form_encode(&[
                    ("grant_type", "refresh_token"),
                    ("client_id", client_id),
                    ("client_secret", client_secret),
                    ("refresh_token", refresh_token),
                ]),
            ),
        };
        let response = http
            .post(uri.as_str())
            .header("content-type", "application/x-www-form-urlencoded")
            .body(form)
            .send()
            .await
            .map_err(|source| AdcProblem::Request {
                uri: uri.clone(),
                source,
            })?;
        let status = response.status();
        let text = response
            .text()
            .await
            .map_err(|source| AdcProblem::Request {
                uri: uri.clone(),
                source,
            })?;
        if !status.is_success() {
            return Err(AdcProblem::Refused {
                uri: uri.clone(),
                status,
                body: text.trim().to_owned(),
            });
        }
        token_from(&text, now_ms)
    }
}

/// An OAuth token answer (`access_token`, `expires_in`), from a token endpoint or the
/// metadata server.
fn token_from(text: &str, now_ms: u64) -> Result<Token, AdcProblem> {
    let json: Value = serde_json::from_str(text).map_err(AdcProblem::AnswerNotJson)?;
    let access = json["access_token"]
        .as_str()
        .filter(|t| !t.is_empty())
        .ok_or(AdcProblem::NoAccessToken)?
        .to_owned();
    let expires_in = json["expires_in"].as_u64().unwrap_or(3600);
    Ok(Token {
        access,
        expires_at_ms: now_ms + expires_in * 1000,
    })
}

/// A service account's JWT bearer assertion, signed RS256 with its private key.
fn signed_jwt(
    email: &str,
    key_id: Option<&str>,
    key_der: &[u8],
    token_uri: &str,
    now_ms: u64,
) -> Result<String, AdcProblem> {
    let mut header = json!({"alg": "RS256", "typ": "JWT"});
    if let Some(kid) = key_id {
        header["kid"] = json!(kid);
    }
    let now = now_ms / 1000;
    let claims = json!({
        "iss": email,
        "scope": SCOPE,
        "aud": token_uri,
        "iat": now,
        "exp": now + 3600,
    });
    let signing_input = format!(
        "{}.{}",
        b64url(header.to_string().as_bytes()),
        b64url(claims.to_string().as_bytes())
    );
    let key = ring::signature::RsaKeyPair::from_pkcs8(key_der).map_err(AdcProblem::BadKey)?;
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(
        &ring::signature::RSA_PKCS1_SHA256,
        &ring::rand::SystemRandom::new(),
        signing_input.as_bytes(),
        &mut signature,
    )
    .map_err(|_| AdcProblem::Sign)?;
    Ok(format!("{signing_input}.{}", b64url(&signature)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unsupported_and_incomplete_files_say_what_is_wrong() {
        let error = |text: &str| match parse(text) {
            Err(why) => why.to_string(),
            Ok(_) => panic!("accepted {text}"),
        };
        assert!(error(r#"{"type": "external_account"}"#).contains("\"external_account\""));
        assert_eq!(
            error(r#"{"type": "authorized_user", "client_id": "a"}"#),
            "\"client_secret\" is missing"
        );
        assert!(error("nope").starts_with("not JSON"));
    }

    #[tokio::test]
    async fn the_metadata_server_is_the_last_source() {
        use crate::config_value::MapEnv;
        let server = knightcode_testkit::GceMetadata::start("ya29.metadata", 3600, Some("kc-gce"))
            .await
            .unwrap();
        let host = server.host();
        let env = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("GCE_METADATA_HOST", host.as_str()),
        ]);
        assert!(uses_metadata_server(&env) && likely_google_cloud(&env));
        let http = crate::http::build_http_client().unwrap();
        let adc = GoogleAdc::default();
        let now = 1_000_000;
        assert_eq!(
            adc.access_token_in(&http, now, &env).await.unwrap(),
            "ya29.metadata"
        );
        // Kept until a minute before it expires.
        adc.access_token_in(&http, now + 3_000_000, &env)
            .await
            .unwrap();
        assert_eq!(server.token_fetches(), 1);
        adc.access_token_in(&http, now + 3_550_000, &env)
            .await
            .unwrap();
        assert_eq!(server.token_fetches(), 2);
        assert_eq!(adc.metadata_project(&http, &env).await.unwrap(), "kc-gce");
        adc.metadata_project(&http, &env).await.unwrap();
        let requests = server.requests();
        assert!(
            requests
                .iter()
                .all(|r| r.header("metadata-flavor") == Some("Google"))
        );
        assert_eq!(
            requests
                .iter()
                .filter(|r| r.path.ends_with("/project-id"))
                .count(),
            1
        );

        // No project there: what to set.
        let bare = knightcode_testkit::GceMetadata::start("t", 3600, None)
            .await
            .unwrap();
        let bare_host = bare.host();
        let env = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("GCE_METADATA_HOST", bare_host.as_str()),
        ]);
        let failure = GoogleAdc::default()
            .metadata_project(&http, &env)
            .await
            .unwrap_err();
        assert!(
            failure.message.contains("GOOGLE_CLOUD_PROJECT"),
            "{}",
            failure.message
        );

        // Nobody answers: the source and how to skip it.
        let closed = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let closed = closed.to_string();
        let env = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("GCE_METADATA_HOST", closed.as_str()),
        ]);
        let failure = GoogleAdc::default()
            .access_token_in(&http, now, &env)
            .await
            .unwrap_err();
        assert_eq!(failure.class, ErrorClass::Auth);
        for part in [
            format!("metadata server at {closed}"),
            "METADATA_SERVER_DETECTION=none".to_owned(),
            "gcloud auth application-default login".to_owned(),
        ] {
            assert!(
                failure.message.contains(&part),
                "{part}: {}",
                failure.message
            );
        }

        // Switched off, or a credentials file named: the metadata server is not a source.
        let off = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("GCE_METADATA_HOST", host.as_str()),
            ("METADATA_SERVER_DETECTION", "none"),
        ]);
        assert!(!likely_google_cloud(&off));
        let failure = GoogleAdc::default()
            .access_token_in(&http, now, &off)
            .await
            .unwrap_err();
        assert!(
            failure.message.contains("does not exist"),
            "{}",
            failure.message
        );
        let file = MapEnv::new([
            ("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/key.json"),
            ("GCE_METADATA_HOST", host.as_str()),
        ]);
        assert!(!uses_metadata_server(&file));
        assert_eq!(server.token_fetches(), 2);
    }

    #[test]
    fn forms_are_percent_encoded() {
        assert_eq!(
            form_encode(&[("grant_type", "urn:x:y"), ("a", "b c&d")]),
            "grant_type=urn%3Ax%3Ay&a=b%20c%26d"
        );
    }
}
