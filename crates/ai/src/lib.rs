//! KnightCode's provider layer.
//!
//! * [`Client`] streams a [`StreamRequest`] (model + [`Context`] + [`StreamOptions`]) as
//!   [`StreamEvent`]s over the model's wire API: `anthropic-messages`, `openai-completions`,
//!   `openai-responses` or `google-generative-ai`. Events are deltas; [`Accumulator`] rebuilds
//!   the partial message for UIs; the stream ends with one `Done` or `Error` carrying the final
//!   protocol [`AssistantMessage`](knightcode_protocol::AssistantMessage).
//! * Failures never escape as `Err`: they end the stream with a message whose `stopReason` is
//!   `error` or `aborted`, and whose `error_class` (in memory only) says what kind of failure
//!   it was, decided where it arose ([`StreamFailure`]). [`is_retryable_assistant_error`] and
//!   [`is_context_overflow`] read it to tell the agent what to do next;
//!   [`classify_error_message`] names the class of a bare text.
//! * The model catalog, `models.json`, auth resolution and `--list-models` live in
//!   [`models`], [`auth`] and [`list_models`].

pub mod auth;
pub mod classify;
mod client;
pub mod clock;
pub mod config_value;
mod context_meter;
pub mod copilot;
mod cost;
mod driver;
mod error;
mod error_summary;
mod event;
mod google_adc;
mod http;
pub mod json_partial;
pub mod list_models;
pub mod local;
pub mod login;
mod model;
pub mod models;
mod oauth;
mod options;
mod output;
mod overflow;
mod providers;
pub mod retry;
mod router;
pub mod sse;
mod support;
mod tls;
mod transform;

pub use auth::AuthContext;
pub use auth::AuthSource;
pub use auth::AuthStorage;
pub use auth::Credential;
pub use auth::OAuthFuture;
pub use auth::OAuthProviders;
pub use auth::ResolvedAuth;
pub use classify::ClassifierAnswer;
pub use classify::ClassifierContext;
pub use classify::ClassifierModel;
pub use classify::ClassifierOptions;
pub use classify::ClassifierQuestion;
pub use classify::ClassifierResult;
pub use classify::ClassifierStopReason;
pub use classify::ClassifyError;
pub use client::BuiltRequest;
pub use client::Client;
pub use client::Provider;
pub use clock::Clock;
pub use clock::SystemClock;
pub use config_value::EnvSource;
pub use config_value::MapEnv;
pub use config_value::ProcessEnv;
pub use context_meter::ContextMeter;
pub use cost::calculate_cost;
pub use driver::ABORTED_MESSAGE;
pub use driver::WireDecoder;
pub use error::AiError;
pub use error::ErrorClass;
pub use error::LoginError;
pub use error::OAuthHookError;
pub use error::StreamFailure;
pub use error::classify_error_message;
pub use error_summary::ErrorSummary;
pub use event::Accumulator;
pub use event::EventStream;
pub use event::StreamEvent;
pub use http::http_client_builder;
pub use http::user_agent;
pub use list_models::ListModelsOutput;
pub use list_models::list_models;
pub use list_models::render_model_list;
pub use model::Api;
pub use model::CostTier;
pub use model::LevelMapping;
pub use model::Model;
pub use model::ModelCost;
pub use model::ThinkingLevel;
pub use model::ThinkingLevelMap;
pub use models::ModelRegistry;
pub use models::VIRTUAL_API;
pub use oauth::ANTHROPIC_TOKEN_URL_ENV;
pub use oauth::codex::CODEX_TOKEN_URL_ENV;
pub use options::CacheRetention;
pub use options::Context;
pub use options::HeadersFuture;
pub use options::HeadersHook;
pub use options::MIN_ANSWER_TOKENS;
pub use options::PayloadFuture;
pub use options::PayloadHook;
pub use options::RequestReason;
pub use options::ResponseFuture;
pub use options::ResponseHook;
pub use options::StreamEventHook;
pub use options::StreamOptions;
pub use options::StreamRequest;
pub use options::ThinkingBudgets;
pub use options::clamp_max_tokens_to_context;
pub use options::estimate_context_tokens;
pub use options::estimate_message_tokens;
pub use options::usage_tokens;
pub use overflow::is_context_overflow;
pub use retry::ProviderRetry;
pub use retry::RetryPolicy;
pub use retry::is_retryable_assistant_error;
pub use router::ApiRouter;
pub use support::is_supported;
pub use tokio_util::sync::CancellationToken;
pub use transform::llm_messages_json;
