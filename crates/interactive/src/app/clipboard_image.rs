//! Reading an image from the system clipboard (Ctrl+V) through the platform's own clipboard
//! program: `wl-paste` on Wayland, `xclip` on X11, `osascript` on macOS. Terminals pass
//! only text through a paste, so the image has to come from the clipboard owner directly.
//!
//! The read runs as a task of its own and reports through a channel the UI loop waits on,
//! so a slow or hung clipboard owner never blocks typing (each program gets a few seconds).

use std::time::Duration;

use tokio::process::Command;
use tokio::sync::mpsc;

/// How long one clipboard program may take.
const PROGRAM_TIMEOUT: Duration = Duration::from_secs(3);

/// Image types taken from the clipboard, most preferred first.
const IMAGE_MIME_TYPES: &[&str] = &["image/png", "image/jpeg", "image/webp", "image/gif"];

/// An image read from the clipboard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClipboardImage {
    pub bytes: Vec<u8>,
    pub mime_type: String,
}

/// What a read found: an image, no image on the clipboard, or why it could not look.
pub type ClipboardRead = Result<Option<ClipboardImage>, String>;

/// Where the clipboard programs are looked for: the process environment.
#[derive(Debug, Clone, Default)]
pub struct ClipboardEnv {
    pub wayland: bool,
    pub x11: bool,
    pub macos: bool,
}

impl ClipboardEnv {
    pub fn from_process() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        Self {
            wayland: set("WAYLAND_DISPLAY"),
            x11: set("DISPLAY"),
            macos: cfg!(target_os = "macos"),
        }
    }
}

/// Starts a read; its result arrives on `results`.
pub fn spawn_read(env: ClipboardEnv, results: mpsc::UnboundedSender<ClipboardRead>) {
    tokio::spawn(async move {
        let _ = results.send(read(&env).await);
    });
}

async fn read(env: &ClipboardEnv) -> ClipboardRead {
    let mut tried = Vec::new();
    if env.wayland {
        match read_with(&["wl-paste", "--list-types"], |mime| {
            vec!["wl-paste", "--no-newline", "--type", mime]
        })
        .await
        {
            Err(Missing) => tried.push("wl-paste (wl-clipboard)"),
            Ok(found) => return found,
        }
    }
    if env.x11 {
        match read_with(
            &[
                "xclip",
                "-selection",
                "clipboard",
                "-target",
                "TARGETS",
                "-out",
            ],
            |mime| vec!["xclip", "-selection", "clipboard", "-target", mime, "-out"],
        )
        .await
        {
            Err(Missing) => tried.push("xclip"),
            Ok(found) => return found,
        }
    }
    if env.macos {
        return read_macos().await;
    }
    if tried.is_empty() {
        return Err(
            "No clipboard to read an image from (no Wayland or X11 display); paste the image file's path instead."
                .to_owned(),
        );
    }
    Err(format!(
        "Reading images from the clipboard needs {}; install it, or paste the image file's path instead.",
        tried.join(" or ")
    ))
}

/// The program is not installed.
struct Missing;

/// Lists the clipboard's types with `list`, then reads the first image type with `get`.
async fn read_with(
    list: &[&str],
    get: impl Fn(&str) -> Vec<&str>,
) -> Result<ClipboardRead, Missing> {
    let types = match run(list).await {
        Err(RunError::Missing) => return Err(Missing),
        Err(RunError::Failed(message)) => return Ok(Err(message)),
        // Nothing on the clipboard (or not owned by anyone): no image.
        Ok(None) => return Ok(Ok(None)),
        Ok(Some(out)) => String::from_utf8_lossy(&out).into_owned(),
    };
    let offered: Vec<&str> = types.lines().map(str::trim).collect();
    let Some(mime) = IMAGE_MIME_TYPES.iter().find(|m| offered.contains(m)) else {
        return Ok(Ok(None));
    };
    Ok(match run(&get(mime)).await {
        Ok(Some(bytes)) if !bytes.is_empty() => Ok(Some(ClipboardImage {
            bytes,
            mime_type: (*mime).to_owned(),
        })),
        Ok(_) => Ok(None),
        Err(RunError::Missing) => Err(format!("{} disappeared while reading", list[0])),
        Err(RunError::Failed(message)) => Err(message),
    })
}

/// macOS: AppleScript hands the clipboard's PNG over as `«data PNGf<hex>»`.
async fn read_macos() -> ClipboardRead {
    match run(&["osascript", "-e", "the clipboard as «class PNGf»"]).await {
        Ok(Some(out)) => {
            let text = String::from_utf8_lossy(&out);
            let hex = text
                .trim()
                .strip_prefix("«data PNGf")
                .and_then(|rest| rest.strip_suffix('»'));
            Ok(hex.and_then(decode_hex).map(|bytes| ClipboardImage {
                bytes,
                mime_type: "image/png".to_owned(),
            }))
        }
        // No PNG on the clipboard makes osascript fail: no image.
        Ok(None) | Err(RunError::Failed(_)) => Ok(None),
        Err(RunError::Missing) => Err("osascript is missing".to_owned()),
    }
}

fn decode_hex(hex: &str) -> Option<Vec<u8>> {
    if !hex.len().is_multiple_of(2) {
        return None;
    }
    (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect()
}

enum RunError {
    Missing,
    Failed(String),
}

/// Runs a program; `Ok(None)` when it exits unsuccessfully (an empty clipboard, or one
/// without the asked-for type), its stdout otherwise.
async fn run(argv: &[&str]) -> Result<Option<Vec<u8>>, RunError> {
    let mut command = Command::new(argv[0]);
    command
        .args(&argv[1..])
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true);
    let output = match tokio::time::timeout(PROGRAM_TIMEOUT, command.output()).await {
        Err(_) => {
            return Err(RunError::Failed(format!(
                "{} did not answer within {} s",
                argv[0],
                PROGRAM_TIMEOUT.as_secs()
            )));
        }
        Ok(Err(error)) if error.kind() == std::io::ErrorKind::NotFound => {
            return Err(RunError::Missing);
        }
        Ok(Err(error)) => return Err(RunError::Failed(format!("{}: {error}", argv[0]))),
        Ok(Ok(output)) => output,
    };
    Ok(output.status.success().then_some(output.stdout))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn applescript_hex_decodes() {
        assert_eq!(decode_hex("89504e47"), Some(vec![0x89, 0x50, 0x4e, 0x47]));
        assert_eq!(decode_hex("8950F"), None);
        assert_eq!(decode_hex("zz"), None);
    }

    #[tokio::test]
    async fn no_display_says_what_to_do() {
        let message = read(&ClipboardEnv::default()).await.unwrap_err();
        assert!(message.contains("paste the image file's path"), "{message}");
    }
}
