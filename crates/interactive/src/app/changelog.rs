//! The changelog the binary ships (the repository's `CHANGELOG.md`): `/changelog` shows it
//! all, and the first start of a newer version shows what changed since the version last
//! run, as pi does. pi keeps that version as `lastChangelogVersion` in the global settings;
//! with none there (a fresh install) it records the version and shows nothing, and it shows
//! nothing when a session with messages is resumed.

use knightcode_runtime::Settings;
use serde_json::Value;

use super::ui::Ui;
use crate::transcript::Card;
use crate::transcript::Notice;

const CHANGELOG: &str = include_str!("../../../../CHANGELOG.md");

/// This build's version.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// `major.minor.patch`.
type Version = (u64, u64, u64);

/// One `## [x.y.z] …` section: its version and its text, heading included.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    version: Version,
    text: String,
}

/// `x.y.z` (a leading `[` or `v` and anything after the third number ignored); missing
/// parts count as 0, as pi reads them.
fn parse_version(text: &str) -> Option<Version> {
    let text = text.trim_start_matches(['[', 'v']);
    let end = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let mut parts = text[..end].split('.').map(|p| p.parse::<u64>().ok());
    let major = parts.next().flatten()?;
    Some((
        major,
        parts.next().flatten().unwrap_or(0),
        parts.next().flatten().unwrap_or(0),
    ))
}

/// The sections of `text` whose heading names a version, in file order (newest first).
/// Headings that name none (`## [Unreleased]`) and what follows them are left out.
fn parse(text: &str) -> Vec<Entry> {
    let mut entries = Vec::new();
    let mut current: Option<(Version, Vec<&str>)> = None;
    for line in text.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            if let Some((version, lines)) = current.take() {
                entries.push(Entry {
                    version,
                    text: lines.join("\n").trim().to_owned(),
                });
            }
            // Only a full `x.y.z` makes a section, as pi's parser wants.
            current = parse_version(heading.trim())
                .filter(|_| heading.trim().trim_start_matches('[').split('.').count() >= 3)
                .map(|version| (version, vec![line]));
        } else if let Some((_, lines)) = &mut current {
            lines.push(line);
        }
    }
    if let Some((version, lines)) = current {
        entries.push(Entry {
            version,
            text: lines.join("\n").trim().to_owned(),
        });
    }
    entries
}

/// What a start of this version shows: the sections newer than `last_seen`, joined.
fn news_since(text: &str, last_seen: &str) -> Option<String> {
    let last = parse_version(last_seen).unwrap_or((0, 0, 0));
    let newer: Vec<String> = parse(text)
        .into_iter()
        .filter(|entry| entry.version > last)
        .map(|entry| entry.text)
        .collect();
    (!newer.is_empty()).then(|| newer.join("\n\n"))
}

impl Ui {
    /// `/changelog`: every section, oldest first (the newest ends next to the editor).
    pub fn show_changelog(&mut self) {
        let mut entries = parse(CHANGELOG);
        entries.reverse();
        let text = if entries.is_empty() {
            "No changelog entries found.".to_owned()
        } else {
            entries
                .into_iter()
                .map(|entry| entry.text)
                .collect::<Vec<_>>()
                .join("\n\n")
        };
        self.screen
            .transcript
            .push(Card::Notice(Notice::markdown("What's New", text)));
        self.mark_urgent();
    }

    /// Records the version and shows what [`at_start`] found (once the session is
    /// connected: the settings are saved through it).
    pub fn show_changelog_at_start(&mut self, start: ChangelogAtStart) {
        if start.record {
            self.save_settings(vec![("lastChangelogVersion".into(), VERSION.into())]);
        }
        if let Some(notice) = start.notice {
            self.screen.transcript.push(Card::Notice(notice));
            self.mark_urgent();
        }
    }
}

/// What a start does about the changelog.
pub struct ChangelogAtStart {
    /// Write this version as `lastChangelogVersion`.
    record: bool,
    notice: Option<Notice>,
}

/// At start: what changed since the version last run, unless a session with messages was
/// resumed; the version is recorded when it is new to the settings.
pub fn at_start(settings: &Settings, has_messages: bool) -> ChangelogAtStart {
    let nothing = ChangelogAtStart {
        record: false,
        notice: None,
    };
    if has_messages {
        return nothing;
    }
    let Some(last_seen) = settings.get("lastChangelogVersion").and_then(Value::as_str) else {
        // A fresh install: nothing is new to this user.
        return ChangelogAtStart {
            record: true,
            notice: None,
        };
    };
    let Some(news) = news_since(CHANGELOG, last_seen) else {
        return nothing;
    };
    let collapse = settings
        .get("collapseChangelog")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let notice = if collapse {
        let latest = parse(&news).first().map_or_else(
            || VERSION.to_owned(),
            |entry| {
                let (major, minor, patch) = entry.version;
                format!("{major}.{minor}.{patch}")
            },
        );
        Notice::new(
            crate::transcript::NoticeKind::Info,
            format!("Updated to v{latest}. Use /changelog to view full changelog."),
        )
    } else {
        Notice::markdown("What's New", news)
    };
    ChangelogAtStart {
        record: true,
        notice: Some(notice),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "# Changelog\n\nIntro.\n\n## [Unreleased]\n\n- soon\n\n## [0.2.0] - 2026-12-10\n\n- two\n\n## [0.1.1]\n\n- one one\n\n## [0.1.0] - 2026-12-04\n\n- one\n";

    #[test]
    fn sections_with_a_version_are_entries_newest_first() {
        let entries = parse(TEXT);
        let versions: Vec<_> = entries.iter().map(|e| e.version).collect();
        assert_eq!(versions, [(0, 2, 0), (0, 1, 1), (0, 1, 0)]);
        assert_eq!(entries[0].text, "## [0.2.0] - 2026-12-10\n\n- two");
    }

    #[test]
    fn news_are_the_sections_after_the_version_last_seen() {
        assert_eq!(
            news_since(TEXT, "0.1.0").as_deref(),
            Some("## [0.2.0] - 2026-12-10\n\n- two\n\n## [0.1.1]\n\n- one one")
        );
        assert_eq!(news_since(TEXT, "0.2.0"), None);
        assert_eq!(news_since(TEXT, "0.2"), None);
    }

    #[test]
    fn the_shipped_changelog_has_this_version() {
        assert!(
            parse(CHANGELOG)
                .iter()
                .any(|e| Some(e.version) == parse_version(VERSION)),
            "CHANGELOG.md has no section for {VERSION}"
        );
    }
}
