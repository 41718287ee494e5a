//! `knightcode auth login github-copilot`: GitHub's device flow on the command line. The host
//! is asked first (blank for github.com, as the reference asks), then the code to type at
//! GitHub is shown while GitHub is polled until it is entered.

use std::io::IsTerminal as _;
use std::io::Write;

use knightcode_ai::ProcessEnv;
use knightcode_ai::copilot;
use knightcode_ai::copilot::CopilotLogin;
use knightcode_ai::login;
use serde_json::Map;
use serde_json::Value;

use super::LOGIN_WAIT;
use super::Lines;

/// The device flow: the host, the code, the wait, and the Copilot token.
pub(super) async fn device_login(
    name: &str,
    lines: &mut Lines,
    out: &mut dyn Write,
) -> Result<Map<String, Value>, String> {
    let _ = write!(
        out,
        "{} [{}]: ",
        copilot::ENTERPRISE_PROMPT,
        copilot::ENTERPRISE_PLACEHOLDER
    );
    let _ = out.flush();
    let failed = |e: copilot::CopilotLoginError| format!("Failed to login to {name}: {e}");
    // The end of input answers blank: github.com, so `</dev/null` logs in there.
    let domain = tokio::select! {
        line = lines.next() => line.unwrap_or_default(),
        _ = tokio::signal::ctrl_c() => return Err("Login cancelled".to_owned()),
    };
    if !lines.terminal {
        let _ = writeln!(out);
    }
    let flow = CopilotLogin::new(&domain, &ProcessEnv).map_err(failed)?;
    let device = flow.device_code().await.map_err(failed)?;
    let _ = writeln!(
        out,
        "Open {} in your browser and enter code: {}\n",
        device.verification_uri, device.user_code
    );
    if std::io::stdout().is_terminal() {
        login::open_browser(&device.verification_uri);
    }
    let _ = writeln!(out, "Waiting for authentication...");
    let _ = out.flush();
    let wait = async {
        tokio::select! {
            token = flow.wait_for_github_token(&device) => token.map_err(failed),
            _ = tokio::signal::ctrl_c() => Err("Login cancelled".to_owned()),
        }
    };
    let github_token = tokio::time::timeout(LOGIN_WAIT, wait)
        .await
        .map_err(|_| "The login timed out; run it again.".to_owned())??;
    let entry = flow.copilot_entry(&github_token).await.map_err(failed)?;
    let _ = writeln!(out, "Enabling models...");
    let access = entry
        .get("access")
        .and_then(Value::as_str)
        .unwrap_or_default();
    flow.enable_models(access).await;
    Ok(entry)
}
