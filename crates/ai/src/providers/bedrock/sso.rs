//! A profile's role keys from IAM Identity Center (SSO), as the AWS SDK gets them: the access
//! token `aws sso login` cached in `~/.aws/sso/cache/<sha1 of the session name, or of the
//! start URL for a legacy profile>.json` is exchanged at the portal
//! (`GET https://portal.sso.<sso_region>.amazonaws.com/federation/credentials?account_id=…
//! &role_name=…`, token in `x-amz-sso_bearer_token`; `AWS_ENDPOINT_URL_SSO` replaces the
//! host as in the SDK) for `roleCredentials`, kept until shortly before their `expiration`.
//! An expired token is not refreshed: the portal refuses it and the error says to log in
//! again.

use std::collections::HashMap;
use std::path::PathBuf;

use serde::Deserialize;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;
use super::remote::Fetched;
use crate::config_value::EnvSource;

/// What to ask the portal for, and with which token.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct SsoRole {
    profile: String,
    portal: String,
    account_id: String,
    role_name: String,
    token: String,
}

impl std::fmt::Debug for SsoRole {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SsoRole")
            .field("profile", &self.profile)
            .field("portal", &self.portal)
            .finish_non_exhaustive()
    }
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct CachedToken {
    access_token: String,
}

/// The role a profile names, with the cached token for its session.
pub(crate) fn role(
    profile: &str,
    settings: &HashMap<String, String>,
    session: Option<&HashMap<String, String>>,
    env: &dyn EnvSource,
) -> Result<SsoRole, CredentialError> {
    let fail = |why: String| CredentialError::Sso {
        profile: profile.to_owned(),
        why,
    };
    let get = |key: &str| {
        settings
            .get(key)
            .or_else(|| session.and_then(|s| s.get(key)))
            .filter(|v| !v.is_empty())
            .cloned()
    };
    let session_name = settings.get("sso_session").filter(|v| !v.is_empty());
    if let Some(name) = session_name
        && session.is_none()
    {
        return Err(fail(format!(
            "its sso_session \"{name}\" has no [sso-session {name}] section in ~/.aws/config"
        )));
    }
    let missing = |key: &str| fail(format!("it has no {key}"));
    let region = get("sso_region").ok_or_else(|| missing("sso_region"))?;
    let account_id = get("sso_account_id").ok_or_else(|| missing("sso_account_id"))?;
    let role_name = get("sso_role_name").ok_or_else(|| missing("sso_role_name"))?;
    let cache_key = match session_name {
        Some(name) => name.clone(),
        None => get("sso_start_url").ok_or_else(|| missing("sso_start_url"))?,
    };
    let digest = ring::digest::digest(
        &ring::digest::SHA1_FOR_LEGACY_USE_ONLY,
        cache_key.as_bytes(),
    );
    let file: String = digest.as_ref().iter().map(|b| format!("{b:02x}")).collect();
    let home = var(env, "HOME")
        .or_else(|| var(env, "USERPROFILE"))
        .map(PathBuf::from)
        .unwrap_or_default();
    let path = home.join(".aws/sso/cache").join(format!("{file}.json"));
    let text = std::fs::read_to_string(&path)
        .map_err(|_| fail(format!("no cached login in {}", path.display())))?;
    let token: CachedToken = serde_json::from_str(&text).map_err(|e| {
        fail(format!(
            "the cached login {} is unreadable ({e})",
            path.display()
        ))
    })?;
    let portal = var(env, "AWS_ENDPOINT_URL_SSO")
        .or_else(|| var(env, "AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| format!("https://portal.sso.{region}.amazonaws.com"));
    Ok(SsoRole {
        profile: profile.to_owned(),
        portal: portal.trim_end_matches('/').to_owned(),
        account_id,
        role_name,
        token: token.access_token,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Answer {
    role_credentials: RoleCredentials,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RoleCredentials {
    access_key_id: String,
    secret_access_key: String,
    session_token: Option<String>,
    /// Milliseconds since the epoch.
    expiration: Option<i64>,
}

impl SsoRole {
    /// Exchanges the token for the role's keys.
    pub(crate) async fn fetch(&self, http: &reqwest::Client) -> Result<Fetched, CredentialError> {
        let fail = |why: String| CredentialError::Sso {
            profile: self.profile.clone(),
            why,
        };
        let url = format!(
            "{}/federation/credentials?account_id={}&role_name={}",
            self.portal,
            super::sigv4::uri_encode(&self.account_id),
            super::sigv4::uri_encode(&self.role_name)
        );
        let response = http
            .get(&url)
            .header("x-amz-sso_bearer_token", &self.token)
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| fail(crate::http::describe_transport_error(&e)))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| fail(crate::http::describe_transport_error(&e)))?;
        if status.as_u16() == 401 || status.as_u16() == 403 {
            return Err(fail(
                "the portal refused the cached login (expired?)".to_owned(),
            ));
        }
        if !status.is_success() {
            return Err(fail(format!(
                "the portal answered {} {}",
                status.as_u16(),
                body.trim()
            )));
        }
        let answer: Answer = serde_json::from_str(&body)
            .map_err(|e| fail(format!("the portal's answer has no role credentials ({e})")))?;
        let keys = answer.role_credentials;
        Ok(Fetched {
            credentials: AwsCredentials {
                access_key_id: keys.access_key_id,
                secret_access_key: keys.secret_access_key,
                session_token: keys.session_token.filter(|t| !t.is_empty()),
            },
            expires_at_ms: keys.expiration,
        })
    }
}
