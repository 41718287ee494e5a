// `@knightcode/tui`'s keyed widgets: `SelectList`, the one-line `Input` (with the editor's
// keys: word moves, kills and yanks, undo, paste) and `SettingsList`. `tui.js` builds the
// package when it is first imported and calls `internal.tuiWidgets` with its measuring and
// key helpers, so this file only defines that function (it is evaluated before `tui.js`).
(function (g) {
  "use strict";
  const internal = g.__kcInternal;
  internal.tuiWidgets = function ({
    visibleWidth,
    truncateToWidth,
    wrapTextWithAnsi,
    padToWidth,
    sliceByColumn,
    graphemes,
    isWhitespace,
    isPunctuation,
    decodeKittyPrintable,
    keybindings,
    fuzzyFilter,
  }) {
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

    return { SelectList, Input, SettingsList, CURSOR_MARKER };
  };
})(globalThis);
