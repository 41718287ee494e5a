//! Where a Bedrock request's credentials come from, in the order of the AWS SDK's default
//! chain (which the reference uses), without the SDK:
//!
//! 1. `AWS_BEARER_TOKEN_BEDROCK`: a Bedrock API key, sent as `Authorization: Bearer`
//!    (unless `AWS_BEDROCK_SKIP_AUTH=1`);
//! 2. `AWS_BEDROCK_SKIP_AUTH=1`: dummy keys, for proxies that authenticate themselves;
//! 3. without `AWS_PROFILE`: `AWS_ACCESS_KEY_ID` + `AWS_SECRET_ACCESS_KEY` (+
//!    `AWS_SESSION_TOKEN`); the SDK skips these when a profile is named, and so do we;
//! 4. without `AWS_PROFILE`: a web identity token (`AWS_WEB_IDENTITY_TOKEN_FILE` +
//!    `AWS_ROLE_ARN`), exchanged at STS (see [`super::web_identity`]);
//! 5. the profile (`AWS_PROFILE`, else `default`) in `~/.aws/credentials` and
//!    `~/.aws/config` (or `AWS_SHARED_CREDENTIALS_FILE` / `AWS_CONFIG_FILE`): IAM Identity
//!    Center ([`super::sso`]), static keys, a web identity token, a `credential_process`
//!    ([`super::process`]);
//! 6. the container credentials endpoint (`AWS_CONTAINER_CREDENTIALS_RELATIVE_URI` or
//!    `_FULL_URI`, see [`super::container`]);
//! 7. EC2 instance metadata ([`super::imds`]) unless `AWS_EC2_METADATA_DISABLED=true`.
//!
//! A profile named with `AWS_PROFILE` must give credentials; the `default` profile may be
//! absent or hold only settings (a region), and then the chain goes on. Profiles that assume
//! a role from another profile (`source_profile`, `credential_source`) or use a console
//! login are recognised and refused with what to set instead ([`CredentialError`]).

use std::collections::HashMap;
use std::path::PathBuf;

use super::remote::RemoteSource;
use crate::config_value::EnvSource;

/// AWS access keys (temporary ones carry a session token).
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AwsCredentials {
    pub(crate) access_key_id: String,
    pub(crate) secret_access_key: String,
    pub(crate) session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials")
            .field("access_key_id", &self.access_key_id)
            .finish_non_exhaustive()
    }
}

/// How a request proves who sends it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum BedrockAuth {
    Bearer(String),
    SigV4(AwsCredentials),
    /// Keys fetched just before the request is signed (and cached until they expire).
    Remote(RemoteSource),
}

/// What to set instead, said by every error of the chain.
const INSTEAD: &str = "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN \
                       for temporary keys), AWS_PROFILE naming a profile of ~/.aws/config, or \
                       AWS_BEARER_TOKEN_BEDROCK (a Bedrock API key)";

/// Why no credentials could be found; each names the source and what to set.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub(crate) enum CredentialError {
    #[error(
        "No AWS credentials for Amazon Bedrock: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \
         (and AWS_SESSION_TOKEN for temporary keys), AWS_BEARER_TOKEN_BEDROCK (a Bedrock API \
         key), or AWS_PROFILE naming a profile with aws_access_key_id and \
         aws_secret_access_key in ~/.aws/credentials."
    )]
    Missing,
    #[error(
        "The AWS profile \"{profile}\" was not found in {files}. Check AWS_PROFILE, or set \
         AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (unset AWS_PROFILE) or \
         AWS_BEARER_TOKEN_BEDROCK."
    )]
    NoProfile { profile: String, files: String },
    #[error(
        "The AWS profile \"{profile}\" uses {via}, which KnightCode cannot resolve yet. Export \
         its keys instead (`aws configure export-credentials --profile {profile} --format env`, \
         then unset AWS_PROFILE), or set AWS_BEARER_TOKEN_BEDROCK."
    )]
    Unsupported { profile: String, via: &'static str },
    #[error(
        "The AWS profile \"{profile}\" has no aws_access_key_id and aws_secret_access_key. Add \
         them to ~/.aws/credentials, or set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (unset \
         AWS_PROFILE) or AWS_BEARER_TOKEN_BEDROCK."
    )]
    Incomplete { profile: String },
    #[error(
        "The AWS profile \"{profile}\" signs in with IAM Identity Center (SSO): {why}. Run \
         `aws sso login --profile {profile}`, or export keys instead (`aws configure \
         export-credentials --profile {profile} --format env`, then unset AWS_PROFILE)."
    )]
    Sso { profile: String, why: String },
    #[error(
        "The container credentials endpoint {url} is refused: AWS_CONTAINER_CREDENTIALS_FULL_URI \
         must use https or a loopback or container-metadata address (as the AWS SDK requires)."
    )]
    ContainerHost { url: String },
    #[error(
        "Could not get AWS credentials from the container credentials endpoint {url}: {why}. \
         Check AWS_CONTAINER_CREDENTIALS_* (and AWS_CONTAINER_AUTHORIZATION_TOKEN), or set \
         AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY."
    )]
    Container { url: String, why: String },
    #[error(
        "No AWS credentials for Amazon Bedrock: none in the environment or ~/.aws, and the EC2 \
         instance metadata service ({endpoint}, the last source of the AWS credential chain) \
         gave none: {why}. Off EC2, {INSTEAD}; set AWS_EC2_METADATA_DISABLED=true to skip \
         instance metadata."
    )]
    Imds { endpoint: String, why: String },
    #[error(
        "Could not get AWS credentials for the web identity token of {origin}: {why}. Check \
         AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN (or the profile's web_identity_token_file \
         and role_arn), or {INSTEAD}."
    )]
    WebIdentity { origin: String, why: String },
    #[error(
        "The credential_process of the AWS profile \"{profile}\" failed: {why}. Run `{command}` \
         yourself to see what it prints (JSON with \"Version\": 1, AccessKeyId and \
         SecretAccessKey), fix it in ~/.aws/config, or {INSTEAD}."
    )]
    Process {
        profile: String,
        command: String,
        why: String,
    },
}

fn var(env: &dyn EnvSource, name: &str) -> Option<String> {
    env.var(name).filter(|v| !v.trim().is_empty())
}

/// The profile the SDK reads: `AWS_PROFILE`, else `default`.
fn profile_name(env: &dyn EnvSource) -> String {
    var(env, "AWS_PROFILE").unwrap_or_else(|| "default".to_owned())
}

/// Resolves the credentials of one request.
pub(crate) fn resolve(env: &dyn EnvSource) -> Result<BedrockAuth, CredentialError> {
    let skip_auth = env.var("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1");
    if let Some(token) = var(env, "AWS_BEARER_TOKEN_BEDROCK")
        && !skip_auth
    {
        return Ok(BedrockAuth::Bearer(token));
    }
    if skip_auth {
        return Ok(BedrockAuth::SigV4(AwsCredentials {
            access_key_id: "dummy-access-key".into(),
            secret_access_key: "dummy-secret-key".into(),
            session_token: None,
        }));
    }
    let named_profile = var(env, "AWS_PROFILE").is_some();
    if !named_profile
        && let (Some(access_key_id), Some(secret_access_key)) = (
            var(env, "AWS_ACCESS_KEY_ID"),
            var(env, "AWS_SECRET_ACCESS_KEY"),
        )
    {
        return Ok(BedrockAuth::SigV4(AwsCredentials {
            access_key_id,
            secret_access_key,
            session_token: var(env, "AWS_SESSION_TOKEN"),
        }));
    }
    if !named_profile && let Some(auth) = environment_web_identity(env)? {
        return Ok(auth);
    }
    let profile = profile_name(env);
    let files = AwsFiles::read(env);
    match files.profile(&profile) {
        Some(settings) => match from_profile(&profile, &settings, &files, env) {
            // The default profile may hold only settings (a region) on a machine whose keys
            // come from its container or instance role.
            Err(CredentialError::Incomplete { .. }) if !named_profile => {}
            found => return found,
        },
        None if named_profile => {
            return Err(CredentialError::NoProfile {
                profile,
                files: files.describe(),
            });
        }
        None => {}
    }
    if let Some(endpoint) = super::container::endpoint(env)? {
        return Ok(BedrockAuth::Remote(RemoteSource::Container(endpoint)));
    }
    match super::imds::imds(env) {
        Some(imds) => Ok(BedrockAuth::Remote(RemoteSource::Imds(imds))),
        None => Err(CredentialError::Missing),
    }
}

/// `AWS_WEB_IDENTITY_TOKEN_FILE` with `AWS_ROLE_ARN`, as EKS (IRSA) sets them.
fn environment_web_identity(env: &dyn EnvSource) -> Result<Option<BedrockAuth>, CredentialError> {
    let region = var(env, "AWS_REGION").or_else(|| var(env, "AWS_DEFAULT_REGION"));
    Ok(
        super::web_identity::from_environment(env, region.as_deref())?
            .map(|identity| BedrockAuth::Remote(RemoteSource::WebIdentity(identity))),
    )
}

fn from_profile(
    profile: &str,
    settings: &HashMap<String, String>,
    files: &AwsFiles,
    env: &dyn EnvSource,
) -> Result<BedrockAuth, CredentialError> {
    let get = |key: &str| settings.get(key).filter(|v| !v.is_empty()).cloned();
    let assumes_role = get("role_arn").is_some()
        && (get("source_profile").is_some() || get("credential_source").is_some());
    // The SDK's order for a profile: IAM Identity Center first (its own provider), then
    // what `fromIni` reads: an assumed role, static keys, a web identity token, a process.
    if !assumes_role
        && get("role_arn").is_none()
        && (get("sso_session").is_some() || get("sso_start_url").is_some())
    {
        let session = get("sso_session").and_then(|name| files.sso_session(&name));
        return super::sso::role(profile, settings, session.as_ref(), env)
            .map(|role| BedrockAuth::Remote(RemoteSource::Sso(role)));
    }
    if let (false, Some(access_key_id), Some(secret_access_key)) = (
        assumes_role,
        get("aws_access_key_id"),
        get("aws_secret_access_key"),
    ) {
        return Ok(BedrockAuth::SigV4(AwsCredentials {
            access_key_id,
            secret_access_key,
            session_token: get("aws_session_token"),
        }));
    }
    if !assumes_role
        && let (Some(token_file), Some(role_arn)) =
            (get("web_identity_token_file"), get("role_arn"))
    {
        let region = var(env, "AWS_REGION")
            .or_else(|| var(env, "AWS_DEFAULT_REGION"))
            .or_else(|| get("region"));
        return Ok(BedrockAuth::Remote(RemoteSource::WebIdentity(
            super::web_identity::from_profile(
                profile,
                token_file,
                role_arn,
                get("role_session_name"),
                env,
                region.as_deref(),
            ),
        )));
    }
    if !assumes_role && let Some(command) = get("credential_process") {
        return Ok(BedrockAuth::Remote(RemoteSource::Process(
            super::process::CredentialProcess {
                profile: profile.to_owned(),
                command,
            },
        )));
    }
    let source = if assumes_role {
        Some("an assumed role (role_arn with source_profile or credential_source)")
    } else if get("role_arn").is_some() {
        Some("a role_arn without web_identity_token_file or source_profile")
    } else if get("web_identity_token_file").is_some() {
        Some("a web_identity_token_file without role_arn")
    } else if get("login_session").is_some() {
        Some("an AWS console login session")
    } else {
        None
    };
    Err(match source {
        Some(via) => CredentialError::Unsupported {
            profile: profile.to_owned(),
            via,
        },
        None => CredentialError::Incomplete {
            profile: profile.to_owned(),
        },
    })
}

/// The region a profile names in the config file (`region = …`), for when no `AWS_REGION`
/// is set but `AWS_PROFILE` is.
pub(crate) fn profile_region(env: &dyn EnvSource) -> Option<String> {
    AwsFiles::read(env)
        .profile(&profile_name(env))
        .and_then(|settings| settings.get("region").cloned())
        .filter(|region| !region.is_empty())
}

/// The shared credentials and config files, parsed.
struct AwsFiles {
    credentials: (PathBuf, Option<Sections>),
    config: (PathBuf, Option<Sections>),
}

type Sections = HashMap<String, HashMap<String, String>>;

impl AwsFiles {
    fn read(env: &dyn EnvSource) -> Self {
        let home = var(env, "HOME")
            .or_else(|| var(env, "USERPROFILE"))
            .map(PathBuf::from)
            .unwrap_or_default();
        let path = |variable: &str, default: &str| {
            var(env, variable)
                .map(PathBuf::from)
                .unwrap_or_else(|| home.join(".aws").join(default))
        };
        let load = |path: PathBuf| {
            let sections = std::fs::read_to_string(&path)
                .ok()
                .map(|text| parse_ini(&text));
            (path, sections)
        };
        Self {
            credentials: load(path("AWS_SHARED_CREDENTIALS_FILE", "credentials")),
            config: load(path("AWS_CONFIG_FILE", "config")),
        }
    }

    /// A profile's settings; the credentials file wins over the config file, key by key.
    fn profile(&self, name: &str) -> Option<HashMap<String, String>> {
        let config_name = if name == "default" {
            "default".to_owned()
        } else {
            format!("profile {name}")
        };
        let from_config = self.config.1.as_ref().and_then(|s| {
            s.get(&config_name).or_else(|| {
                (name == "default")
                    .then(|| s.get("profile default"))
                    .flatten()
            })
        });
        let from_credentials = self.credentials.1.as_ref().and_then(|s| s.get(name));
        if from_config.is_none() && from_credentials.is_none() {
            return None;
        }
        let mut merged = from_config.cloned().unwrap_or_default();
        merged.extend(from_credentials.cloned().unwrap_or_default());
        Some(merged)
    }

    /// An `[sso-session <name>]` section of the config file.
    pub(crate) fn sso_session(&self, name: &str) -> Option<HashMap<String, String>> {
        self.config
            .1
            .as_ref()
            .and_then(|s| s.get(&format!("sso-session {name}")))
            .cloned()
    }

    fn describe(&self) -> String {
        format!(
            "{} or {}",
            self.credentials.0.display(),
            self.config.0.display()
        )
    }
}

/// The INI dialect of the AWS files: `[section]`, `key = value`, `#`/`;` comments; indented
/// lines continue a nested block (`s3 =` sub-settings), which no credential uses.
fn parse_ini(text: &str) -> Sections {
    let mut sections = Sections::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed.starts_with(';') {
            continue;
        }
        if let Some(name) = trimmed.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            let name = name.split_whitespace().collect::<Vec<_>>().join(" ");
            sections.entry(name.clone()).or_default();
            current = Some(name);
            continue;
        }
        if line.starts_with([' ', '\t']) {
            continue;
        }
        if let (Some(section), Some((key, value))) = (&current, trimmed.split_once('=')) {
            sections
                .entry(section.clone())
                .or_default()
                .insert(key.trim().to_lowercase(), value.trim().to_owned());
        }
    }
    sections
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config_value::MapEnv;

    fn keys(id: &str, secret: &str, token: Option<&str>) -> BedrockAuth {
        BedrockAuth::SigV4(AwsCredentials {
            access_key_id: id.into(),
            secret_access_key: secret.into(),
            session_token: token.map(str::to_owned),
        })
    }

    #[test]
    fn environment_keys_bearer_and_skip_auth() {
        let env = MapEnv::new([
            ("AWS_ACCESS_KEY_ID", "AK"),
            ("AWS_SECRET_ACCESS_KEY", "SK"),
            ("AWS_SESSION_TOKEN", "T"),
            ("HOME", "/nonexistent"),
        ]);
        assert_eq!(resolve(&env), Ok(keys("AK", "SK", Some("T"))));
        let bearer = MapEnv::new([
            ("AWS_BEARER_TOKEN_BEDROCK", "b"),
            ("AWS_ACCESS_KEY_ID", "AK"),
        ]);
        assert_eq!(resolve(&bearer), Ok(BedrockAuth::Bearer("b".into())));
        let skip = MapEnv::new([
            ("AWS_BEARER_TOKEN_BEDROCK", "b"),
            ("AWS_BEDROCK_SKIP_AUTH", "1"),
        ]);
        assert_eq!(
            resolve(&skip),
            Ok(keys("dummy-access-key", "dummy-secret-key", None))
        );
        let none = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("AWS_EC2_METADATA_DISABLED", "true"),
        ]);
        assert_eq!(resolve(&none), Err(CredentialError::Missing));
        // Instance metadata is the last source.
        let instance = MapEnv::new([("HOME", "/nonexistent")]);
        assert!(matches!(
            resolve(&instance),
            Ok(BedrockAuth::Remote(RemoteSource::Imds(_)))
        ));
        let container = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/x"),
        ]);
        assert!(matches!(
            resolve(&container),
            Ok(BedrockAuth::Remote(RemoteSource::Container(_)))
        ));
        // A web identity token comes before the profile and the machine, and needs its role.
        let web_identity = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
            ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/x"),
        ]);
        let failure = resolve(&web_identity).unwrap_err();
        assert!(
            failure.to_string().contains("AWS_ROLE_ARN is not set"),
            "{failure}"
        );
        let web_identity = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("AWS_WEB_IDENTITY_TOKEN_FILE", "/var/run/token"),
            ("AWS_ROLE_ARN", "arn:aws:iam::1:role/r"),
            ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/x"),
        ]);
        assert!(matches!(
            resolve(&web_identity),
            Ok(BedrockAuth::Remote(RemoteSource::WebIdentity(_)))
        ));
    }

    #[test]
    fn profiles_from_the_shared_files() {
        let dir = tempfile::tempdir().unwrap();
        let aws = dir.path().join(".aws");
        std::fs::create_dir_all(&aws).unwrap();
        std::fs::write(
            aws.join("credentials"),
            "[default]\naws_access_key_id = DEF\naws_secret_access_key = DEFS\n\n\
             [work]\naws_access_key_id=WK\naws_secret_access_key=WS\naws_session_token=WT\n",
        )
        .unwrap();
        std::fs::write(
            aws.join("config"),
            "[profile work]\nregion = eu-central-1\n[profile sso]\nsso_session = corp\n\
             region = us-west-2\n[profile bare]\nregion = ap-south-1\n# comment\n",
        )
        .unwrap();
        let home = dir.path().to_str().unwrap();
        let with = |profile: Option<&str>| {
            let mut vars = vec![("HOME", home.to_owned())];
            if let Some(profile) = profile {
                vars.push(("AWS_PROFILE", profile.to_owned()));
            }
            vars.push(("AWS_ACCESS_KEY_ID", "ENVKEY".to_owned()));
            vars.push(("AWS_SECRET_ACCESS_KEY", "ENVSECRET".to_owned()));
            MapEnv::new(vars)
        };
        // A named profile wins over environment keys, as in the SDK.
        assert_eq!(
            resolve(&with(Some("work"))),
            Ok(keys("WK", "WS", Some("WT")))
        );
        assert_eq!(
            profile_region(&with(Some("work"))).as_deref(),
            Some("eu-central-1")
        );
        assert_eq!(resolve(&with(None)), Ok(keys("ENVKEY", "ENVSECRET", None)));
        let sso = resolve(&with(Some("sso"))).unwrap_err();
        assert!(sso.to_string().contains("IAM Identity Center"), "{sso}");
        assert!(
            sso.to_string().contains("export-credentials --profile sso"),
            "{sso}"
        );
        assert_eq!(
            resolve(&with(Some("bare"))),
            Err(CredentialError::Incomplete {
                profile: "bare".into()
            })
        );
        assert!(matches!(
            resolve(&with(Some("nope"))),
            Err(CredentialError::NoProfile { .. })
        ));
        let default_only = MapEnv::new([("HOME", home)]);
        assert_eq!(resolve(&default_only), Ok(keys("DEF", "DEFS", None)));
    }

    #[test]
    fn a_default_profile_of_settings_only_goes_on_to_the_machine() {
        let dir = tempfile::tempdir().unwrap();
        let aws = dir.path().join(".aws");
        std::fs::create_dir_all(&aws).unwrap();
        std::fs::write(aws.join("config"), "[default]\nregion = eu-west-1\n").unwrap();
        let home = dir.path().to_str().unwrap();
        let env = MapEnv::new([
            ("HOME", home),
            ("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/x"),
        ]);
        assert!(matches!(
            resolve(&env),
            Ok(BedrockAuth::Remote(RemoteSource::Container(_)))
        ));
        assert!(matches!(
            resolve(&MapEnv::new([("HOME", home)])),
            Ok(BedrockAuth::Remote(RemoteSource::Imds(_)))
        ));
        // Named, the same profile must give keys.
        let named = MapEnv::new([("HOME", home), ("AWS_PROFILE", "default")]);
        assert!(matches!(
            resolve(&named),
            Err(CredentialError::Incomplete { .. })
        ));
    }
}
