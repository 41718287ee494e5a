//! Where KnightCode keeps its files: the agent directory (`$KNIGHTCODE_CODING_AGENT_DIR`, else
//! `~/.knightcode/agent`) and the package directory its documentation is in. One copy of the
//! rules for every front end.

use std::path::PathBuf;

use knightcode_ai::EnvSource;

use crate::error::Result;
use crate::error::RuntimeError;

/// The variable that moves the agent directory.
pub const AGENT_DIR_VAR: &str = "KNIGHTCODE_CODING_AGENT_DIR";
/// The variable that says where the package (and its `docs/`) is.
pub const PACKAGE_DIR_VAR: &str = "KNIGHTCODE_PACKAGE_DIR";

const NO_HOME: &str = "could not find your home directory; set KNIGHTCODE_CODING_AGENT_DIR to the folder that holds models.json and auth.json";

/// `~` and `~/…` expand to the home directory, as the reference expands its directory
/// variables; anything else is used as given.
fn expand_tilde(path: &str, home: Option<&PathBuf>) -> Result<PathBuf> {
    let rest = match path {
        "~" => "",
        _ => match path.strip_prefix("~/") {
            Some(rest) => rest,
            None => return Ok(PathBuf::from(path)),
        },
    };
    let home = home.ok_or_else(|| RuntimeError::Setup(NO_HOME.to_owned()))?;
    Ok(home.join(rest))
}

/// A variable that is unset or empty counts as unset (the reference tests it for truthiness).
fn dir_from_env(
    env: &dyn EnvSource,
    name: &str,
    home: Option<&PathBuf>,
) -> Result<Option<PathBuf>> {
    match env.var(name) {
        Some(value) if !value.is_empty() => expand_tilde(&value, home).map(Some),
        _ => Ok(None),
    }
}

/// `$KNIGHTCODE_CODING_AGENT_DIR`, else `~/.knightcode/agent`.
pub fn agent_dir(env: &dyn EnvSource, home: Option<PathBuf>) -> Result<PathBuf> {
    match dir_from_env(env, AGENT_DIR_VAR, home.as_ref())? {
        Some(dir) => Ok(dir),
        None => {
            let home = home.ok_or_else(|| RuntimeError::Setup(NO_HOME.to_owned()))?;
            Ok(home.join(".knightcode").join("agent"))
        }
    }
}

/// The package directory: `$KNIGHTCODE_PACKAGE_DIR`, else `beside` (the executable's folder,
/// as for the reference's single-file builds).
pub fn package_dir(env: &dyn EnvSource, home: Option<PathBuf>, beside: PathBuf) -> Result<PathBuf> {
    Ok(dir_from_env(env, PACKAGE_DIR_VAR, home.as_ref())?.unwrap_or(beside))
}

#[cfg(test)]
mod tests {
    use knightcode_ai::MapEnv;

    use super::*;

    #[test]
    fn agent_dir_from_the_variable_with_tilde_else_under_home() {
        let home = Some(PathBuf::from("/home/u"));
        let none = MapEnv::new(Vec::<(String, String)>::new());
        assert_eq!(
            agent_dir(&none, home.clone()).unwrap(),
            PathBuf::from("/home/u/.knightcode/agent")
        );
        let tilde = MapEnv::new([(AGENT_DIR_VAR, "~/agents/kc")]);
        assert_eq!(
            agent_dir(&tilde, home.clone()).unwrap(),
            PathBuf::from("/home/u/agents/kc")
        );
        let empty = MapEnv::new([(AGENT_DIR_VAR, "")]);
        assert_eq!(
            agent_dir(&empty, home).unwrap(),
            PathBuf::from("/home/u/.knightcode/agent")
        );
        let absolute = MapEnv::new([(AGENT_DIR_VAR, "/srv/kc")]);
        assert_eq!(
            agent_dir(&absolute, None).unwrap(),
            PathBuf::from("/srv/kc")
        );
        let error = agent_dir(&none, None).unwrap_err();
        assert!(
            error.to_string().contains("KNIGHTCODE_CODING_AGENT_DIR"),
            "{error}"
        );
    }
}
