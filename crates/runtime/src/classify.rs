//! Classifying for extensions (`ctx.modelRegistry.classify`) and codemode scripts
//! (`models.classify`): the model they name looked up among the registry's classifier
//! models, its credentials resolved at request time, the call made by the provider layer.
//! Whatever fails comes back as the reference's error result, never as a throw.

use std::collections::HashMap;
use std::sync::Arc;

use knightcode_ai::AuthContext;
use knightcode_ai::AuthStorage;
use knightcode_ai::CancellationToken;
use knightcode_ai::ClassifierContext;
use knightcode_ai::ClassifierModel;
use knightcode_ai::ClassifierOptions;
use knightcode_ai::ClassifierResult;
use knightcode_ai::Client;
use knightcode_ai::EnvSource;
use knightcode_ai::ModelRegistry;
use serde_json::Value;

/// The registry's classifier models as JSON, each with whether its provider has
/// credentials (what `getAvailableClassifiers` and `getAvailableOfType` list).
pub(crate) fn classifier_models(
    registry: &ModelRegistry,
    auth: &AuthContext<'_>,
) -> Vec<(ClassifierModel, bool)> {
    registry
        .classifiers()
        .iter()
        .map(|model| (model.clone(), registry.has_auth(&model.provider, auth)))
        .collect()
}

/// What a codemode script classifies with: the session's registry and credentials as they
/// were when its run started.
pub(crate) struct ClassifyAccess {
    pub(crate) registry: ModelRegistry,
    pub(crate) storage: Arc<AuthStorage>,
    pub(crate) env: Arc<dyn EnvSource>,
    pub(crate) runtime_keys: HashMap<String, String>,
}

impl ClassifyAccess {
    pub(crate) fn auth(&self) -> AuthContext<'_> {
        AuthContext {
            storage: &self.storage,
            env: self.env.as_ref(),
            runtime_keys: &self.runtime_keys,
        }
    }
}

/// Classifies `request` (`{model, context, options}` as the JS caller passed them) and
/// answers the JS `ClassifierResult`.
pub(crate) async fn classify(
    registry: &ModelRegistry,
    auth: &AuthContext<'_>,
    client: Option<&Client>,
    request: &Value,
    cancel: CancellationToken,
) -> Value {
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64)
    };
    let given = request.get("model").cloned().unwrap_or(Value::Null);
    let text = |key: &str| given.get(key).and_then(Value::as_str).unwrap_or("");
    let (provider, id) = (text("provider"), text("id"));
    let failed = |api: &str, message: String| {
        ClassifierResult::failed(provider, id, api, message, now()).to_json()
    };
    // A model of the registry; else one the caller described in full.
    let model = match registry.find_classifier(provider, id) {
        Some(model) => model.clone(),
        None => match serde_json::from_value::<ClassifierModel>(given.clone()) {
            Ok(model) if model.model_type == "classifier" => model,
            _ => {
                return failed(
                    text("api"),
                    format!(
                        "No classifier model {provider}/{id}. Declare it in models.json with \"type\": \"classifier\" (see docs/models.md)"
                    ),
                );
            }
        },
    };
    let context = match ClassifierContext::from_json(request.get("context").unwrap_or(&Value::Null))
    {
        Ok(context) => context,
        Err(error) => return failed(&model.api, error.to_string()),
    };
    let mut options = ClassifierOptions::from_json(request.get("options").unwrap_or(&Value::Null));
    if options.api_key.is_none() {
        match registry.resolve_classifier_auth(&model, auth).await {
            Ok(Some(resolved)) => {
                options.api_key = resolved.api_key;
                for (name, value) in resolved.headers {
                    options.headers.entry(name).or_insert(value);
                }
            }
            // A local server usually wants no key.
            Ok(None) => {}
            Err(error) => return failed(&model.api, error.to_string()),
        }
    }
    let Some(client) = client else {
        return failed(
            &model.api,
            "The HTTP client could not be set up; classifier models cannot be reached".into(),
        );
    };
    client
        .classify(&model, &context, &options, cancel)
        .await
        .to_json()
}
