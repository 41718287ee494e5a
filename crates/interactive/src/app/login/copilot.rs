//! `/login` for GitHub Copilot: GitHub's device flow in the login dialog, as the reference
//! runs it. The host is asked first (blank for github.com), then the address and the code to
//! type there are shown while GitHub is polled; the Copilot token GitHub's token buys is
//! what is stored.

use knightcode_ai::ProcessEnv;
use knightcode_ai::copilot;
use knightcode_ai::copilot::CopilotLogin;
use serde_json::Map;
use serde_json::Value;
use tokio::sync::mpsc;

use super::LoginNews;

/// What the reference says while GitHub is polled, and while models are switched on.
pub(super) const WAITING: &str = "Waiting for browser authentication...";
const ENABLING: &str = "Enabling models...";

/// The device flow; `answers` brings what is typed in the dialog.
pub(super) async fn device_login(
    mut answers: mpsc::UnboundedReceiver<String>,
    report: &impl Fn(LoginNews),
) -> Result<Map<String, Value>, String> {
    report(LoginNews::Ask {
        prompt: copilot::ENTERPRISE_PROMPT.to_owned(),
        placeholder: copilot::ENTERPRISE_PLACEHOLDER.to_owned(),
    });
    let Some(domain) = answers.recv().await else {
        return Err("Login cancelled".to_owned());
    };
    let flow = CopilotLogin::new(&domain, &ProcessEnv).map_err(|e| e.to_string())?;
    let device = flow.device_code().await.map_err(|e| e.to_string())?;
    report(LoginNews::DeviceCode {
        url: device.verification_uri.clone(),
        code: device.user_code.clone(),
    });
    let github_token = flow
        .wait_for_github_token(&device)
        .await
        .map_err(|e| e.to_string())?;
    let entry = flow
        .copilot_entry(&github_token)
        .await
        .map_err(|e| e.to_string())?;
    report(LoginNews::Progress(ENABLING.to_owned()));
    let access = entry
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or_default();
    flow.enable_models(access).await;
    Ok(entry)
}
