//! The model registry: the built-in catalog plus `models.json` (providers.md §4).
//!
//! `config` reads and checks `models.json`, `definition` turns its model definitions and
//! overrides into [`Model`]s, and `registry` applies both (and extensions' providers) on top
//! of the catalog.

mod config;
mod definition;
mod registry;

pub use config::ModelsConfig;
pub use config::ProviderConfig;
pub use config::parse_models_json;
pub use config::strip_json_comments;
pub use registry::ModelRegistry;

use crate::model::Model;

const CATALOG: &str = include_str!("../catalog.json");

/// The built-in models (anthropic, openai, google and a few OpenAI-compatible services).
pub fn builtin_models() -> Vec<Model> {
    // The catalog is a constant of this crate, checked by a unit test.
    serde_json::from_str(CATALOG).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn catalog_parses() {
        let models: Vec<Model> = serde_json::from_str(CATALOG).unwrap();
        assert_eq!(models.len(), builtin_models().len());
        assert!(models.iter().all(|m| m.api_kind().is_some()));
        assert!(models.iter().any(|m| m.provider == "anthropic"));
        assert!(models.iter().any(|m| m.provider == "openai"));
        assert!(models.iter().any(|m| m.provider == "google"));
    }
}
