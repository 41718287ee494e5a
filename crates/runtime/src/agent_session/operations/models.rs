//! Model and thinking-level operations: switching and cycling models (with their
//! credentials), the model scope, thinking levels, and keeping an extension provider's
//! OAuth key fresh between prompts.

use knightcode_ai::Model;
use knightcode_ai::ResolvedAuth;
use knightcode_ai::ThinkingLevel;
use serde_json::Value;

use super::ModelSwitch;
use super::ThinkingChange;
use crate::agent_session::AgentSession;
use crate::agent_session::lock;
use crate::error::Result;
use crate::error::RuntimeError;
use crate::model_select::ScopedModel;

impl AgentSession {
    /// Models with usable credentials, in catalog order.
    pub fn available_models(&self) -> Vec<Model> {
        self.ops.available_models()
    }

    /// Switches to an available model; the thinking level is re-applied and clamped.
    pub async fn set_model(&mut self, provider: &str, model_id: &str) -> Result<ModelSwitch> {
        let model = self
            .available_models()
            .into_iter()
            .find(|m| m.provider == provider && m.id == model_id)
            .ok_or_else(|| {
                RuntimeError::Rejected(format!("Model not found: {provider}/{model_id}"))
            })?;
        self.switch_model(model, false).await
    }

    /// Whether the session has a model (a first run may start without one, see
    /// [`crate::SessionSetup::start_without_model`]).
    pub fn has_model(&self) -> bool {
        !self.model.is_unselected()
    }

    /// A session started without a model takes the one configured since, as a start would
    /// choose it (the saved default, else the first available): `auth.json` and
    /// `models.json` are read again (a login in another shell or in pi, a provider added),
    /// and local servers that came up count. `None`
    /// while there is still none, or when the session already has a model.
    pub async fn pick_up_model(&mut self) -> Result<Option<ModelSwitch>> {
        if self.has_model() {
            return Ok(None);
        }
        if let Err(error) = self.ops.auth_storage.reload() {
            self.ops.warnings.push(error.to_string());
        }
        self.reload_model_registry().await;
        let available = self.available_models();
        let values = self.settings.values();
        let saved = values
            .default_provider
            .as_deref()
            .zip(values.default_model.as_deref());
        let Some(model) = crate::model_select::default_model(&available, saved).cloned() else {
            return Ok(None);
        };
        self.switch_model(model, false).await.map(Some)
    }

    /// `auth.json` changed (a `/login` or `/logout` here): the credentials are read again and
    /// the registry rebuilt, so the models of a provider just logged in to are offered at once
    /// and those of one logged out of are not. A session without a model takes `provider`'s
    /// preferred model (the reference's `/login` does), else the first of its models this
    /// build can use; `None` when it has a model already or the provider has none.
    pub async fn reload_credentials(
        &mut self,
        provider: Option<&str>,
    ) -> Result<Option<ModelSwitch>> {
        self.ops
            .auth_storage
            .reload()
            .map_err(|e| RuntimeError::Rejected(e.to_string()))?;
        self.reload_model_registry().await;
        let Some(provider) = provider.filter(|_| !self.has_model()) else {
            return Ok(None);
        };
        let available = self.available_models();
        let usable = |m: &&Model| m.provider == provider && knightcode_ai::is_supported(m);
        let preferred = crate::model_select::DEFAULT_MODEL_PER_PROVIDER
            .iter()
            .find(|(p, _)| *p == provider)
            .and_then(|(_, id)| available.iter().filter(usable).find(|m| m.id == *id));
        let Some(model) = preferred.or_else(|| available.iter().find(usable)).cloned() else {
            return Ok(None);
        };
        self.switch_model(model, false).await.map(Some)
    }

    /// The model registry built again from the catalog and `models.json` (a provider added
    /// since), the extensions' providers registered on top and the local servers' models
    /// kept. A `models.json` that no longer parses keeps the built-in models, as at start.
    pub(super) async fn reload_model_registry(&mut self) {
        let mut registry = knightcode_ai::ModelRegistry::load(&self.ops.agent_dir);
        if let Some(host) = self.extension_host.clone() {
            crate::extensions::models::register_providers(&host, &mut registry);
            crate::extensions::models::modify_models(&host, &mut registry, &self.ops.auth_storage)
                .await;
        }
        registry.add_local_models(self.ops.local.ready().to_vec());
        self.ops.registry = registry;
        if let Some(models) = &self.extension_models {
            models.set_registry(self.ops.registry.clone());
        }
    }

    /// An extension's `pi.setModel`: as [`Self::set_model`], the saved defaults unchanged.
    pub async fn set_model_for_session(
        &mut self,
        provider: &str,
        model_id: &str,
    ) -> Result<ModelSwitch> {
        self.ops.session_only = true;
        let result = self.set_model(provider, model_id).await;
        self.ops.session_only = false;
        result
    }

    /// An extension's `pi.setThinkingLevel`: clamped and recorded, not saved as default.
    pub fn set_thinking_level_for_session(
        &mut self,
        level: ThinkingLevel,
    ) -> Result<ThinkingChange> {
        self.ops.session_only = true;
        let result = self.set_thinking_level(level);
        self.ops.session_only = false;
        result
    }

    /// The next model after the current one; `None` with fewer than two.
    pub async fn cycle_model(&mut self) -> Result<Option<ModelSwitch>> {
        self.cycle_model_towards(true).await
    }

    /// The next (`forward`) or previous model: of the `--models` / `enabledModels` scope
    /// when there is one (its `:level` applied), else of every available model. `None` with
    /// fewer than two.
    pub async fn cycle_model_towards(&mut self, forward: bool) -> Result<Option<ModelSwitch>> {
        let scoped = !self.ops.scope.is_empty();
        let candidates: Vec<ScopedModel> = if scoped {
            self.ops.scope.clone()
        } else {
            self.available_models()
                .into_iter()
                .map(|model| ScopedModel {
                    model,
                    thinking: None,
                })
                .collect()
        };
        if candidates.len() <= 1 {
            return Ok(None);
        }
        let count = candidates.len();
        let next = match candidates
            .iter()
            .position(|c| c.model.provider == self.model.provider && c.model.id == self.model.id)
        {
            Some(current) if forward => (current + 1) % count,
            Some(current) => (current + count - 1) % count,
            None if forward => 0,
            None => count - 1,
        };
        let target = candidates[next].clone();
        let mut switch = self.switch_model(target.model, scoped).await?;
        if let Some(level) = target.thinking {
            let change = self.set_thinking_level(level)?;
            switch.thinking_changed |= change.changed;
            switch.thinking = change.level;
        }
        Ok(Some(switch))
    }

    /// Replaces the scope with these models, in this order (empty: no scope); a model
    /// that was already scoped keeps its thinking level. `save` also writes them to the
    /// global settings as `enabledModels`, for later sessions.
    pub fn set_scoped_models(&mut self, models: &[(String, String)], save: bool) -> Result<()> {
        let available = self.available_models();
        let scope: Vec<ScopedModel> = models
            .iter()
            .filter_map(|(provider, id)| {
                let model = available
                    .iter()
                    .find(|m| m.provider == *provider && m.id == *id)?;
                let thinking = self
                    .ops
                    .scope
                    .iter()
                    .find(|s| s.model.provider == *provider && s.model.id == *id)
                    .and_then(|s| s.thinking);
                Some(ScopedModel {
                    model: model.clone(),
                    thinking,
                })
            })
            .collect();
        if save {
            let patterns = scope
                .iter()
                .map(|s| {
                    let reference = format!("{}/{}", s.model.provider, s.model.id);
                    Value::String(match s.thinking {
                        Some(level) => format!("{reference}:{}", level.as_str()),
                        None => reference,
                    })
                })
                .collect();
            self.persist_settings(&[("enabledModels", Value::Array(patterns))]);
        }
        self.ops.scope = scope;
        Ok(())
    }

    /// The `--models` / `enabledModels` scope (empty when there is none).
    pub fn scoped_models(&self) -> &[ScopedModel] {
        &self.ops.scope
    }

    async fn switch_model(&mut self, model: Model, scoped: bool) -> Result<ModelSwitch> {
        let resolved = self.ops.resolve_auth(&model).await?.ok_or_else(|| {
            RuntimeError::Rejected(knightcode_ai::auth::no_api_key_message(
                &model.provider,
                Some(&model.id),
                Some(self.ops.auth_storage.path()),
            ))
        })?;
        // The level to carry over is read from the model being left.
        let level = self.level_for_model_switch(&model);
        lock(&self.session).append_model_change(&model.provider, &model.id)?;
        self.persist_settings(&[
            ("defaultProvider", Value::String(model.provider.clone())),
            ("defaultModel", Value::String(model.id.clone())),
        ]);
        self.agent.config_mut().model = model.clone();
        self.use_auth(resolved);
        self.model = model.clone();
        let change = self.set_thinking_level(level)?;
        Ok(ModelSwitch {
            model,
            thinking: change.level,
            thinking_changed: change.changed,
            scoped,
        })
    }

    /// The target's `modelThinkingLevels` entry when it has one; else the reference's rule:
    /// keep the current level, unless the model being left cannot think, in which case the
    /// saved default applies.
    fn level_for_model_switch(&self, target: &Model) -> ThinkingLevel {
        if let Some(level) = self
            .settings
            .values()
            .model_thinking_level(&target.provider, &target.id)
        {
            return level;
        }
        if self.model.reasoning {
            return self.thinking;
        }
        self.settings.values().default_thinking_level
    }

    /// Sets the thinking level, clamped to the model. A change is recorded in the session
    /// and saved as the default (unless it is `off` forced by a model that cannot think).
    pub fn set_thinking_level(&mut self, level: ThinkingLevel) -> Result<ThinkingChange> {
        let effective = self.model.clamp_thinking_level(level);
        let changed = effective != self.thinking;
        if changed {
            lock(&self.session).append_thinking_level_change(effective.as_str())?;
            if self.model.reasoning || effective != ThinkingLevel::Off {
                self.persist_settings(&[(
                    "defaultThinkingLevel",
                    Value::String(effective.as_str().to_owned()),
                )]);
            }
        }
        self.thinking = effective;
        self.agent.config_mut().options.thinking = effective;
        Ok(ThinkingChange {
            level: effective,
            changed,
        })
    }

    /// The next supported level; `None` for a model without reasoning.
    pub fn cycle_thinking_level(&mut self) -> Result<Option<ThinkingChange>> {
        if !self.model.reasoning {
            return Ok(None);
        }
        let levels = self.available_thinking_levels();
        let next = levels
            .iter()
            .position(|l| *l == self.thinking)
            .map_or(0, |i| (i + 1) % levels.len());
        let Some(level) = levels.get(next).copied() else {
            return Ok(None);
        };
        self.set_thinking_level(level).map(Some)
    }

    /// Levels the current model accepts (`off` only, without reasoning).
    pub fn available_thinking_levels(&self) -> Vec<ThinkingLevel> {
        self.model.supported_thinking_levels()
    }

    /// An extension provider's OAuth login that expired since the model was chosen is
    /// refreshed (through the extension) before the prompt goes out, as the reference
    /// resolves the key per request.
    pub(in crate::agent_session) async fn refresh_oauth_key(&mut self) -> Result<()> {
        if !self.ops.auth_storage.oauth_expired(&self.model.provider) {
            return Ok(());
        }
        if let Some(resolved) = self.ops.resolve_auth(&self.model).await? {
            self.use_auth(resolved);
        }
        Ok(())
    }

    /// Requests from now on carry these credentials.
    pub(super) fn use_auth(&mut self, resolved: ResolvedAuth) {
        let options = &mut self.agent.config_mut().options;
        options.api_key = resolved.api_key;
        options.headers = resolved.headers;
    }
}
