//! Keys of the role attached to an EC2 instance, from the instance metadata service (IMDSv2,
//! as the AWS SDKs ask it): `PUT /latest/api/token` with
//! `x-aws-ec2-metadata-token-ttl-seconds` gives a session token, sent as
//! `x-aws-ec2-metadata-token` with `GET /latest/meta-data/iam/security-credentials/` (the
//! role's name) and `GET …/security-credentials/<role>` (`{"Code", "AccessKeyId",
//! "SecretAccessKey", "Token", "Expiration"}`). The instance's region is
//! `/latest/meta-data/placement/region`.
//!
//! The service is `http://169.254.169.254` (`http://[fd00:ec2::254]` with
//! `AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6`), or `AWS_EC2_METADATA_SERVICE_ENDPOINT`;
//! `AWS_EC2_METADATA_DISABLED=true` turns it off. Every call gives up after [`TIMEOUT`], so a
//! machine that is not an EC2 instance learns it within a second. IMDSv1 (no token) is not
//! used.

use std::time::Duration;

use serde::Deserialize;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;
use super::remote::Fetched;
use crate::config_value::EnvSource;

const DEFAULT_ENDPOINT: &str = "http://169.254.169.254";
const IPV6_ENDPOINT: &str = "http://[fd00:ec2::254]";
/// How long one call to the metadata service may take (the AWS SDKs' default is one second).
const TIMEOUT: Duration = Duration::from_secs(1);
/// The lifetime asked for the session token; it serves only the few calls of one fetch.
const TOKEN_TTL_SECONDS: &str = "21600";

/// The metadata service to ask.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Imds {
    endpoint: String,
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// The metadata service the environment points at, unless `AWS_EC2_METADATA_DISABLED` is
/// `true`.
pub(crate) fn imds(env: &dyn EnvSource) -> Option<Imds> {
    if disabled(env) {
        return None;
    }
    let endpoint = var(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT").unwrap_or_else(|| {
        let ipv6 = var(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE")
            .is_some_and(|mode| mode.trim().eq_ignore_ascii_case("ipv6"));
        if ipv6 {
            IPV6_ENDPOINT
        } else {
            DEFAULT_ENDPOINT
        }
        .to_owned()
    });
    Some(Imds {
        endpoint: endpoint.trim().trim_end_matches('/').to_owned(),
    })
}

/// `AWS_EC2_METADATA_DISABLED=true` (any case), as the SDKs read it.
pub(crate) fn disabled(env: &dyn EnvSource) -> bool {
    var(env, "AWS_EC2_METADATA_DISABLED").is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
}

/// Whether instance metadata was asked for, so that Bedrock counts as configured without
/// the network being asked at start-up: `AWS_EC2_METADATA_SERVICE_ENDPOINT` is set, or
/// `AWS_EC2_METADATA_DISABLED` is set to `false`. The firmware alone does not count: on an
/// EC2 machine whose role may not reach Bedrock, Bedrock (second in the start-up model's
/// order) would otherwise replace the provider whose key was set.
pub(crate) fn asked_for(env: &dyn EnvSource) -> bool {
    (var(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT").is_some() && !disabled(env))
        || var(env, "AWS_EC2_METADATA_DISABLED")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("false"))
}

/// Whether the firmware says this is an EC2 instance (`sys_vendor` `Amazon EC2`, an
/// instance id as `board_asset_tag`, or a Xen `hypervisor/uuid` starting with `ec2`): only
/// to say, when credentials are missing, how to use the instance's role.
pub(crate) fn firmware_says_ec2() -> bool {
    let read = |path: &str| std::fs::read_to_string(path).unwrap_or_default();
    read("/sys/devices/virtual/dmi/id/sys_vendor").trim() == "Amazon EC2"
        || read("/sys/devices/virtual/dmi/id/board_asset_tag")
            .trim()
            .starts_with("i-")
        || read("/sys/hypervisor/uuid")
            .trim()
            .to_ascii_lowercase()
            .starts_with("ec2")
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Answer {
    code: Option<String>,
    message: Option<String>,
    access_key_id: Option<String>,
    secret_access_key: Option<String>,
    token: Option<String>,
    expiration: Option<String>,
}

impl Imds {
    fn failed(&self, why: String) -> CredentialError {
        CredentialError::Imds {
            endpoint: self.endpoint.clone(),
            why,
        }
    }

    /// A session token (IMDSv2).
    async fn token(&self, http: &reqwest::Client) -> Result<String, CredentialError> {
        let url = format!("{}/latest/api/token", self.endpoint);
        let response = http
            .put(&url)
            .header("x-aws-ec2-metadata-token-ttl-seconds", TOKEN_TTL_SECONDS)
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| {
                self.failed(format!(
                    "no instance metadata service answered ({}); this is not an EC2 instance, \
                     or its metadata service is off",
                    crate::http::describe_transport_error(&e)
                ))
            })?;
        let status = response.status();
        let body = response.text().await.unwrap_or_default();
        if !status.is_success() {
            return Err(self.failed(format!(
                "the session token (IMDSv2) was refused: {} {}",
                status.as_u16(),
                body.trim()
            )));
        }
        Ok(body.trim().to_owned())
    }

    /// One metadata document, with the session token.
    async fn get(
        &self,
        http: &reqwest::Client,
        token: &str,
        path: &str,
    ) -> Result<String, CredentialError> {
        let response = http
            .get(format!("{}{path}", self.endpoint))
            .header("x-aws-ec2-metadata-token", token)
            .timeout(TIMEOUT)
            .send()
            .await
            .map_err(|e| {
                self.failed(format!(
                    "{path}: {}",
                    crate::http::describe_transport_error(&e)
                ))
            })?;
        let status = response.status();
        let body = response.text().await.map_err(|e| {
            self.failed(format!(
                "{path}: {}",
                crate::http::describe_transport_error(&e)
            ))
        })?;
        if status.as_u16() == 404 && path.ends_with("/security-credentials/") {
            return Err(self.failed(
                "the instance has no IAM role (attach an instance profile with Bedrock \
                 permissions)"
                    .to_owned(),
            ));
        }
        if !status.is_success() {
            return Err(self.failed(format!(
                "{path} answered {} {}",
                status.as_u16(),
                body.trim()
            )));
        }
        Ok(body)
    }

    /// The keys of the instance's role.
    pub(crate) async fn fetch(&self, http: &reqwest::Client) -> Result<Fetched, CredentialError> {
        let token = self.token(http).await?;
        let roles = self
            .get(http, &token, "/latest/meta-data/iam/security-credentials/")
            .await?;
        let role = roles
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .ok_or_else(|| {
                self.failed(
                    "the instance has no IAM role (attach an instance profile with Bedrock \
                 permissions)"
                        .to_owned(),
                )
            })?;
        let path = format!(
            "/latest/meta-data/iam/security-credentials/{}",
            super::sigv4::uri_encode(role)
        );
        let body = self.get(http, &token, &path).await?;
        let answer: Answer = serde_json::from_str(&body)
            .map_err(|e| self.failed(format!("the role's credentials are not JSON ({e})")))?;
        if let Some(code) = answer.code.as_deref().filter(|c| *c != "Success") {
            return Err(self.failed(format!(
                "the role \"{role}\" has no credentials ({code}{})",
                answer.message.map(|m| format!(": {m}")).unwrap_or_default()
            )));
        }
        let (Some(access_key_id), Some(secret_access_key)) =
            (answer.access_key_id, answer.secret_access_key)
        else {
            return Err(self.failed(format!(
                "the role \"{role}\"'s answer has no AccessKeyId and SecretAccessKey"
            )));
        };
        Ok(Fetched {
            credentials: AwsCredentials {
                access_key_id,
                secret_access_key,
                session_token: answer.token.filter(|t| !t.is_empty()),
            },
            expires_at_ms: answer
                .expiration
                .as_deref()
                .and_then(super::remote::parse_expiration),
        })
    }

    /// The instance's region (`placement/region`).
    pub(crate) async fn region(&self, http: &reqwest::Client) -> Result<String, CredentialError> {
        let token = self.token(http).await?;
        let region = self
            .get(http, &token, "/latest/meta-data/placement/region")
            .await?;
        let region = region.trim();
        if region.is_empty() {
            return Err(self.failed("the instance's region is empty".to_owned()));
        }
        Ok(region.to_owned())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_value::MapEnv;

    #[test]
    fn endpoints_from_the_environment() {
        let endpoint = |vars: &[(&str, &str)]| imds(&MapEnv::new(vars.iter().copied()));
        assert_eq!(
            endpoint(&[]),
            Some(Imds {
                endpoint: DEFAULT_ENDPOINT.into()
            })
        );
        assert_eq!(
            endpoint(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE", "IPv6")]),
            Some(Imds {
                endpoint: IPV6_ENDPOINT.into()
            })
        );
        assert_eq!(
            endpoint(&[("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9/")]),
            Some(Imds {
                endpoint: "http://127.0.0.1:9".into()
            })
        );
        assert_eq!(endpoint(&[("AWS_EC2_METADATA_DISABLED", "TRUE")]), None);
        assert!(endpoint(&[("AWS_EC2_METADATA_DISABLED", "false")]).is_some());
        let asked = |vars: &[(&str, &str)]| asked_for(&MapEnv::new(vars.iter().copied()));
        assert!(!asked(&[]));
        assert!(asked(&[("AWS_EC2_METADATA_DISABLED", "False")]));
        assert!(asked(&[(
            "AWS_EC2_METADATA_SERVICE_ENDPOINT",
            "http://127.0.0.1:9"
        )]));
        assert!(!asked(&[
            ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9"),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ]));
    }
}
