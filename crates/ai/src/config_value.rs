//! Config values (providers.md §2): API keys and header values in `auth.json` and
//! `models.json` may be literals, `$NAME` / `${NAME}` environment templates, or `!command`.

use std::collections::HashMap;
use std::time::Duration;

use crate::error::AiError;

/// Where environment variables come from (the process, or a map in tests).
pub trait EnvSource: Send + Sync {
    fn var(&self, name: &str) -> Option<String>;
}

/// The process environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct ProcessEnv;

impl EnvSource for ProcessEnv {
    fn var(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

/// A fixed set of variables.
#[derive(Debug, Clone, Default)]
pub struct MapEnv(pub HashMap<String, String>);

impl MapEnv {
    pub fn new<K: Into<String>, V: Into<String>>(vars: impl IntoIterator<Item = (K, V)>) -> Self {
        Self(
            vars.into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        )
    }
}

impl EnvSource for MapEnv {
    fn var(&self, name: &str) -> Option<String> {
        self.0.get(name).cloned()
    }
}

/// Variables of one credential (`env` in auth.json) in front of another source.
pub(crate) struct LayeredEnv<'a> {
    pub(crate) first: Option<&'a HashMap<String, String>>,
    pub(crate) rest: &'a dyn EnvSource,
}

impl EnvSource for LayeredEnv<'_> {
    fn var(&self, name: &str) -> Option<String> {
        self.first
            .and_then(|m| m.get(name).cloned())
            .filter(|v| !v.is_empty())
            .or_else(|| self.rest.var(name))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Literal(String),
    Env(String),
}

fn is_name_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Splits a template into literal and `$NAME` parts; `$$` and `$!` escape `$` and `!`.
fn parse_template(value: &str) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = value.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            literal.push(c);
            continue;
        }
        match chars.peek().map(|(_, n)| *n) {
            Some(escaped @ ('$' | '!')) => {
                literal.push(escaped);
                chars.next();
            }
            Some('{') => {
                let rest = &value[i + 2..];
                match rest.find('}') {
                    Some(end)
                        if rest[..end].starts_with(is_name_start)
                            && rest[..end].chars().all(is_name_char) =>
                    {
                        if !literal.is_empty() {
                            parts.push(Part::Literal(std::mem::take(&mut literal)));
                        }
                        parts.push(Part::Env(rest[..end].to_owned()));
                        // Skip `{`, the name and `}`.
                        for _ in 0..end + 2 {
                            chars.next();
                        }
                    }
                    _ => literal.push('$'),
                }
            }
            Some(n) if is_name_start(n) => {
                let start = i + 1;
                let mut end = start;
                while let Some((j, n)) = chars.peek().copied() {
                    if !is_name_char(n) {
                        break;
                    }
                    end = j + n.len_utf8();
                    chars.next();
                }
                if !literal.is_empty() {
                    parts.push(Part::Literal(std::mem::take(&mut literal)));
                }
                parts.push(Part::Env(value[start..end].to_owned()));
            }
            _ => literal.push('$'),
        }
    }
    if !literal.is_empty() {
        parts.push(Part::Literal(literal));
    }
    parts
}

/// Whether a value runs a command (`!cmd`).
pub fn is_command(value: &str) -> bool {
    value.starts_with('!')
}

/// Environment variables a template value refers to.
pub fn env_var_names(value: &str) -> Vec<String> {
    if is_command(value) {
        return Vec::new();
    }
    let mut names: Vec<String> = Vec::new();
    for part in parse_template(value) {
        if let Part::Env(name) = part
            && !names.contains(&name)
        {
            names.push(name);
        }
    }
    names
}

/// Whether every variable the value needs is set (commands count as configured).
pub fn is_configured(value: &str, env: &dyn EnvSource) -> bool {
    env_var_names(value)
        .iter()
        .all(|name| env.var(name).is_some_and(|v| !v.is_empty()))
}

/// Resolves a template value; `None` when a variable is missing or empty.
pub fn resolve_template(value: &str, env: &dyn EnvSource) -> Option<String> {
    let mut out = String::new();
    for part in parse_template(value) {
        match part {
            Part::Literal(text) => out.push_str(&text),
            Part::Env(name) => out.push_str(&env.var(&name).filter(|v| !v.is_empty())?),
        }
    }
    Some(out)
}

const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs a `!command` with the user's shell; trimmed stdout, `None` on failure, timeout or
/// empty output.
pub async fn run_command(command: &str, env: &dyn EnvSource) -> Option<String> {
    let shell = env
        .var("SHELL")
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "/bin/sh".to_owned());
    let mut cmd = tokio::process::Command::new(shell);
    cmd.arg("-c")
        .arg(command)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = tokio::time::timeout(COMMAND_TIMEOUT, cmd.output())
        .await
        .ok()?
        .ok()?;
    if !output.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&output.stdout).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// Resolves any config value; errors name what the value is for.
pub async fn resolve(value: &str, what: &str, env: &dyn EnvSource) -> Result<String, AiError> {
    if let Some(command) = value.strip_prefix('!') {
        return run_command(command, env)
            .await
            .ok_or_else(|| AiError::Command {
                command: command.to_owned(),
                what: what.to_owned(),
                message: "it failed, timed out after 10 s, or printed nothing".to_owned(),
            });
    }
    resolve_template(value, env).ok_or_else(|| {
        let missing: Vec<String> = env_var_names(value)
            .into_iter()
            .filter(|name| env.var(name).is_none_or(|v| v.is_empty()))
            .collect();
        AiError::MissingEnv {
            names: missing.join(", "),
            what: what.to_owned(),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates() {
        let env = MapEnv::new([("KEY", "abc"), ("EMPTY", "")]);
        assert_eq!(resolve_template("$KEY", &env).as_deref(), Some("abc"));
        assert_eq!(
            resolve_template("x-${KEY}-y", &env).as_deref(),
            Some("x-abc-y")
        );
        assert_eq!(
            resolve_template("$$KEY $!x", &env).as_deref(),
            Some("$KEY !x")
        );
        assert_eq!(
            resolve_template("cost $5 ${", &env).as_deref(),
            Some("cost $5 ${")
        );
        assert_eq!(resolve_template("$MISSING", &env), None);
        assert_eq!(resolve_template("$EMPTY", &env), None);
        assert_eq!(
            resolve_template("literal", &env).as_deref(),
            Some("literal")
        );
        assert_eq!(env_var_names("$A ${B} $A"), vec!["A", "B"]);
        assert!(env_var_names("!echo $A").is_empty());
        assert!(is_configured("!cmd", &env));
        assert!(!is_configured("$MISSING", &env));
    }

    #[tokio::test]
    async fn commands() {
        let env = MapEnv::default();
        assert_eq!(
            resolve("!printf ' secret \\n'", "key", &env)
                .await
                .ok()
                .as_deref(),
            Some("secret")
        );
        assert!(resolve("!exit 3", "key", &env).await.is_err());
        assert!(resolve("!true", "key", &env).await.is_err());
        let err = resolve("$NOPE", "API key for provider \"x\"", &env)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("NOPE"), "{err}");
    }
}
