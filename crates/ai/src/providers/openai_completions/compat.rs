//! `openai-completions` compatibility flags: detected from provider and URL, overridden by
//! `compat` in the model (models.json).

use serde_json::Map;
use serde_json::Value;

use crate::model::Model;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ThinkingFormat {
    OpenAi,
    OpenRouter,
    DeepSeek,
    Zai,
    Together,
    AntLing,
    Qwen,
    QwenChatTemplate,
    ChatTemplate,
    Baseten,
    StringThinking,
}

impl ThinkingFormat {
    fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "openai" => Self::OpenAi,
            "openrouter" => Self::OpenRouter,
            "deepseek" => Self::DeepSeek,
            "zai" => Self::Zai,
            "together" => Self::Together,
            "ant-ling" => Self::AntLing,
            "qwen" => Self::Qwen,
            "qwen-chat-template" => Self::QwenChatTemplate,
            "chat-template" => Self::ChatTemplate,
            "baseten" => Self::Baseten,
            "string-thinking" => Self::StringThinking,
            _ => return None,
        })
    }
}

#[derive(Debug, Clone)]
pub(crate) struct Compat {
    pub(crate) supports_store: bool,
    pub(crate) supports_developer_role: bool,
    pub(crate) supports_reasoning_effort: bool,
    pub(crate) supports_usage_in_streaming: bool,
    pub(crate) supports_finish_reason: bool,
    pub(crate) use_max_tokens_field: bool,
    pub(crate) requires_tool_result_name: bool,
    pub(crate) requires_assistant_after_tool_result: bool,
    pub(crate) requires_thinking_as_text: bool,
    pub(crate) requires_reasoning_content_on_assistant: bool,
    pub(crate) thinking_format: ThinkingFormat,
    pub(crate) open_router_routing: Option<Value>,
    pub(crate) vercel_gateway_routing: Option<Value>,
    pub(crate) chat_template_kwargs: Map<String, Value>,
    pub(crate) chat_template_args: Map<String, Value>,
    pub(crate) zai_tool_stream: bool,
    /// Top-level field that caps reasoning tokens, if the server has one.
    pub(crate) thinking_budget_field: Option<String>,
    pub(crate) supports_strict_mode: bool,
    pub(crate) anthropic_cache_control: bool,
    pub(crate) send_session_affinity_headers: bool,
    pub(crate) session_affinity_openrouter: bool,
    pub(crate) session_affinity_openai: bool,
    pub(crate) supports_long_cache_retention: bool,
    pub(crate) vllm_priority: Option<Value>,
}

impl Compat {
    pub(crate) fn of(model: &Model) -> Self {
        let provider = model.provider.as_str();
        let url = model.base_url.as_str();
        let lower_url = url.to_ascii_lowercase();
        let is_zai = matches!(provider, "zai" | "zai-coding-cn")
            || url.contains("api.z.ai")
            || url.contains("open.bigmodel.cn");
        let is_together = provider == "together"
            || url.contains("api.together.ai")
            || url.contains("api.together.xyz");
        let is_moonshot =
            matches!(provider, "moonshotai" | "moonshotai-cn") || url.contains("api.moonshot.");
        let is_openrouter = provider == "openrouter" || url.contains("openrouter.ai");
        let is_cf_workers =
            provider == "cloudflare-workers-ai" || url.contains("api.cloudflare.com");
        let is_cf_gateway =
            provider == "cloudflare-ai-gateway" || url.contains("gateway.ai.cloudflare.com");
        let is_nvidia = provider == "nvidia" || url.contains("integrate.api.nvidia.com");
        let is_ant_ling = provider == "ant-ling" || url.contains("api.ant-ling.com");
        let is_deepseek = provider == "deepseek" || lower_url.contains("deepseek.com");
        let is_grok = provider == "xai" || url.contains("api.x.ai");
        let is_chutes = url.contains("chutes.ai");
        let non_standard = is_nvidia
            || provider == "cerebras"
            || url.contains("cerebras.ai")
            || is_grok
            || is_together
            || is_chutes
            || is_deepseek
            || is_zai
            || is_moonshot
            || provider == "opencode"
            || url.contains("opencode.ai")
            || is_cf_workers
            || is_cf_gateway
            || is_ant_ling;
        let use_max_tokens = is_chutes
            || is_deepseek
            || is_moonshot
            || is_cf_gateway
            || is_together
            || is_nvidia
            || is_ant_ling
            || is_zai;
        let openrouter_dev_role = is_openrouter
            && (model.id.starts_with("anthropic/") || model.id.starts_with("openai/"));
        let thinking_format = if is_deepseek {
            ThinkingFormat::DeepSeek
        } else if is_zai {
            ThinkingFormat::Zai
        } else if is_together {
            ThinkingFormat::Together
        } else if is_ant_ling {
            ThinkingFormat::AntLing
        } else if is_openrouter {
            ThinkingFormat::OpenRouter
        } else {
            ThinkingFormat::OpenAi
        };
        let mut compat = Self {
            supports_store: !non_standard,
            supports_developer_role: openrouter_dev_role || (!non_standard && !is_openrouter),
            supports_reasoning_effort: !is_grok
                && !is_zai
                && !is_moonshot
                && !is_together
                && !is_cf_gateway
                && !is_nvidia
                && !is_ant_ling,
            supports_usage_in_streaming: true,
            supports_finish_reason: true,
            use_max_tokens_field: use_max_tokens,
            requires_tool_result_name: false,
            requires_assistant_after_tool_result: false,
            requires_thinking_as_text: false,
            requires_reasoning_content_on_assistant: is_deepseek,
            thinking_format,
            open_router_routing: None,
            vercel_gateway_routing: None,
            chat_template_kwargs: Map::new(),
            chat_template_args: Map::new(),
            zai_tool_stream: false,
            thinking_budget_field: None,
            supports_strict_mode: !is_moonshot && !is_together && !is_cf_gateway && !is_nvidia,
            anthropic_cache_control: provider == "openrouter" && model.id.starts_with("anthropic/"),
            send_session_affinity_headers: is_openrouter,
            session_affinity_openrouter: is_openrouter,
            session_affinity_openai: !is_openrouter,
            supports_long_cache_retention: !(is_together
                || is_cf_workers
                || is_cf_gateway
                || is_nvidia
                || is_ant_ling),
            vllm_priority: None,
        };
        if let Some(flags) = &model.compat {
            compat.apply(flags);
        }
        compat
    }

    fn apply(&mut self, flags: &Map<String, Value>) {
        let flag = |key: &str| flags.get(key).and_then(Value::as_bool);
        let set = |target: &mut bool, key: &str| {
            if let Some(value) = flag(key) {
                *target = value;
            }
        };
        set(&mut self.supports_store, "supportsStore");
        set(&mut self.supports_developer_role, "supportsDeveloperRole");
        set(
            &mut self.supports_reasoning_effort,
            "supportsReasoningEffort",
        );
        set(
            &mut self.supports_usage_in_streaming,
            "supportsUsageInStreaming",
        );
        set(&mut self.supports_finish_reason, "supportsFinishReason");
        set(
            &mut self.requires_tool_result_name,
            "requiresToolResultName",
        );
        set(
            &mut self.requires_assistant_after_tool_result,
            "requiresAssistantAfterToolResult",
        );
        set(
            &mut self.requires_thinking_as_text,
            "requiresThinkingAsText",
        );
        set(
            &mut self.requires_reasoning_content_on_assistant,
            "requiresReasoningContentOnAssistantMessages",
        );
        set(&mut self.zai_tool_stream, "zaiToolStream");
        set(&mut self.supports_strict_mode, "supportsStrictMode");
        set(
            &mut self.send_session_affinity_headers,
            "sendSessionAffinityHeaders",
        );
        set(
            &mut self.supports_long_cache_retention,
            "supportsLongCacheRetention",
        );
        if let Some(field) = flags.get("maxTokensField").and_then(Value::as_str) {
            self.use_max_tokens_field = field == "max_tokens";
        }
        if let Some(format) = flags
            .get("thinkingFormat")
            .and_then(Value::as_str)
            .and_then(ThinkingFormat::parse)
        {
            self.thinking_format = format;
        }
        if let Some(routing) = flags.get("openRouterRouting") {
            self.open_router_routing = Some(routing.clone());
        }
        if let Some(routing) = flags.get("vercelGatewayRouting") {
            self.vercel_gateway_routing = Some(routing.clone());
        }
        if let Some(kwargs) = flags.get("chatTemplateKwargs").and_then(Value::as_object) {
            self.chat_template_kwargs = kwargs.clone();
        }
        if let Some(args) = flags.get("chatTemplateArgs").and_then(Value::as_object) {
            self.chat_template_args = args.clone();
        }
        match flags
            .get("thinkingTokenBudgetField")
            .and_then(Value::as_str)
        {
            Some(field) => self.thinking_budget_field = Some(field.to_owned()),
            None if flag("supportsThinkingTokenBudget") == Some(true) => {
                self.thinking_budget_field = Some("thinking_token_budget".to_owned());
            }
            None => {}
        }
        if let Some(format) = flags.get("cacheControlFormat").and_then(Value::as_str) {
            self.anthropic_cache_control = format == "anthropic";
        }
        if let Some(format) = flags.get("sessionAffinityFormat").and_then(Value::as_str) {
            self.session_affinity_openrouter = format == "openrouter";
            self.session_affinity_openai = format == "openai";
        }
        if let Some(priority) = flags.get("vllmPriority") {
            self.vllm_priority = Some(priority.clone());
        }
    }
}
