//! Google application default credentials, for Vertex AI requests without an API key, found
//! where Google's client libraries look: the file `GOOGLE_APPLICATION_CREDENTIALS` names,
//! else gcloud's `~/.config/gcloud/application_default_credentials.json`.
//!
//! - A service account key (`"type": "service_account"`) signs a JWT (RS256) and exchanges
//!   it at its `token_uri` for an access token.
//! - A user login (`"type": "authorized_user"`, from `gcloud auth application-default
//!   login`) spends its refresh token.
//!
//! A token is kept until a minute before it expires, so one serves a whole hour of
//! requests; the credentials file is read again only when a new token is needed.

use std::path::PathBuf;

use base64::Engine as _;
use serde_json::Value;
use serde_json::json;

use crate::error::ErrorClass;
use crate::error::StreamFailure;

const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
const TOKEN_URI: &str = "https://oauth2.googleapis.com/token";
/// How long before its expiry a token is replaced.
const MARGIN_MS: u64 = 60_000;

/// One client's access token, shared by its requests.
#[derive(Default)]
pub(crate) struct GoogleAdc {
    token: tokio::sync::Mutex<Option<Token>>,
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
}

fn auth_failure(message: String) -> StreamFailure {
    StreamFailure::new(ErrorClass::Auth, message)
}

const WHAT_TO_DO: &str = "Run `gcloud auth application-default login`, set \
     GOOGLE_APPLICATION_CREDENTIALS to a service account key file, or set GOOGLE_CLOUD_API_KEY \
     to use an API key instead.";

impl GoogleAdc {
    /// A valid access token, fetched when there is none or it is about to expire.
    pub(crate) async fn access_token(
        &self,
        http: &reqwest::Client,
        now_ms: u64,
    ) -> Result<String, StreamFailure> {
        let mut slot = self.token.lock().await;
        if let Some(token) = slot.as_ref()
            && token.expires_at_ms > now_ms + MARGIN_MS
        {
            return Ok(token.access.clone());
        }
        let (path, credentials) = find()?;
        let token = credentials.fetch(http, now_ms).await.map_err(|why| {
            auth_failure(format!(
                "Could not get a Google access token with the application default credentials \
                 in {}: {why}. {WHAT_TO_DO}",
                path.display()
            ))
        })?;
        let access = token.access.clone();
        *slot = Some(token);
        Ok(access)
    }
}

/// The credentials file and what it holds.
fn find() -> Result<(PathBuf, Credentials), StreamFailure> {
    let path = match std::env::var_os("GOOGLE_APPLICATION_CREDENTIALS") {
        Some(path) if !path.is_empty() => PathBuf::from(path),
        _ => std::env::home_dir()
            .unwrap_or_default()
            .join(".config/gcloud/application_default_credentials.json"),
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
        let json: Value = serde_json::from_str(&text).map_err(AdcProblem::AnswerNotJson)?;
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

    #[test]
    fn forms_are_percent_encoded() {
        assert_eq!(
            form_encode(&[("grant_type", "urn:x:y"), ("a", "b c&d")]),
            "grant_type=urn%3Ax%3Ay&a=b%20c%26d"
        );
    }
}
