//! Whether a cloud platform's own credentials (not one key) are there for a provider, judged
//! without the network, for model listing and the "no key" check.

use std::path::Path;

use crate::config_value::EnvSource;

/// Whether the cloud platform's own credentials are configured for `provider`, as the
/// reference judges it (Bedrock: an AWS profile, keys, a bearer token or a task role, and
/// here also EC2 instance metadata when asked for;
/// Vertex: application default credentials with a project and a location, or a Google
/// Cloud machine with a location).
pub(super) fn ambient_credentials(provider: &str, env: &dyn EnvSource) -> bool {
    let set = |name: &str| env.var(name).is_some_and(|v| !v.is_empty());
    match provider {
        "amazon-bedrock" => {
            set("AWS_PROFILE")
                || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
                || set("AWS_BEARER_TOKEN_BEDROCK")
                || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
                || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
                || set("AWS_WEB_IDENTITY_TOKEN_FILE")
                // Beyond the reference: an EC2 instance's role, when asked for.
                || crate::providers::bedrock::instance_credentials_asked_for(env)
        }
        "google-vertex" => {
            let file = match env.var("GOOGLE_APPLICATION_CREDENTIALS") {
                Some(path) if !path.is_empty() => Path::new(&path).exists(),
                _ => env.var("HOME").is_some_and(|home| {
                    Path::new(&home)
                        .join(".config/gcloud/application_default_credentials.json")
                        .exists()
                }),
            };
            // Beyond the reference: a Google Cloud machine's service account, judged without
            // the network; its metadata server also tells the project.
            let metadata = !file && crate::google_adc::likely_google_cloud(env);
            (file || metadata)
                && (set("GOOGLE_CLOUD_PROJECT") || set("GCLOUD_PROJECT") || metadata)
                && set("GOOGLE_CLOUD_LOCATION")
        }
        _ => false,
    }
}
