// Cases the `@knightcode/tui` host package must render as the reference's
// `@mariozechner/pi-tui` does. `run()` returns one entry per case; the test runs it under
// our host and under Node with the real package and compares the text (ANSI stripped).
import {
  Box, Container, Editor, Input, Markdown, SelectList, SettingsList, Spacer, Text, TruncatedText,
  fuzzyFilter, isKeyRelease, matchesKey, parseKey, truncateToWidth, visibleWidth, wrapTextWithAnsi, Key,
} from "@mariozechner/pi-tui";

const cyan = (s) => `\x1b[36m${s}\x1b[39m`;
const bold = (s) => `\x1b[1m${s}\x1b[22m`;
const dim = (s) => `\x1b[2m${s}\x1b[22m`;
const bg = (s) => `\x1b[44m${s}\x1b[49m`;
const selectTheme = { selectedPrefix: cyan, selectedText: cyan, description: dim, scrollInfo: dim, noMatch: dim };

const KEYS = {
  up: "\x1b[A", down: "\x1b[B", left: "\x1b[D", right: "\x1b[C", enter: "\r", escape: "\x1b", tab: "\t",
  shiftTab: "\x1b[Z", backspace: "\x7f", ctrlC: "\x03", ctrlA: "\x01", ctrlE: "\x05", ctrlW: "\x17", ctrlK: "\x0b",
  ctrlU: "\x15", ctrlY: "\x19", altLeft: "\x1bb", home: "\x1b[H", end: "\x1b[F", pageDown: "\x1b[6~",
  kittyCtrlP: "\x1b[112;5u", kittyShiftEnter: "\x1b[13;2u", kittyRelease: "\x1b[97;1:3u", f5: "\x1b[15~",
};

function type(component, text) { for (const ch of text) component.handleInput(ch); }

export function run() {
  const out = {};
  out.widths = ["plain", "日本語", "e\u0301", "\x1b[31mred\x1b[0m", "tab\tx", ""].map(visibleWidth);
  out.truncate = [
    truncateToWidth("hello world", 8), truncateToWidth("hello", 8), truncateToWidth("日本語テキスト", 7),
    truncateToWidth("\x1b[31mcoloured text here\x1b[0m", 10), truncateToWidth("abcdef", 4, ""), truncateToWidth("ab", 5, "...", true),
  ];
  out.wrap = [
    wrapTextWithAnsi("the quick brown fox jumps over the lazy dog", 12),
    wrapTextWithAnsi("line one\nline two is longer than ten", 10),
    wrapTextWithAnsi("averyveryverylongword", 6),
    wrapTextWithAnsi("\x1b[32mgreen words wrap and stay green\x1b[39m", 11),
  ];
  const keyIds = ["up", "down", "enter", "escape", "tab", "shift+tab", "ctrl+c", "ctrl+a", "ctrl+w", "alt+left", "ctrl+p",
    "shift+enter", "a", "pageDown", "f5", "home", "backspace"];
  out.matches = Object.fromEntries(Object.entries(KEYS).map(([name, data]) => [name, keyIds.filter((id) => matchesKey(data, id))]));
  out.parse = Object.values(KEYS).concat(["a", "Z", "?", "\x08", "\x1f", "\x1bp", "\x1bn", "\x1bF", "\x1b\x1f", "\x1b[1;5A", "\x1b[3~"]).map((data) => parseKey(data) ?? null);
  out.release = [isKeyRelease(KEYS.kittyRelease), isKeyRelease("a"), isKeyRelease(KEYS.kittyCtrlP)];
  out.keyBuilders = [Key.ctrl("x"), Key.shiftTab ?? null, Key.enter, Key.ctrlShift("k"), Key.escape, Key.superAlt("q"), Key.pageUp, Key.question, typeof Key.then];
  out.fuzzy = fuzzyFilter(["read_file", "write_file", "bash", "grep", "find_files", "ls"], "fi", (x) => x);
  out.fuzzyWords = fuzzyFilter(["session list", "session new", "model select", "settings"], "se ne", (x) => x);

  out.text = new Text("Hello there, this text is long enough to wrap twice at twenty", 1, 1).render(20);
  out.textEmpty = new Text("   ", 1, 1).render(20);
  out.textBg = new Text("bg", 2, 0, bg).render(10);
  out.truncated = new TruncatedText("first line is long and gets cut\nsecond", 1, 1).render(16);
  const box = new Box(2, 1, bg);
  box.addChild(new Text("inside the box", 0, 0));
  box.addChild(new Spacer(1));
  box.addChild(new Text("more", 0, 0));
  out.box = box.render(24);
  const container = new Container();
  container.addChild(new Text("a", 0, 0));
  container.addChild(new Spacer(2));
  container.addChild(new Text("b", 0, 0));
  out.container = container.render(10);

  const items = [
    { value: "alpha", label: "Alpha", description: "The first letter of the Greek alphabet" },
    { value: "beta", label: "Beta", description: "Second" },
    { value: "gamma", label: "Gamma" },
    { value: "delta", label: "Delta", description: "Fourth, with a description long enough to be cut at the edge" },
    { value: "epsilon", label: "Epsilon" },
    { value: "zeta", label: "Zeta" },
  ];
  const list = new SelectList(items, 4, selectTheme);
  const events = [];
  list.onSelectionChange = (item) => events.push(`change:${item.value}`);
  list.onSelect = (item) => events.push(`select:${item.value}`);
  list.onCancel = () => events.push("cancel");
  out.select = [list.render(60)];
  list.handleInput(KEYS.down); list.handleInput(KEYS.down); list.handleInput(KEYS.down);
  out.select.push(list.render(60));
  list.handleInput(KEYS.up); list.handleInput(KEYS.enter); list.handleInput(KEYS.escape);
  out.select.push(list.render(30));
  list.setFilter("ep");
  out.select.push(list.render(60));
  list.setFilter("zz");
  out.select.push(list.render(60));
  out.selectEvents = events;

  const settingsTheme = { label: (t, sel) => (sel ? bold(t) : t), value: (t, sel) => (sel ? cyan(t) : dim(t)), description: dim, cursor: "→ ", hint: dim };
  const changes = [];
  const settings = new SettingsList([
    { id: "theme", label: "Theme", currentValue: "dark", values: ["dark", "light"], description: "Colour theme of the interface" },
    { id: "steps", label: "Show steps", currentValue: "true", values: ["true", "false"] },
    { id: "name", label: "Name", currentValue: "knight" },
  ], 5, settingsTheme, (id, value) => changes.push(`${id}=${value}`), () => changes.push("cancel"), { enableSearch: true });
  out.settings = [settings.render(50)];
  settings.handleInput(KEYS.enter); settings.handleInput(KEYS.down); settings.handleInput(" ");
  out.settings.push(settings.render(50));
  type(settings, "nam");
  out.settings.push(settings.render(50));
  settings.handleInput(KEYS.escape);
  out.settingsChanges = changes;

  const input = new Input();
  const submitted = [];
  input.onSubmit = (v) => submitted.push(v);
  type(input, "hello wide world");
  out.input = [input.getValue(), input.render(30)];
  input.handleInput(KEYS.ctrlW);
  out.input.push(input.getValue());
  input.handleInput(KEYS.ctrlA);
  type(input, ">");
  input.handleInput(KEYS.ctrlE);
  input.handleInput(KEYS.ctrlU);
  out.input.push(input.getValue());
  input.handleInput(KEYS.ctrlY);
  out.input.push(input.getValue());
  input.handleInput("\x1b[200~pasted\ntext\x1b[201~");
  out.input.push(input.getValue());
  input.handleInput(KEYS.left); input.handleInput(KEYS.left); input.handleInput(KEYS.backspace);
  out.input.push(input.getValue(), input.render(12));
  input.handleInput(KEYS.enter);
  out.inputSubmitted = submitted;
  const long = new Input();
  type(long, "0123456789abcdefghijklmnopqrstuvwxyz");
  out.inputScroll = [long.render(20)];
  long.handleInput(KEYS.home);
  out.inputScroll.push(long.render(20));

  const mdTheme = { heading: cyan, link: cyan, linkUrl: dim, code: cyan, codeBlock: (s) => s, codeBlockBorder: dim, quote: dim,
    quoteBorder: dim, hr: dim, listBullet: cyan, bold, italic: (s) => `\x1b[3m${s}\x1b[23m`, strikethrough: (s) => s, underline: (s) => s };
  out.markdown = new Markdown("# Title\n\nSome **bold** text and `code` in a paragraph that wraps.\n\n- one\n- two\n\n> quoted\n\n```\nlet x = 1;\n```", 1, 0, mdTheme).render(30);
  const fakeTui = { requestRender() {}, terminal: { rows: 24, columns: 40 } };
  const editor = new Editor(fakeTui, { borderColor: dim, selectList: selectTheme });
  const seen = [];
  editor.onSubmit = (text) => seen.push(`submit:${text}`);
  editor.onChange = (text) => seen.push(`change:${text}`);
  type(editor, "first line");
  editor.handleInput("\x1b[13;2u");
  type(editor, "second");
  out.editor = [editor.getText(), editor.getLines(), editor.getCursor()];
  editor.handleInput(KEYS.ctrlW);
  editor.handleInput(KEYS.enter);
  out.editor.push(editor.getText());
  editor.setText("set from code");
  editor.insertTextAtCursor("!");
  out.editor.push(editor.getText(), editor.getCursor());
  out.editorRender = editor.render(30);
  editor.setText("a long line of text that has to wrap in the editor");
  out.editorWrapped = editor.render(24);
  out.editorEvents = seen.filter((e) => e.startsWith("submit:") || e === "change:set from code!");
  return out;
}
