// Tiny pi extension used only by record.sh (loaded with `pi -e scripts/pi/fixture-ext.ts`).
// It exposes slash commands that the RPC driver sends as `prompt` messages so that the
// recorded session files also contain entry types that have no plain RPC command:
// custom, custom_message, label and branch_summary (tree navigation with a summary).
//
//   /kc-entry                 -> appendEntry("kc-fixture", {...})          => "custom" entry
//   /kc-message               -> sendMessage({customType: "kc-fixture"})   => "custom_message" entry
//   /kc-label <entryId> <txt> -> setLabel(entryId, txt)                   => "label" entry
//   /kc-unlabel <entryId>     -> setLabel(entryId, undefined)             => "label" entry without label
//   /kc-navigate <entryId>    -> navigateTree(entryId, {summarize: true}) => "branch_summary" entry
//   /kc-entries               -> notify with a JSON list of {id, parentId, type} + leafId

export default function (pi: any) {
	pi.registerCommand("kc-entry", {
		description: "fixture: append a custom entry",
		handler: async () => {
			pi.appendEntry("kc-fixture", { count: 42, tags: ["a", "b"], nested: { ok: true } });
		},
	});

	pi.registerCommand("kc-message", {
		description: "fixture: append a custom message (participates in context)",
		handler: async () => {
			pi.sendMessage({
				customType: "kc-fixture",
				content: "Injected context from the fixture extension.",
				display: true,
				details: { source: "fixture-ext" },
			});
		},
	});

	pi.registerCommand("kc-label", {
		description: "fixture: label an entry",
		handler: async (args: string) => {
			const [id, ...rest] = args.trim().split(/\s+/);
			pi.setLabel(id, rest.join(" "));
		},
	});

	pi.registerCommand("kc-unlabel", {
		description: "fixture: clear the label of an entry",
		handler: async (args: string) => {
			pi.setLabel(args.trim(), undefined);
		},
	});

	pi.registerCommand("kc-navigate", {
		description: "fixture: navigate the tree with a branch summary",
		handler: async (args: string, ctx: any) => {
			const result = await ctx.navigateTree(args.trim(), { summarize: true });
			ctx.ui.notify(JSON.stringify({ navigate: result }), "info");
		},
	});

	pi.registerCommand("kc-entries", {
		description: "fixture: report entry ids",
		handler: async (_args: string, ctx: any) => {
			const sm = ctx.sessionManager;
			const entries = sm.getEntries().map((e: any) => ({
				id: e.id,
				parentId: e.parentId,
				type: e.type,
				role: e.message?.role,
			}));
			ctx.ui.notify(JSON.stringify({ leafId: sm.getLeafId(), entries }), "info");
		},
	});
}
