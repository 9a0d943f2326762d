//! The prompt editor of `agent tui`: multi-line text with a cursor, and
//! the prompts already sent as a history (Up on the first line, Down on
//! the last). Pure data: keys come in through [`update`](super::update),
//! the view draws [`Editor::lines`] with the cursor at [`Editor::cursor`].

/// The text being written, its cursor and the history of sent prompts.
#[derive(Debug, Clone)]
pub struct Editor {
    /// The lines of the text (never empty: one empty line at least).
    lines: Vec<String>,
    /// The cursor's line.
    row: usize,
    /// The cursor's column, in characters.
    col: usize,
    /// The prompts sent, oldest first.
    history: Vec<String>,
    /// Which history entry is shown (`None`: the draft).
    recalled: Option<usize>,
    /// The text written before the history was browsed.
    draft: String,
}

impl Default for Editor {
    fn default() -> Self {
        Editor {
            lines: vec![String::new()],
            row: 0,
            col: 0,
            history: Vec::new(),
            recalled: None,
            draft: String::new(),
        }
    }
}

/// The byte offset of character `col` in `line` (its end when past it).
fn byte_at(line: &str, col: usize) -> usize {
    line.char_indices()
        .nth(col)
        .map(|(at, _)| at)
        .unwrap_or(line.len())
}

impl Editor {
    /// The text's lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// The cursor as (line, column in characters).
    pub fn cursor(&self) -> (usize, usize) {
        (self.row, self.col)
    }

    /// The whole text, lines joined with newlines.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// Whether nothing is written.
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// Replaces the text, the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_string).collect();
        if self.lines.is_empty() {
            self.lines.push(String::new());
        }
        self.row = self.lines.len() - 1;
        self.col = self.lines[self.row].chars().count();
    }

    /// Empties the text (the history stays).
    pub fn clear(&mut self) {
        self.set_text("");
        self.recalled = None;
    }

    /// Takes the text out to send it: it joins the history (unless it
    /// repeats the last entry) and the editor is emptied.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        self.clear();
        text
    }

    /// Inserts `text` at the cursor (a paste may hold newlines; carriage
    /// returns are dropped).
    pub fn insert(&mut self, text: &str) {
        for c in text.chars() {
            match c {
                '\n' => self.newline(),
                '\r' => {}
                c => self.insert_char(c),
            }
        }
    }

    /// Inserts one character at the cursor.
    pub fn insert_char(&mut self, c: char) {
        let line = &mut self.lines[self.row];
        let at = byte_at(line, self.col);
        line.insert(at, c);
        self.col += 1;
    }

    /// Splits the line at the cursor.
    pub fn newline(&mut self) {
        let line = &mut self.lines[self.row];
        let at = byte_at(line, self.col);
        let rest = line.split_off(at);
        self.row += 1;
        self.lines.insert(self.row, rest);
        self.col = 0;
    }

    /// Deletes the character before the cursor (joining lines at a line's
    /// start).
    pub fn backspace(&mut self) {
        if self.col > 0 {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
            self.lines[self.row].push_str(&line);
        }
    }

    /// Deletes the character under the cursor (joining the next line at a
    /// line's end).
    pub fn delete(&mut self) {
        let len = self.lines[self.row].chars().count();
        if self.col < len {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    /// Moves the cursor one character left (to the previous line's end).
    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
        }
    }

    /// Moves the cursor one character right (to the next line's start).
    pub fn right(&mut self) {
        if self.col < self.lines[self.row].chars().count() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    /// Moves to the line's start.
    pub fn home(&mut self) {
        self.col = 0;
    }

    /// Moves to the line's end.
    pub fn end(&mut self) {
        self.col = self.lines[self.row].chars().count();
    }

    /// Up: the line above, or on the first line the previous prompt sent.
    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        let next = match self.recalled {
            None if self.history.is_empty() => return,
            None => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(0) => return,
            Some(at) => at - 1,
        };
        self.recalled = Some(next);
        let text = self.history[next].clone();
        self.set_text(&text);
    }

    /// Down: the line below, or on the last line the next prompt in the
    /// history (after the newest, the draft).
    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        let Some(at) = self.recalled else { return };
        if at + 1 < self.history.len() {
            self.recalled = Some(at + 1);
            let text = self.history[at + 1].clone();
            self.set_text(&text);
        } else {
            self.recalled = None;
            let draft = std::mem::take(&mut self.draft);
            self.set_text(&draft);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Editor;

    #[test]
    fn lines_split_join_and_the_cursor_follows() {
        let mut editor = Editor::default();
        editor.insert("fix the\nbüg");
        assert_eq!(editor.lines(), ["fix the", "büg"]);
        assert_eq!(editor.cursor(), (1, 3));
        editor.home();
        editor.backspace();
        assert_eq!(editor.text(), "fix thebüg");
        assert_eq!(editor.cursor(), (0, 7));
        editor.newline();
        editor.left();
        editor.delete();
        assert_eq!(editor.text(), "fix thebüg");
    }

    #[test]
    fn history_recalls_sent_prompts_and_gives_the_draft_back() {
        let mut editor = Editor::default();
        editor.insert("first");
        assert_eq!(editor.take(), "first");
        editor.insert("second\nline");
        editor.take();
        editor.insert("draft");
        editor.up();
        assert_eq!(editor.text(), "second\nline");
        // Up on the recalled text's last line moves within it first.
        editor.up();
        editor.up();
        assert_eq!(editor.text(), "first");
        editor.down();
        assert_eq!(editor.text(), "second\nline");
        editor.down();
        assert_eq!(editor.text(), "draft");
    }
}
