//! Whether this build can send a model's requests. Every API of the reference's catalog is
//! spoken here; a `models.json` entry may still name an API no build knows.

use crate::model::Model;

/// Whether this build can send requests for `model` (an API it speaks).
pub fn is_supported(model: &Model) -> bool {
    model.api_kind().is_some()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Api;

    #[test]
    fn known_apis_are_supported_and_unknown_ones_not() {
        for api in Api::ALL {
            let model = Model::new("p", "m", api, "http://x");
            assert!(is_supported(&model), "{}", api.as_str());
        }
        let mut unknown = Model::new("p", "m", Api::OpenAiCompletions, "http://x");
        unknown.api = "no-such-api".into();
        assert!(!is_supported(&unknown));
    }
}
