// `@knightcode/tui` (and `@mariozechner/pi-tui`): the components extensions build screens
// from, line-based like ours. Measurement, wrapping, key parsing, keybindings, fuzzy
// matching and markdown are our Rust code (`__kc.tui`), so an extension's lines measure
// and wrap exactly as the built-in views do. Components are plain classes extensions may
// subclass; nothing here draws: the terminal UI asks for `render(width)` lines.
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  internal.defineHost("tui", () => {
    const native = internal.kc.tui;
    const missing = (names) => Object.fromEntries(names.map((n) => [n, internal.missing(`@knightcode/tui.${n}`)]));

    const visibleWidth = (text) => native.width(String(text ?? ""));
    const truncateToWidth = (text, maxWidth, ellipsis = "...", pad = false) =>
      native.truncate(String(text ?? ""), Number(maxWidth) || 0, String(ellipsis), !!pad);
    const wrapTextWithAnsi = (text, width) => native.wrap(String(text ?? ""), Number(width) || 1);
    const graphemes = (text) => native.graphemes(String(text));
    const sliceByColumn = (text, start, length) => native.slice(String(text), start, length);
    const padToWidth = (line, width) => line + " ".repeat(Math.max(0, width - visibleWidth(line)));
    const withBackground = (line, width, bgFn) => bgFn(padToWidth(line, width));
    const isWhitespace = (ch) => /\s/.test(ch);
    const isPunctuation = (ch) => /[(){}[\]<>.,;:'"!?+\-=*/\\|&%^$#@~`]/.test(ch);

    // Keys: ids like "ctrl+c", "shift+tab", "escape"; `Key.ctrlAlt("p")` builds them.
    const KEY_SYMBOLS = {
      backtick: "`",
      hyphen: "-",
      equals: "=",
      leftbracket: "[",
      rightbracket: "]",
      backslash: "\\",
      semicolon: ";",
      quote: "'",
      comma: ",",
      period: ".",
      slash: "/",
      exclamation: "!",
      at: "@",
      hash: "#",
      dollar: "$",
      percent: "%",
      caret: "^",
      ampersand: "&",
      asterisk: "*",
      leftparen: "(",
      rightparen: ")",
      underscore: "_",
      plus: "+",
      pipe: "|",
      tilde: "~",
      leftbrace: "{",
      rightbrace: "}",
      colon: ":",
      lessthan: "<",
      greaterthan: ">",
      question: "?",
    };
    const Key = { ...KEY_SYMBOLS };
    for (const name of [
      "escape",
      "esc",
      "enter",
      "return",
      "tab",
      "space",
      "backspace",
      "delete",
      "insert",
      "clear",
      "home",
      "end",
      "pageUp",
      "pageDown",
      "up",
      "down",
      "left",
      "right",
      "f1",
      "f2",
      "f3",
      "f4",
      "f5",
      "f6",
      "f7",
      "f8",
      "f9",
      "f10",
      "f11",
      "f12",
    ]) {
      Key[name] = name;
    }
    for (const combo of [
      "ctrl",
      "shift",
      "alt",
      "super",
      "ctrlShift",
      "shiftCtrl",
      "ctrlAlt",
      "altCtrl",
      "shiftAlt",
      "altShift",
      "ctrlSuper",
      "superCtrl",
      "shiftSuper",
      "superShift",
      "altSuper",
      "superAlt",
      "ctrlShiftAlt",
      "ctrlShiftSuper",
    ]) {
      const prefix = combo.replace(/([A-Z])/g, "+$1").toLowerCase();
      Key[combo] = (key) => `${prefix}+${key}`;
    }
    const matchesKey = (data, keyId) =>
      typeof data === "string" && typeof keyId === "string" && native.matchesKey(data, keyId);
    const parseKey = (data) => (typeof data === "string" ? native.parseKey(data) : undefined);
    const isKeyRelease = (data) => typeof data === "string" && native.keyKind(data) === "release";
    const isKeyRepeat = (data) => typeof data === "string" && native.keyKind(data) === "repeat";
    const decodeKittyPrintable = (data) => (typeof data === "string" ? native.kittyPrintable(data) : undefined);

    // `getKeybindings()`: the app's bindings (defaults plus keybindings.json) by action id.
    const keybindings = {
      matches: (data, action) => typeof data === "string" && native.bindingMatches(data, String(action)),
      getKeys: (action) => native.bindingKeys(String(action)),
    };
    const getKeybindings = () => keybindings;

    function fuzzyMatch(query, text) {
      const score = native.fuzzy(String(query), String(text));
      return score === undefined || score === null ? { matches: false, score: 0 } : { matches: true, score };
    }
    function fuzzyFilter(items, query, getText) {
      const tokens = String(query).trim().split(/\s+/).filter(Boolean);
      if (tokens.length === 0) return items;
      const scored = [];
      items.forEach((item, index) => {
        const text = getText(item);
        let total = 0;
        for (const token of tokens) {
          const m = fuzzyMatch(token, text);
          if (!m.matches) return;
          total += m.score;
        }
        scored.push({ item, total, index });
      });
      scored.sort((a, b) => a.total - b.total || a.index - b.index);
      return scored.map((s) => s.item);
    }

    class Container {
      constructor() {
        this.children = [];
      }
      addChild(component) {
        this.children.push(component);
      }
      removeChild(component) {
        const i = this.children.indexOf(component);
        if (i >= 0) this.children.splice(i, 1);
      }
      clear() {
        this.children = [];
      }
      invalidate() {
        for (const child of this.children) child.invalidate?.();
      }
      render(width) {
        const lines = [];
        for (const child of this.children) lines.push(...child.render(width));
        return lines;
      }
    }

    class Text {
      constructor(text = "", paddingX = 1, paddingY = 1, customBgFn) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.customBgFn = customBgFn;
        this.cache = null;
      }
      setText(text) {
        this.text = text;
        this.cache = null;
      }
      setCustomBgFn(fn) {
        this.customBgFn = fn;
        this.cache = null;
      }
      invalidate() {
        this.cache = null;
      }
      render(width) {
        if (this.cache && this.cache.text === this.text && this.cache.width === width) return this.cache.lines;
        let lines = [];
        if (this.text && String(this.text).trim() !== "") {
          const margin = " ".repeat(this.paddingX);
          const inner = Math.max(1, width - 2 * this.paddingX);
          const fill = (line) =>
            this.customBgFn ? withBackground(line, width, this.customBgFn) : padToWidth(line, width);
          const body = wrapTextWithAnsi(String(this.text).replace(/\t/g, "   "), inner).map((l) =>
            fill(margin + l + margin),
          );
          const blank = Array.from({ length: this.paddingY }, () => fill(""));
          lines = [...blank, ...body, ...blank];
        }
        this.cache = { text: this.text, width, lines };
        return lines;
      }
    }

    class TruncatedText {
      constructor(text, paddingX = 0, paddingY = 0) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
      }
      invalidate() {}
      render(width) {
        const blank = Array.from({ length: this.paddingY }, () => " ".repeat(width));
        const first = String(this.text ?? "").split("\n")[0];
        const margin = " ".repeat(this.paddingX);
        const shown = truncateToWidth(first, Math.max(1, width - 2 * this.paddingX));
        return [...blank, padToWidth(margin + shown + margin, width), ...blank];
      }
    }

    class Spacer {
      constructor(lines = 1) {
        this.lines = lines;
      }
      setLines(lines) {
        this.lines = lines;
      }
      invalidate() {}
      render() {
        return Array.from({ length: this.lines }, () => "");
      }
    }

    class Box {
      constructor(paddingX = 1, paddingY = 1, bgFn) {
        this.children = [];
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.bgFn = bgFn;
      }
      addChild(c) {
        this.children.push(c);
      }
      removeChild(c) {
        const i = this.children.indexOf(c);
        if (i >= 0) this.children.splice(i, 1);
      }
      clear() {
        this.children = [];
      }
      setBgFn(fn) {
        this.bgFn = fn;
      }
      invalidate() {
        for (const c of this.children) c.invalidate?.();
      }
      render(width) {
        const inner = Math.max(1, width - 2 * this.paddingX);
        const margin = " ".repeat(this.paddingX);
        const body = [];
        for (const child of this.children) for (const line of child.render(inner)) body.push(margin + line);
        if (body.length === 0) return [];
        const fill = (line) => (this.bgFn ? withBackground(line, width, this.bgFn) : padToWidth(line, width));
        const blank = Array.from({ length: this.paddingY }, () => fill(""));
        return [...blank, ...body.map(fill), ...blank];
      }
    }

    const oneLine = (text) =>
      String(text)
        .replace(/[\r\n]+/g, " ")
        .trim();
    class SelectList {
      constructor(items, maxVisible, theme, layout = {}) {
        this.items = items;
        this.filteredItems = items;
        this.maxVisible = maxVisible;
        this.theme = theme;
        this.layout = layout || {};
        this.selectedIndex = 0;
        this.onSelect = undefined;
        this.onCancel = undefined;
        this.onSelectionChange = undefined;
      }
      setFilter(filter) {
        const f = String(filter).toLowerCase();
        this.filteredItems = this.items.filter((item) => String(item.value).toLowerCase().startsWith(f));
        this.selectedIndex = 0;
      }
      setSelectedIndex(index) {
        this.selectedIndex = Math.max(0, Math.min(index, this.filteredItems.length - 1));
      }
      getSelectedItem() {
        return this.filteredItems[this.selectedIndex] || null;
      }
      invalidate() {}
      label(item) {
        return item.label || item.value;
      }
      primaryColumn() {
        const l = this.layout;
        const lo = l.minPrimaryColumnWidth ?? l.maxPrimaryColumnWidth ?? 32;
        const hi = l.maxPrimaryColumnWidth ?? l.minPrimaryColumnWidth ?? 32;
        const min = Math.max(1, Math.min(lo, hi)),
          max = Math.max(1, Math.max(lo, hi));
        const widest = this.filteredItems.reduce((w, item) => Math.max(w, visibleWidth(this.label(item)) + 2), 0);
        return Math.max(min, Math.min(widest, max));
      }
      primary(item, selected, maxWidth, columnWidth) {
        const text = this.label(item);
        const cut = this.layout.truncatePrimary
          ? this.layout.truncatePrimary({ text, maxWidth, columnWidth, item, isSelected: selected })
          : truncateToWidth(text, maxWidth, "");
        return truncateToWidth(cut, maxWidth, "");
      }
      row(item, selected, width, column) {
        const prefix = selected ? "→ " : "  ";
        const description = item.description ? oneLine(item.description) : "";
        if (description && width > 40) {
          const col = Math.max(1, Math.min(column, width - 2 - 4));
          const value = this.primary(item, selected, Math.max(1, col - 2), col);
          const gap = " ".repeat(Math.max(1, col - visibleWidth(value)));
          const room = width - (2 + visibleWidth(value) + gap.length) - 2;
          if (room > 10) {
            const desc = truncateToWidth(description, room, "");
            return selected
              ? this.theme.selectedText(prefix + value + gap + desc)
              : prefix + value + this.theme.description(gap + desc);
          }
        }
        const value = this.primary(item, selected, width - 4, width - 4);
        return selected ? this.theme.selectedText(prefix + value) : prefix + value;
      }
      render(width) {
        const items = this.filteredItems;
        if (items.length === 0) return [this.theme.noMatch("  No matching commands")];
        const column = this.primaryColumn();
        const start = Math.max(
          0,
          Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), items.length - this.maxVisible),
        );
        const end = Math.min(start + this.maxVisible, items.length);
        const lines = [];
        for (let i = start; i < end; i++) lines.push(this.row(items[i], i === this.selectedIndex, width, column));
        if (start > 0 || end < items.length) {
          lines.push(
            this.theme.scrollInfo(truncateToWidth(`  (${this.selectedIndex + 1}/${items.length})`, width - 2, "")),
          );
        }
        return lines;
      }
      changed() {
        const item = this.filteredItems[this.selectedIndex];
        if (item) this.onSelectionChange?.(item);
      }
      handleInput(data) {
        const n = this.filteredItems.length;
        if (keybindings.matches(data, "tui.select.up")) {
          this.selectedIndex = this.selectedIndex === 0 ? n - 1 : this.selectedIndex - 1;
          this.changed();
        } else if (keybindings.matches(data, "tui.select.down")) {
          this.selectedIndex = this.selectedIndex === n - 1 ? 0 : this.selectedIndex + 1;
          this.changed();
        } else if (keybindings.matches(data, "tui.select.confirm")) {
          const item = this.filteredItems[this.selectedIndex];
          if (item) this.onSelect?.(item);
        } else if (keybindings.matches(data, "tui.select.cancel")) this.onCancel?.();
      }
    }

    const CURSOR_MARKER = "\x1b_kc:c\x07";
    const PASTE_START = "\x1b[200~",
      PASTE_END = "\x1b[201~";

    // One-line text input with the editor's keys: word moves, kills and yanks, undo, paste.
    class Input {
      constructor() {
        this.value = "";
        this.cursor = 0;
        this.focused = false;
        this.onSubmit = undefined;
        this.onEscape = undefined;
        this.paste = null;
        this.kills = [];
        this.undos = [];
        this.last = null;
      }
      getValue() {
        return this.value;
      }
      setValue(value) {
        this.value = String(value);
        this.cursor = Math.min(this.cursor, this.value.length);
      }
      snapshot() {
        this.undos.push({ value: this.value, cursor: this.cursor });
        if (this.undos.length > 200) this.undos.shift();
      }
      splice(from, to, text) {
        this.value = this.value.slice(0, from) + text + this.value.slice(to);
      }
      prevBoundary() {
        const gs = graphemes(this.value.slice(0, this.cursor));
        return this.cursor - (gs.length ? gs[gs.length - 1].length : 0);
      }
      nextBoundary() {
        const gs = graphemes(this.value.slice(this.cursor));
        return this.cursor + (gs.length ? gs[0].length : 0);
      }
      wordLeft() {
        const gs = graphemes(this.value.slice(0, this.cursor));
        let at = this.cursor;
        const pop = () => {
          at -= gs.pop().length;
        };
        while (gs.length && isWhitespace(gs[gs.length - 1])) pop();
        if (gs.length && isPunctuation(gs[gs.length - 1])) {
          while (gs.length && isPunctuation(gs[gs.length - 1])) pop();
        } else while (gs.length && !isWhitespace(gs[gs.length - 1]) && !isPunctuation(gs[gs.length - 1])) pop();
        return at;
      }
      wordRight() {
        const gs = graphemes(this.value.slice(this.cursor));
        let at = this.cursor,
          i = 0;
        const take = () => {
          at += gs[i++].length;
        };
        while (i < gs.length && isWhitespace(gs[i])) take();
        if (i < gs.length && isPunctuation(gs[i])) {
          while (i < gs.length && isPunctuation(gs[i])) take();
        } else while (i < gs.length && !isWhitespace(gs[i]) && !isPunctuation(gs[i])) take();
        return at;
      }
      kill(from, to, backward) {
        if (from === to) return;
        this.snapshot();
        const text = this.value.slice(from, to);
        if (this.last === "kill" && this.kills.length) {
          const prev = this.kills.pop();
          this.kills.push(backward ? text + prev : prev + text);
        } else this.kills.push(text);
        this.splice(from, to, "");
        this.cursor = from;
        this.last = "kill";
      }
      insert(text) {
        if (isWhitespace(text) || this.last !== "type") this.snapshot();
        this.last = "type";
        this.splice(this.cursor, this.cursor, text);
        this.cursor += text.length;
      }
      handleInput(data) {
        data = String(data);
        if (this.paste === null && data.includes(PASTE_START)) {
          this.paste = "";
          data = data.replace(PASTE_START, "");
        }
        if (this.paste !== null) {
          this.paste += data;
          const end = this.paste.indexOf(PASTE_END);
          if (end < 0) return;
          const text = this.paste
            .slice(0, end)
            .replace(/\r\n|\r|\n/g, "")
            .replace(/\t/g, "    ");
          const rest = this.paste.slice(end + PASTE_END.length);
          this.paste = null;
          this.last = null;
          this.snapshot();
          this.splice(this.cursor, this.cursor, text);
          this.cursor += text.length;
          if (rest) this.handleInput(rest);
          return;
        }
        const is = (action) => keybindings.matches(data, action);
        if (is("tui.select.cancel")) {
          this.onEscape?.();
          return;
        }
        if (is("tui.editor.undo")) {
          const s = this.undos.pop();
          if (s) {
            this.value = s.value;
            this.cursor = s.cursor;
            this.last = null;
          }
          return;
        }
        if (is("tui.input.submit") || data === "\n") {
          this.onSubmit?.(this.value);
          return;
        }
        if (is("tui.editor.deleteCharBackward")) {
          this.last = null;
          if (this.cursor > 0) {
            this.snapshot();
            const from = this.prevBoundary();
            this.splice(from, this.cursor, "");
            this.cursor = from;
          }
          return;
        }
        if (is("tui.editor.deleteCharForward")) {
          this.last = null;
          if (this.cursor < this.value.length) {
            this.snapshot();
            this.splice(this.cursor, this.nextBoundary(), "");
          }
          return;
        }
        if (is("tui.editor.deleteWordBackward")) {
          this.kill(this.wordLeft(), this.cursor, true);
          return;
        }
        if (is("tui.editor.deleteWordForward")) {
          this.kill(this.cursor, this.wordRight(), false);
          return;
        }
        if (is("tui.editor.deleteToLineStart")) {
          this.kill(0, this.cursor, true);
          return;
        }
        if (is("tui.editor.deleteToLineEnd")) {
          this.kill(this.cursor, this.value.length, false);
          return;
        }
        if (is("tui.editor.yank")) {
          const text = this.kills[this.kills.length - 1];
          if (text) {
            this.snapshot();
            this.splice(this.cursor, this.cursor, text);
            this.cursor += text.length;
            this.last = "yank";
          }
          return;
        }
        if (is("tui.editor.yankPop")) {
          if (this.last !== "yank" || this.kills.length < 2) return;
          this.snapshot();
          const prev = this.kills[this.kills.length - 1];
          this.splice(this.cursor - prev.length, this.cursor, "");
          this.cursor -= prev.length;
          this.kills.unshift(this.kills.pop());
          const text = this.kills[this.kills.length - 1];
          this.splice(this.cursor, this.cursor, text);
          this.cursor += text.length;
          this.last = "yank";
          return;
        }
        const move = (to) => {
          this.last = null;
          this.cursor = to;
        };
        if (is("tui.editor.cursorLeft")) return move(this.prevBoundary());
        if (is("tui.editor.cursorRight")) return move(this.nextBoundary());
        if (is("tui.editor.cursorLineStart")) return move(0);
        if (is("tui.editor.cursorLineEnd")) return move(this.value.length);
        if (is("tui.editor.cursorWordLeft")) return move(this.wordLeft());
        if (is("tui.editor.cursorWordRight")) return move(this.wordRight());
        const printable = decodeKittyPrintable(data);
        if (printable !== undefined) {
          this.insert(printable);
          return;
        }
        if (
          ![...data].some((ch) => {
            const c = ch.charCodeAt(0);
            return c < 32 || c === 0x7f || (c >= 0x80 && c <= 0x9f);
          })
        )
          this.insert(data);
      }
      invalidate() {}
      render(width) {
        const prompt = "> ";
        const room = width - prompt.length;
        if (room <= 0) return [prompt];
        let shown = this.value,
          cursor = this.cursor;
        const total = visibleWidth(this.value);
        if (total >= room) {
          const scroll = this.cursor === this.value.length ? room - 1 : room;
          const col = visibleWidth(this.value.slice(0, this.cursor));
          const half = Math.floor(scroll / 2);
          const start = col < half ? 0 : col > total - half ? Math.max(0, total - scroll) : Math.max(0, col - half);
          shown = sliceByColumn(this.value, start, scroll);
          cursor = sliceByColumn(this.value, start, Math.max(0, col - start)).length;
        }
        const at = graphemes(shown.slice(cursor))[0] ?? " ";
        const line =
          shown.slice(0, cursor) +
          (this.focused ? CURSOR_MARKER : "") +
          `\x1b[7m${at}\x1b[27m` +
          shown.slice(cursor + (at === " " && cursor >= shown.length ? 0 : at.length));
        return [prompt + padToWidth(line, room)];
      }
    }

    class SettingsList {
      constructor(items, maxVisible, theme, onChange, onCancel, options = {}) {
        this.items = items;
        this.filteredItems = items;
        this.maxVisible = maxVisible;
        this.theme = theme;
        this.onChange = onChange;
        this.onCancel = onCancel;
        this.selectedIndex = 0;
        this.searchEnabled = !!(options && options.enableSearch);
        this.searchInput = this.searchEnabled ? new Input() : undefined;
        this.submenu = null;
        this.submenuIndex = null;
      }
      updateValue(id, value) {
        const item = this.items.find((i) => i.id === id);
        if (item) item.currentValue = value;
      }
      invalidate() {
        this.submenu?.invalidate?.();
      }
      shown() {
        return this.searchEnabled ? this.filteredItems : this.items;
      }
      hint(lines, width) {
        lines.push(
          "",
          truncateToWidth(
            this.theme.hint(
              this.searchEnabled
                ? "  Type to search · Enter/Space to change · Esc to cancel"
                : "  Enter/Space to change · Esc to cancel",
            ),
            width,
          ),
        );
      }
      render(width) {
        if (this.submenu) return this.submenu.render(width);
        const lines = [];
        if (this.searchInput) lines.push(...this.searchInput.render(width), "");
        if (this.items.length === 0) {
          lines.push(this.theme.hint("  No settings available"));
          if (this.searchEnabled) this.hint(lines, width);
          return lines;
        }
        const items = this.shown();
        if (items.length === 0) {
          lines.push(truncateToWidth(this.theme.hint("  No matching settings"), width));
          this.hint(lines, width);
          return lines;
        }
        const start = Math.max(
          0,
          Math.min(this.selectedIndex - Math.floor(this.maxVisible / 2), items.length - this.maxVisible),
        );
        const end = Math.min(start + this.maxVisible, items.length);
        const labelWidth = Math.min(30, Math.max(...this.items.map((i) => visibleWidth(i.label))));
        for (let i = start; i < end; i++) {
          const item = items[i],
            selected = i === this.selectedIndex;
          const prefix = selected ? this.theme.cursor : "  ";
          const label = this.theme.label(
            item.label + " ".repeat(Math.max(0, labelWidth - visibleWidth(item.label))),
            selected,
          );
          const room = width - (visibleWidth(prefix) + labelWidth + 2) - 2;
          lines.push(
            truncateToWidth(
              prefix + label + "  " + this.theme.value(truncateToWidth(item.currentValue, room, ""), selected),
              width,
            ),
          );
        }
        if (start > 0 || end < items.length)
          lines.push(this.theme.hint(truncateToWidth(`  (${this.selectedIndex + 1}/${items.length})`, width - 2, "")));
        const current = items[this.selectedIndex];
        if (current && current.description) {
          lines.push("");
          for (const l of wrapTextWithAnsi(current.description, width - 4))
            lines.push(this.theme.description(`  ${l}`));
        }
        this.hint(lines, width);
        return lines;
      }
      handleInput(data) {
        if (this.submenu) {
          this.submenu.handleInput?.(data);
          return;
        }
        const items = this.shown();
        if (keybindings.matches(data, "tui.select.up")) {
          if (items.length) this.selectedIndex = this.selectedIndex === 0 ? items.length - 1 : this.selectedIndex - 1;
        } else if (keybindings.matches(data, "tui.select.down")) {
          if (items.length) this.selectedIndex = this.selectedIndex === items.length - 1 ? 0 : this.selectedIndex + 1;
        } else if (keybindings.matches(data, "tui.select.confirm") || data === " ")
          this.activate(items[this.selectedIndex]);
        else if (keybindings.matches(data, "tui.select.cancel")) this.onCancel();
        else if (this.searchInput) {
          const text = String(data).replace(/ /g, "");
          if (!text) return;
          this.searchInput.handleInput(text);
          this.filteredItems = fuzzyFilter(this.items, this.searchInput.getValue(), (i) => i.label);
          this.selectedIndex = 0;
        }
      }
      activate(item) {
        if (!item) return;
        if (item.submenu) {
          this.submenuIndex = this.selectedIndex;
          this.submenu = item.submenu(item.currentValue, (value) => {
            if (value !== undefined) {
              item.currentValue = value;
              this.onChange(item.id, value);
            }
            this.submenu = null;
            if (this.submenuIndex !== null) {
              this.selectedIndex = this.submenuIndex;
              this.submenuIndex = null;
            }
          });
        } else if (item.values && item.values.length > 0) {
          const next = item.values[(item.values.indexOf(item.currentValue) + 1) % item.values.length];
          item.currentValue = next;
          this.onChange(item.id, next);
        }
      }
    }

    const SPINNER = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
    class Loader extends Text {
      constructor(ui, spinnerColorFn, messageColorFn, message = "Loading...", indicator) {
        super("", 1, 0);
        this.ui = ui;
        this.spinnerColorFn = spinnerColorFn;
        this.messageColorFn = messageColorFn;
        this.message = message;
        this.timer = null;
        this.frame = 0;
        this.setIndicator(indicator);
      }
      render(width) {
        return ["", ...super.render(width)];
      }
      start() {
        this.draw();
        this.animate();
      }
      stop() {
        if (this.timer) {
          clearInterval(this.timer);
          this.timer = null;
        }
      }
      setMessage(message) {
        this.message = message;
        this.draw();
      }
      setIndicator(indicator) {
        this.verbatim = indicator !== undefined;
        this.frames = indicator && indicator.frames !== undefined ? [...indicator.frames] : [...SPINNER];
        this.intervalMs = indicator && indicator.intervalMs > 0 ? indicator.intervalMs : 80;
        this.frame = 0;
        this.start();
      }
      animate() {
        this.stop();
        if (this.frames.length <= 1) return;
        this.timer = setInterval(() => {
          this.frame = (this.frame + 1) % this.frames.length;
          this.draw();
        }, this.intervalMs);
      }
      draw() {
        const frame = this.frames[this.frame] ?? "";
        const shown = this.verbatim ? frame : this.spinnerColorFn(frame);
        this.setText(`${frame.length > 0 ? `${shown} ` : ""}${this.messageColorFn(this.message)}`);
        this.ui?.requestRender?.();
      }
    }
    class CancellableLoader extends Loader {
      constructor(...args) {
        super(...args);
        this.abortController = new AbortController();
        this.onAbort = undefined;
      }
      get signal() {
        return this.abortController.signal;
      }
      get aborted() {
        return this.abortController.signal.aborted;
      }
      handleInput(data) {
        if (keybindings.matches(data, "tui.select.cancel")) {
          this.abortController.abort();
          this.onAbort?.();
        }
      }
      dispose() {
        this.stop();
      }
    }

    // What a style function puts before its text: run it on a marker and keep the prefix.
    const MARK = "\u{E000}";
    const prefixOf = (fn) => {
      try {
        const s = String(fn(MARK));
        const at = s.indexOf(MARK);
        return at > 0 ? s.slice(0, at) : "";
      } catch {
        return "";
      }
    };
    function markdownStyles(theme, text) {
      const t = theme || {};
      const id = (x) => x;
      const f = (name) => (typeof t[name] === "function" ? t[name] : id);
      const styles = {
        heading: prefixOf((x) => f("heading")(f("bold")(x))),
        link: prefixOf((x) => f("link")(f("underline")(x))),
        quote: prefixOf((x) => f("quote")(f("italic")(x))),
      };
      for (const name of [
        "linkUrl",
        "code",
        "codeBlock",
        "codeBlockBorder",
        "quoteBorder",
        "hr",
        "listBullet",
        "bold",
        "italic",
        "strikethrough",
        "underline",
      ]) {
        if (typeof t[name] === "function") styles[name] = prefixOf(t[name]);
      }
      if (text) {
        let fn = typeof text.color === "function" ? text.color : id;
        const wrap = (inner, flag, name) => (flag && typeof t[name] === "function" ? (x) => t[name](inner(x)) : inner);
        fn = wrap(
          wrap(wrap(wrap(fn, text.bold, "bold"), text.italic, "italic"), text.strikethrough, "strikethrough"),
          text.underline,
          "underline",
        );
        styles.text = prefixOf(fn);
        if (typeof text.bgColor === "function") styles.background = prefixOf(text.bgColor);
      }
      return JSON.stringify(styles);
    }
    class Markdown {
      constructor(text = "", paddingX = 0, paddingY = 0, theme, defaultTextStyle) {
        this.text = text;
        this.paddingX = paddingX;
        this.paddingY = paddingY;
        this.theme = theme;
        this.defaultTextStyle = defaultTextStyle;
        this.cache = null;
        this.styles = null;
      }
      setText(text) {
        this.text = text;
        this.cache = null;
      }
      invalidate() {
        this.cache = null;
        this.styles = null;
      }
      render(width) {
        if (this.cache && this.cache.text === this.text && this.cache.width === width) return this.cache.lines;
        if (this.styles === null) this.styles = markdownStyles(this.theme, this.defaultTextStyle);
        const lines =
          !this.text || String(this.text).trim() === ""
            ? []
            : native
                .markdown(String(this.text), width, this.styles, this.paddingX, this.paddingY)
                .map((line) => padToWidth(line, width));
        this.cache = { text: this.text, width, lines };
        return lines;
      }
    }

    // The multi-line editor is our Rust editor (the prompt editor of the interactive mode),
    // held by handle; subclasses (`CustomEditor`, modal editors) wrap its input and lines.
    const editors =
      typeof FinalizationRegistry === "function"
        ? new FinalizationRegistry((id) => native.editor(id, "drop", ""))
        : null;
    class Editor {
      constructor(tui, theme, options = {}) {
        this.tui = tui;
        this.theme = theme || {};
        this.borderColor = this.theme.borderColor;
        this.editorId = native.editorNew();
        editors?.register(this, this.editorId);
        const padding = options && Number.isFinite(options.paddingX) ? Math.max(0, Math.floor(options.paddingX)) : 0;
        this.paddingX = padding;
        this.focused = false;
        this.disableSubmit = false;
        this.onSubmit = undefined;
        this.onChange = undefined;
        this.autocompleteProvider = undefined;
      }
      editorCall(op, arg = "") {
        return JSON.parse(native.editor(this.editorId, op, String(arg)));
      }
      getText() {
        return this.editorCall("text");
      }
      getExpandedText() {
        return this.editorCall("expandedText");
      }
      getLines() {
        return this.editorCall("lines");
      }
      getCursor() {
        return this.editorCall("cursor");
      }
      isEditorEmpty() {
        return this.getText() === "";
      }
      changed(before) {
        const after = this.getText();
        if (after !== before) this.onChange?.(after);
      }
      setText(text) {
        const before = this.getText();
        this.editorCall("setText", text);
        this.changed(before);
      }
      insertTextAtCursor(text) {
        const before = this.getText();
        this.editorCall("insert", text);
        this.changed(before);
      }
      addToHistory(text) {
        this.editorCall("history", text);
      }
      getPaddingX() {
        return this.paddingX;
      }
      setPaddingX(padding) {
        this.paddingX = Number.isFinite(padding) ? Math.max(0, Math.floor(padding)) : 0;
        this.tui?.requestRender?.();
      }
      setAutocompleteProvider(provider) {
        this.autocompleteProvider = provider;
      }
      isShowingAutocomplete() {
        return this.editorCall("showingCompletions");
      }
      invalidate() {}
      handleInput(data) {
        const before = this.getText();
        this.editorCall("submit", !this.disableSubmit);
        const result = this.editorCall("input", data);
        if (result && typeof result.submitted === "string") this.onSubmit?.(result.submitted);
        this.changed(before);
      }
      render(width) {
        this.editorCall("border", prefixOf(typeof this.borderColor === "function" ? this.borderColor : (x) => x));
        this.editorCall("paddingX", this.paddingX);
        this.editorCall("focused", !!this.focused);
        const rows = this.tui && this.tui.terminal && this.tui.terminal.rows;
        if (rows) this.editorCall("rows", rows);
        return this.editorCall("render", width);
      }
    }

    // Images draw only in terminals with an image protocol; elsewhere (and for now
    // everywhere) the reference's fallback text stands in.
    function imageFallback(mimeType, dimensions, filename) {
      const parts = [];
      if (filename) parts.push(filename);
      parts.push(`[${mimeType}]`);
      if (dimensions) parts.push(`${dimensions.widthPx}x${dimensions.heightPx}`);
      return `[Image: ${parts.join(" ")}]`;
    }
    class Image {
      constructor(base64Data, mimeType, theme, options = {}, dimensions) {
        this.base64Data = base64Data;
        this.mimeType = mimeType;
        this.theme = theme;
        this.options = options || {};
        this.dimensions = dimensions;
      }
      getImageId() {
        return this.options.imageId;
      }
      invalidate() {}
      render(width) {
        const text = imageFallback(this.mimeType, this.dimensions, this.options.filename);
        const fallback =
          this.theme && typeof this.theme.fallbackColor === "function" ? this.theme.fallbackColor(text) : text;
        return [truncateToWidth(fallback, Math.max(1, width))];
      }
    }

    // The terminal UI object components receive as `tui`; the interactive mode gives the
    // real one, this stands in where nothing draws.
    class TUI extends Container {
      constructor() {
        super();
        this.terminal = { columns: 80, rows: 24 };
      }
      requestRender() {}
      setFocus() {}
      start() {}
      stop() {}
      showOverlay() {
        return { hide() {}, setHidden() {}, isHidden: () => true, focus() {}, unfocus() {}, isFocused: () => false };
      }
      hasOverlay() {
        return false;
      }
    }

    return Object.assign(
      missing([
        "ProcessTerminal",
        "StdinBuffer",
        "CombinedAutocompleteProvider",
        "KeybindingsManager",
        "renderImage",
        "encodeKitty",
        "encodeITerm2",
        "detectCapabilities",
        "getCapabilities",
      ]),
      {
        Text,
        TruncatedText,
        Box,
        Container,
        Spacer,
        SelectList,
        SettingsList,
        Input,
        Editor,
        Loader,
        CancellableLoader,
        Markdown,
        Image,
        TUI,
        visibleWidth,
        truncateToWidth,
        wrapTextWithAnsi,
        matchesKey,
        parseKey,
        isKeyRelease,
        isKeyRepeat,
        decodeKittyPrintable,
        Key,
        getKeybindings,
        setKeybindings: () => {},
        TUI_KEYBINDINGS: {},
        setKittyProtocolActive: () => {},
        isKittyProtocolActive: () => false,
        fuzzyMatch,
        fuzzyFilter,
        isFocusable: (c) => c !== null && typeof c === "object" && "focused" in c,
        CURSOR_MARKER,
        hyperlink: (text, url) => `\x1b]8;;${url}\x1b\\${text}\x1b]8;;\x1b\\`,
        imageFallback,
      },
    );
  });
})(globalThis);
