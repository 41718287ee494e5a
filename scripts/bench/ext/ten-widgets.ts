/**
 * Benchmark extension (scripts/bench/tui_ext.py, scenario `ext-widgets`): ten component
 * widgets, six above the editor and four below, each rendering 3-5 lines (33 in all) with theme
 * colours, `truncateToWidth`/`visibleWidth` and a counter. A timer bumps every counter
 * every TICK_MS and asks for a render, so each frame all ten render again.
 *
 * Every render() call is timed with performance.now(); the calls of one synchronous
 * render pass (one frame: the host renders its components one after another) are
 * summed in a microtask after the pass. On `session_shutdown` (ctrl+d) the samples go
 * as JSON to the file named by KC_BENCH_OUT:
 *   { frames: [{ t: epoch ms, ms: summed render time, n: render calls }], ticks: [epoch ms] }
 *
 * Usage: knightcode -e scripts/bench/ext/ten-widgets.ts   (or pi -e ...)
 */

import { writeFileSync } from "node:fs";
import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";

const WIDGETS = 10;
const ABOVE = 6;
const TICK_MS = Number(process.env.KC_BENCH_TICK_MS || 50);
const ROLES = ["accent", "success", "warning", "muted", "dim", "error", "borderAccent", "mdHeading", "mdLink", "mdCode"];

export default function (pi: ExtensionAPI) {
	const frames: { t: number; ms: number; n: number }[] = [];
	const ticks: number[] = [];
	const counters = new Array(WIDGETS).fill(0);
	let frameMs = 0;
	let frameCalls = 0;
	let timer: ReturnType<typeof setInterval> | undefined;

	const closeFrame = () => {
		frames.push({ t: Date.now(), ms: frameMs, n: frameCalls });
		frameMs = 0;
		frameCalls = 0;
	};

	// One widget's lines: a title row with the counter at the right edge, a progress bar,
	// a row of coloured cells and (for some) a long line cut to the width.
	function lines(i: number, width: number, theme: any): string[] {
		const n = counters[i];
		const role = ROLES[i % ROLES.length];
		const title = theme.fg(role, theme.bold(`● widget ${i + 1}`)) + theme.fg("dim", ` · ${i < ABOVE ? "above" : "below"} the editor`);
		const count = theme.fg("accent", `#${n}`);
		const pad = " ".repeat(Math.max(1, width - visibleWidth(title) - visibleWidth(count)));
		const out = [truncateToWidth(title + pad + count, width)];
		const barWidth = Math.max(10, Math.min(60, width - 20));
		const filled = (n * (i + 3)) % (barWidth + 1);
		const bar = theme.fg("success", "█".repeat(filled)) + theme.fg("dim", "░".repeat(barWidth - filled));
		out.push(truncateToWidth(`  ${bar} ${theme.fg("muted", `${Math.round((filled * 100) / barWidth)}%`)}`, width));
		const cells: string[] = [];
		for (let k = 0; k < 8; k++) cells.push(theme.fg(ROLES[(i + k + n) % ROLES.length], `cell${k}=${(n * (k + 1)) % 997}`));
		out.push(truncateToWidth("  " + cells.join(theme.fg("dim", " │ ")), width, "…"));
		// Widgets 1 and 6 have a fourth line, widget 1 a fifth: 33 lines in all, so that with
		// the editor and the footer everything fits in a 40-row terminal.
		if (i === 0 || i === 5) {
			const long = `  tick ${n}: ` + "the quick brown fox jumps over the lazy dog ".repeat(4);
			out.push(truncateToWidth(theme.fg("mdQuote", long), width, theme.fg("dim", "…")));
		}
		if (i === 0) out.push(theme.fg("borderMuted", "─".repeat(Math.max(0, Math.min(width, 80)))));
		return out;
	}

	function widget(i: number) {
		return (_tui: any, theme: any) => ({
			render(width: number): string[] {
				const t0 = performance.now();
				const out = lines(i, width, theme);
				frameMs += performance.now() - t0;
				if (frameCalls++ === 0) queueMicrotask(closeFrame);
				return out;
			},
			invalidate() {},
		});
	}

	pi.on("session_start", async (_event, ctx) => {
		if (!ctx.hasUI) return;
		let tui: any;
		for (let i = 0; i < WIDGETS; i++) {
			const factory = widget(i);
			ctx.ui.setWidget(`bench-${i + 1}`, (t: any, theme: any) => {
				tui = t;
				return factory(t, theme);
			}, { placement: i < ABOVE ? "aboveEditor" : "belowEditor" });
		}
		timer = setInterval(() => {
			ticks.push(Date.now());
			for (let i = 0; i < WIDGETS; i++) counters[i]++;
			tui?.requestRender();
		}, TICK_MS);
	});

	pi.on("session_shutdown", async () => {
		if (timer) clearInterval(timer);
		const path = process.env.KC_BENCH_OUT;
		if (path) writeFileSync(path, JSON.stringify({ tickMs: TICK_MS, frames, ticks }));
	});
}
