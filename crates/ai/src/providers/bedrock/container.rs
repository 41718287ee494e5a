//! Keys from the container credentials endpoint, as the AWS SDK gets them in ECS tasks and
//! EKS pods (pod identity): `AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` is a path on
//! `http://169.254.170.2`; `AWS_CONTAINER_CREDENTIALS_FULL_URI` a whole URL, which must be
//! https or a loopback or container-metadata address. `AWS_CONTAINER_AUTHORIZATION_TOKEN`
//! (or the file `AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE` names) goes in `Authorization`.
//! The answer is `{"AccessKeyId", "SecretAccessKey", "Token", "Expiration"}`; the keys are
//! kept until shortly before `Expiration` (see [`super::remote`]).

use serde::Deserialize;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;
use super::remote::Fetched;
use crate::config_value::EnvSource;

const ECS_HOST: &str = "http://169.254.170.2";

/// Where to ask, and with what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ContainerEndpoint {
    pub(crate) url: String,
    pub(crate) authorization: Option<String>,
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// The endpoint the environment names, if any.
pub(crate) fn endpoint(env: &dyn EnvSource) -> Result<Option<ContainerEndpoint>, CredentialError> {
    let url = if let Some(relative) = var(env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") {
        format!("{ECS_HOST}{relative}")
    } else if let Some(full) = var(env, "AWS_CONTAINER_CREDENTIALS_FULL_URI") {
        if !allowed(&full) {
            return Err(CredentialError::ContainerHost { url: full });
        }
        full
    } else {
        return Ok(None);
    };
    let authorization = match var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE") {
        Some(path) => Some(
            std::fs::read_to_string(&path)
                .map_err(|e| CredentialError::Container {
                    url: url.clone(),
                    why: format!("cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {path}: {e}"),
                })?
                .trim()
                .to_owned(),
        ),
        None => var(env, "AWS_CONTAINER_AUTHORIZATION_TOKEN"),
    };
    Ok(Some(ContainerEndpoint { url, authorization }))
}

/// https anywhere; plain http only to this machine or the container metadata addresses.
fn allowed(url: &str) -> bool {
    let Ok(parsed) = reqwest::Url::parse(url) else {
        return false;
    };
    match parsed.scheme() {
        "https" => true,
        "http" => {
            let host = parsed.host_str().unwrap_or("");
            let host = host.trim_start_matches('[').trim_end_matches(']');
            if let Ok(ip) = host.parse::<std::net::Ipv4Addr>() {
                ip.is_loopback() || [[169, 254, 170, 2], [169, 254, 170, 23]].contains(&ip.octets())
            } else if let Ok(ip) = host.parse::<std::net::Ipv6Addr>() {
                ip.is_loopback() || ip.segments() == [0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x23]
            } else {
                host == "localhost"
            }
        }
        _ => false,
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "PascalCase")]
struct Answer {
    access_key_id: String,
    secret_access_key: String,
    token: Option<String>,
    expiration: Option<String>,
}

impl ContainerEndpoint {
    /// Asks the endpoint for keys.
    pub(crate) async fn fetch(&self, http: &reqwest::Client) -> Result<Fetched, CredentialError> {
        let failed = |why: String| CredentialError::Container {
            url: self.url.clone(),
            why,
        };
        let mut request = http.get(&self.url);
        if let Some(token) = &self.authorization {
            request = request.header("authorization", token);
        }
        let response = request
            .timeout(std::time::Duration::from_secs(5))
            .send()
            .await
            .map_err(|e| failed(crate::http::describe_transport_error(&e)))?;
        let status = response.status();
        let body = response
            .text()
            .await
            .map_err(|e| failed(crate::http::describe_transport_error(&e)))?;
        if !status.is_success() {
            return Err(failed(format!("{} {}", status.as_u16(), body.trim())));
        }
        let answer: Answer = serde_json::from_str(&body)
            .map_err(|e| failed(format!("the answer is not credentials ({e})")))?;
        Ok(Fetched {
            credentials: AwsCredentials {
                access_key_id: answer.access_key_id,
                secret_access_key: answer.secret_access_key,
                session_token: answer.token.filter(|t| !t.is_empty()),
            },
            expires_at_ms: answer
                .expiration
                .as_deref()
                .and_then(super::remote::parse_expiration),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_value::MapEnv;

    #[test]
    fn endpoints_from_the_environment() {
        let relative = MapEnv::new([(
            "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
            "/v2/credentials/x",
        )]);
        assert_eq!(
            endpoint(&relative),
            Ok(Some(ContainerEndpoint {
                url: "http://169.254.170.2/v2/credentials/x".into(),
                authorization: None
            }))
        );
        let full = MapEnv::new([
            (
                "AWS_CONTAINER_CREDENTIALS_FULL_URI",
                "http://169.254.170.23/v1/credentials",
            ),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "tok"),
        ]);
        assert_eq!(
            endpoint(&full).unwrap().unwrap().authorization.as_deref(),
            Some("tok")
        );
        for refused in ["http://example.com/creds", "ftp://127.0.0.1/x", "not a url"] {
            let env = MapEnv::new([("AWS_CONTAINER_CREDENTIALS_FULL_URI", refused)]);
            assert!(
                matches!(endpoint(&env), Err(CredentialError::ContainerHost { .. })),
                "{refused}"
            );
        }
        for fine in [
            "https://creds.example.com/x",
            "http://127.0.0.1:9/x",
            "http://[::1]:9/x",
            "http://localhost/x",
        ] {
            let env = MapEnv::new([("AWS_CONTAINER_CREDENTIALS_FULL_URI", fine)]);
            assert!(endpoint(&env).unwrap().is_some(), "{fine}");
        }
        assert_eq!(endpoint(&MapEnv::new([("HOME", "/x")])), Ok(None));
    }
}
