//! What switching one resource on or off writes (`knightcode config`). The change goes into
//! the settings file of the mode the screen is in: the user's (global mode) or the
//! project's (project mode).
//!
//! - A resource of that file's own scope: a top-level one gets `+p`/`-p` in the file's
//!   `extensions|skills|prompts|themes` list (replacing any `+p`/`-p`/`!p` for it; `p` is
//!   relative to the file's folder); a package one gets the same in the package entry's
//!   list of that kind (`p` relative to the package root), the entry turning into the object
//!   form and back into the plain string when no list is left.
//! - In project mode, a resource inherited from the user's scope: a project override that
//!   says only what differs. For a package, a `{"source": …, "autoload": false}` entry in
//!   the project's `packages` (a delta over the user's entry) with `+p`/`-p`; for a
//!   top-level resource, its absolute path and `+path`/`-path` in the project's list.
//!   Switching back to the inherited state takes the override out again.

use std::path::Path;

use crate::Layout;
use crate::Result;
use crate::Scope;
use crate::SettingsFile;
use crate::resolve::Origin;
use crate::resolve::Resource;
use crate::source;

/// Writes `enabled` for `resource` into the settings file of `write`. `inherited` is the
/// state the user's scope gives the resource (project mode, user resources).
pub fn toggle(
    layout: &Layout,
    resource: &Resource,
    write: Scope,
    enabled: bool,
    inherited: Option<bool>,
) -> Result<()> {
    SettingsFile::update(&layout.settings_path(write), |settings| {
        apply_toggle(settings, layout, resource, write, enabled, inherited);
        Ok(true)
    })?;
    Ok(())
}

/// The edit [`toggle`] makes to the settings file of `write`.
fn apply_toggle(
    settings: &mut SettingsFile,
    layout: &Layout,
    resource: &Resource,
    write: Scope,
    enabled: bool,
    inherited: Option<bool>,
) {
    let own = resource.scope == write;
    let state = if !own && inherited == Some(enabled) {
        None
    } else {
        Some(enabled)
    };
    match &resource.origin {
        Origin::Package { source, .. } => {
            let identity = layout.identity_in(source, resource.scope);
            let pattern = resource.pattern(layout);
            let create = (!own).then(|| stored_for(layout, source, resource.scope, write));
            settings.set_package_override(
                |stored| layout.identity_in(stored, write) == identity,
                resource.kind,
                &pattern,
                state,
                create.as_deref(),
            );
        }
        Origin::Auto | Origin::Settings if own => {
            settings.set_override(resource.kind, &resource.pattern(layout), state, true);
        }
        Origin::Auto | Origin::Settings => {
            let path = resource.path.to_string_lossy().into_owned();
            // The plain entry puts the user's file into the project's list, where the
            // override can reach it.
            settings.set_override(resource.kind, &path, state, state.is_some());
            if state.is_some() && !settings.has_entry(resource.kind, &path) {
                settings.push_entry(resource.kind, &path);
            }
            settings.drop_empty(resource.kind);
        }
    }
}

/// `source` (stored in `from`'s settings file) as `to`'s settings file would store it: a
/// relative local path is relative to each file's folder (an absolute one stays as it is).
fn stored_for(layout: &Layout, stored: &str, from: Scope, to: Scope) -> String {
    match source::parse(stored) {
        source::Source::Local(path) if Path::new(&path).is_relative() && !path.starts_with('~') => {
            let resolved = source::resolve(&path, &layout.base_dir(from), layout.home.as_deref());
            crate::relative(&resolved, &layout.base_dir(to))
        }
        _ => stored.to_owned(),
    }
}
