//! `/export` and RPC `export_html`: tool calls that extensions draw are drawn first, with
//! the session unlocked; the page is then prepared under the lock and written after it.

use std::path::PathBuf;

use super::Reply;
use super::task::Ctx;
use crate::export::ExportColors;

pub(super) async fn html(
    ctx: &Ctx,
    output: Option<&PathBuf>,
    colors: Option<&ExportColors>,
) -> Reply {
    let colors = colors.cloned().unwrap_or_default();
    let rendered = match ctx.extensions.as_ref() {
        Some(extensions) => {
            let tools = ctx.view.with_session(crate::export_renders::tool_calls);
            crate::export_renders::draw(extensions.host(), tools).await
        }
        None => None,
    };
    let prepared = ctx.view.with_session(|session| {
        crate::export::session_html(
            session,
            output.map(PathBuf::as_path),
            &colors,
            rendered.as_ref(),
        )
    });
    match crate::export::finish(prepared) {
        Ok(path) => Reply::Exported(path),
        Err(error) => Reply::Failed(error.into()),
    }
}
