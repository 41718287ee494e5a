#!/usr/bin/env bash
# Formats the extension host's JavaScript (crates/ext/js) with the prettier that
# scripts/js/package-lock.json pins and scripts/js/.prettierrc.json configures.
#
#   scripts/js/format.sh           # rewrite the files
#   scripts/js/format.sh --check   # only check (what .ci/run does); fails on a difference
#
# prettier is installed with `npm ci` once per lock file into the npm cache the tests use
# (~/.cache/knightcode-rs/npm, or $KC_NPM_CACHE), in an entry named by a digest of the
# package files and renamed into place whole, so later runs need no network.
set -euo pipefail
cd "$(dirname "$0")/../.."
cache="${KC_NPM_CACHE:-$HOME/.cache/knightcode-rs/npm}"
digest=$(cat scripts/js/package.json scripts/js/package-lock.json | sha256sum | cut -c1-16)
entry="$cache/js-tools-$digest"
if [ ! -x "$entry/node_modules/.bin/prettier" ]; then
	mkdir -p "$cache"
	staged=$(mktemp -d "$cache/.js-tools.XXXXXX")
	cp scripts/js/package.json scripts/js/package-lock.json "$staged/"
	(cd "$staged" && npm ci --no-audit --no-fund --loglevel=error)
	# Another run may have finished first; its entry is as good as ours.
	mv -T "$staged" "$entry" 2>/dev/null || rm -rf "$staged"
fi
mode=--write
if [ "${1:-}" = --check ]; then
	mode=--check
fi
exec "$entry/node_modules/.bin/prettier" --config scripts/js/.prettierrc.json --log-level warn $mode crates/ext/js
