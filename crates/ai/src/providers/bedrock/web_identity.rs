//! A role's keys for a web identity token (EKS service accounts, IRSA, or any OIDC token),
//! as the AWS SDK gets them: the token in the file `AWS_WEB_IDENTITY_TOKEN_FILE` (or a
//! profile's `web_identity_token_file`) is sent to STS `AssumeRoleWithWebIdentity` (the
//! query API: a form `POST`, unsigned) for `AWS_ROLE_ARN` (or the profile's `role_arn`) and
//! the session `AWS_ROLE_SESSION_NAME` (or `role_session_name`); the XML answer holds
//! `<Credentials>` with `AccessKeyId`, `SecretAccessKey`, `SessionToken` and `Expiration`.
//!
//! STS is `https://sts.<region>.amazonaws.com` when a region is set, else
//! `https://sts.amazonaws.com`; `AWS_ENDPOINT_URL_STS` (else `AWS_ENDPOINT_URL`) replaces it,
//! as in the SDK. The token file is read at each exchange: the platform rotates it.

use std::path::PathBuf;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;
use super::remote::Fetched;
use super::remote::xml_text;
use crate::config_value::EnvSource;

/// The exchange to make.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct WebIdentity {
    /// Where the settings came from, for errors: the variables, or a profile.
    origin: String,
    token_file: PathBuf,
    role_arn: String,
    session_name: Option<String>,
    sts: String,
}

impl std::fmt::Debug for WebIdentity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebIdentity")
            .field("token_file", &self.token_file)
            .field("role_arn", &self.role_arn)
            .field("session_name", &self.session_name)
            .field("sts", &self.sts)
            .finish_non_exhaustive()
    }
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// The STS endpoint for `region` (or the global one), unless the environment replaces it.
fn sts_endpoint(env: &dyn EnvSource, region: Option<&str>) -> String {
    let endpoint = var(env, "AWS_ENDPOINT_URL_STS")
        .or_else(|| var(env, "AWS_ENDPOINT_URL"))
        .unwrap_or_else(|| match region {
            Some(region) if region.starts_with("cn-") => {
                format!("https://sts.{region}.amazonaws.com.cn")
            }
            Some(region) => format!("https://sts.{region}.amazonaws.com"),
            None => "https://sts.amazonaws.com".to_owned(),
        });
    endpoint.trim().trim_end_matches('/').to_owned()
}

/// The exchange `AWS_WEB_IDENTITY_TOKEN_FILE` asks for, if set; it needs `AWS_ROLE_ARN`.
pub(crate) fn from_environment(
    env: &dyn EnvSource,
    region: Option<&str>,
) -> Result<Option<WebIdentity>, CredentialError> {
    let Some(token_file) = var(env, "AWS_WEB_IDENTITY_TOKEN_FILE") else {
        return Ok(None);
    };
    let origin = "AWS_WEB_IDENTITY_TOKEN_FILE".to_owned();
    let role_arn = var(env, "AWS_ROLE_ARN").ok_or_else(|| CredentialError::WebIdentity {
        origin: origin.clone(),
        why: "AWS_ROLE_ARN is not set (the role to assume with the token)".to_owned(),
    })?;
    Ok(Some(WebIdentity {
        origin,
        token_file: PathBuf::from(token_file),
        role_arn,
        session_name: var(env, "AWS_ROLE_SESSION_NAME"),
        sts: sts_endpoint(env, region),
    }))
}

/// The exchange a profile's `web_identity_token_file` and `role_arn` ask for.
pub(crate) fn from_profile(
    profile: &str,
    token_file: String,
    role_arn: String,
    session_name: Option<String>,
    env: &dyn EnvSource,
    region: Option<&str>,
) -> WebIdentity {
    WebIdentity {
        origin: format!("the AWS profile \"{profile}\""),
        token_file: PathBuf::from(token_file),
        role_arn,
        session_name: session_name.or_else(|| var(env, "AWS_ROLE_SESSION_NAME")),
        sts: sts_endpoint(env, region),
    }
}

impl WebIdentity {
    fn failed(&self, why: String) -> CredentialError {
        CredentialError::WebIdentity {
            origin: self.origin.clone(),
            why,
        }
    }

    /// Exchanges the token for the role's keys.
    pub(crate) async fn fetch(
        &self,
        http: &reqwest::Client,
        now_ms: i64,
    ) -> Result<Fetched, CredentialError> {
        let token = std::fs::read_to_string(&self.token_file).map_err(|e| {
            self.failed(format!(
                "cannot read the token file {}: {e}",
                self.token_file.display()
            ))
        })?;
        let token = token.trim();
        if token.is_empty() {
            return Err(self.failed(format!(
                "the token file {} is empty",
                self.token_file.display()
            )));
        }
        // The SDK names an unnamed session by the time it began.
        let session_name = self
            .session_name
            .clone()
            .unwrap_or_else(|| format!("knightcode-session-{now_ms}"));
        let body = crate::google_adc::form_encode(&[
            ("Action", "AssumeRoleWithWebIdentity"),
            ("Version", "2011-06-15"),
            ("RoleArn", &self.role_arn),
            ("RoleSessionName", &session_name),
            ("WebIdentityToken", token),
        ]);
        let url = format!("{}/", self.sts);
        let response = http
            .post(&url)
            .header("content-type", "application/x-www-form-urlencoded")
            .body(body)
            .timeout(std::time::Duration::from_secs(10))
            .send()
            .await
            .map_err(|e| {
                self.failed(format!(
                    "STS ({url}) could not be reached: {}",
                    crate::http::describe_transport_error(&e)
                ))
            })?;
        let status = response.status();
        let xml = response.text().await.map_err(|e| {
            self.failed(format!(
                "STS's answer was cut off: {}",
                crate::http::describe_transport_error(&e)
            ))
        })?;
        if !status.is_success() {
            let code = xml_text(&xml, Some("Error"), "Code");
            let message = xml_text(&xml, Some("Error"), "Message");
            return Err(self.failed(match (code, message) {
                (Some(code), Some(message)) => format!(
                    "STS refused to assume {} ({} {code}: {message})",
                    self.role_arn,
                    status.as_u16()
                ),
                _ => format!(
                    "STS refused to assume {} ({} {})",
                    self.role_arn,
                    status.as_u16(),
                    xml.trim()
                ),
            }));
        }
        let field = |tag: &str| xml_text(&xml, Some("Credentials"), tag).filter(|v| !v.is_empty());
        let (Some(access_key_id), Some(secret_access_key)) =
            (field("AccessKeyId"), field("SecretAccessKey"))
        else {
            return Err(
                self.failed("STS's answer holds no AccessKeyId and SecretAccessKey".to_owned())
            );
        };
        Ok(Fetched {
            credentials: AwsCredentials {
                access_key_id,
                secret_access_key,
                session_token: field("SessionToken"),
            },
            expires_at_ms: field("Expiration")
                .as_deref()
                .and_then(super::remote::parse_expiration),
        })
    }
}
