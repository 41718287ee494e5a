/**
 * Benchmark extension (scripts/bench/tui_ext.py, scenario `ext-stream`): a live footer.
 * The footer shows the number of streamed characters, counted from `message_update`
 * events, and the model id, and below them the extensions' statuses; every
 * `message_update` asks for a render and also sets a status (`ctx.ui.setStatus`) - the
 * demanding case of a footer that follows the stream.
 *
 * Usage: knightcode -e scripts/bench/ext/live-footer.ts   (or pi -e ...)
 */

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { truncateToWidth, visibleWidth } from "@mariozechner/pi-tui";

export default function (pi: ExtensionAPI) {
	let chars = 0;
	let updates = 0;
	let requestRender: (() => void) | undefined;

	pi.on("session_start", async (_event, ctx) => {
		if (!ctx.hasUI) return;
		ctx.ui.setFooter((tui, theme, footerData) => {
			requestRender = () => tui.requestRender();
			return {
				dispose() {
					requestRender = undefined;
				},
				invalidate() {},
				render(width: number): string[] {
					const left = theme.fg("accent", `streamed ${chars.toLocaleString("en-US")} chars`) + theme.fg("dim", ` · ${updates} updates`);
					const right = theme.fg("dim", ctx.model?.id || "no-model");
					const pad = " ".repeat(Math.max(1, width - visibleWidth(left) - visibleWidth(right)));
					const statuses = [...footerData.getExtensionStatuses().values()].join(theme.fg("dim", " · "));
					return [truncateToWidth(left + pad + right, width), truncateToWidth(statuses, width)];
				},
			};
		});
		ctx.ui.setStatus("bench", theme(ctx, "dim", "idle"));
	});

	pi.on("message_update", async (event, ctx) => {
		const e: any = event.assistantMessageEvent;
		if (e && e.type === "text_delta" && typeof e.delta === "string") chars += e.delta.length;
		updates++;
		ctx.ui.setStatus("bench", theme(ctx, "success", `● ${chars} chars`));
		requestRender?.();
	});

	pi.on("message_end", async (_event, ctx) => {
		ctx.ui.setStatus("bench", theme(ctx, "dim", `done: ${chars} chars`));
		requestRender?.();
	});
}

function theme(ctx: any, role: string, text: string): string {
	return ctx.ui.theme ? ctx.ui.theme.fg(role, text) : text;
}
