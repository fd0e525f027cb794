//! A C/C++ lexer for what the engine reads of CUDA sources: the kernel signatures
//! ([`crate::embed::signature`]) and the `asm()` statements ([`crate::inline_ptx`]).
//!
//! It is a lexer, not a parser (no C++ parser crate reads CUDA's dialect, and neither reader
//! needs more): it drops comments and line continuations, keeps string and character literals
//! whole (so an `asm(` or `__global__` inside one is never seen as code), marks the tokens of
//! preprocessor lines, and gives every token its line and column. One pass over the bytes, so
//! its cost is linear in the input.

/// What a token is. Punctuation is one byte a token (`::` is two `:`), which is all the
/// readers need and keeps `asm("..." :: "r"(x))` readable as two section separators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `[A-Za-z_][A-Za-z0-9_]*`: keywords included.
    Ident,
    /// A number (`42`, `1.5f`, `0x1F`); its text is not checked.
    Number,
    /// A string literal, quotes included; [`string_value`] decodes it.
    Str,
    /// A character literal, quotes included.
    Char,
    /// Any other byte.
    Punct(u8),
}

/// One token: its kind, its text in the source, and where it starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    /// 1-based line and column (columns count characters, not bytes).
    pub line: u32,
    pub col: u32,
    /// Part of a preprocessor line (`#` included), continuations included.
    pub directive: bool,
}

impl<'a> Token<'a> {
    pub fn is_punct(&self, c: u8) -> bool {
        self.kind == Kind::Punct(c)
    }

    /// The raw text between the quotes of a string or character literal (escapes kept).
    pub fn literal_body(&self) -> &'a str {
        let t = self.text;
        let t = t.get(1..).unwrap_or_default();
        let q = self.text.as_bytes()[0];
        // An unterminated literal (the compiler will say so) has no closing quote.
        if !t.is_empty() && t.as_bytes()[t.len() - 1] == q && !ends_escaped(&t[..t.len() - 1]) {
            &t[..t.len() - 1]
        } else {
            t
        }
    }
}

fn ends_escaped(s: &str) -> bool {
    (s.len() - s.trim_end_matches('\\').len()) % 2 == 1
}

/// A position in the source that counts lines and columns as it moves.
#[derive(Clone, Copy)]
struct Cursor<'a> {
    src: &'a [u8],
    i: usize,
    line: u32,
    col: u32,
}

impl Cursor<'_> {
    fn peek(&self) -> Option<u8> {
        self.src.get(self.i).copied()
    }

    fn peek_at(&self, n: usize) -> Option<u8> {
        self.src.get(self.i + n).copied()
    }

    fn bump(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        if c == b'\n' {
            self.line += 1;
            self.col = 1;
        } else if c & 0xC0 != 0x80 {
            // Not a UTF-8 continuation byte: a new character.
            self.col += 1;
        }
        Some(c)
    }

    /// A `\` that ends the line (LF or CRLF): the line goes on after it.
    fn at_continuation(&self) -> bool {
        self.peek() == Some(b'\\') && matches!((self.peek_at(1), self.peek_at(2)), (Some(b'\n'), _) | (Some(b'\r'), Some(b'\n')))
    }
}

/// Splits C/C++ source into tokens.
pub fn tokens(src: &str) -> Vec<Token<'_>> {
    let mut c = Cursor { src: src.as_bytes(), i: 0, line: 1, col: 1 };
    let mut out = Vec::new();
    let mut line_start = true;
    let mut directive = false;
    while let Some(b) = c.peek() {
        match b {
            b'\n' => {
                c.bump();
                line_start = true;
                directive = false;
                continue;
            }
            b'\\' if c.at_continuation() => {
                // Translation phase 2: the next line joins this one (a directive goes on).
                while c.bump() != Some(b'\n') {}
                continue;
            }
            b if b.is_ascii_whitespace() => {
                c.bump();
                continue;
            }
            b'/' if c.peek_at(1) == Some(b'/') => {
                // To the end of the line; a `\` at its end continues the comment.
                while let Some(b) = c.peek() {
                    if b == b'\n' {
                        break;
                    }
                    if c.at_continuation() {
                        while c.bump() != Some(b'\n') {}
                        continue;
                    }
                    c.bump();
                }
                continue;
            }
            b'/' if c.peek_at(1) == Some(b'*') => {
                // A block comment is one space, even across lines: a directive goes on after it.
                c.bump();
                c.bump();
                while c.peek().is_some() && !(c.peek() == Some(b'*') && c.peek_at(1) == Some(b'/')) {
                    c.bump();
                }
                c.bump();
                c.bump();
                continue;
            }
            _ => {}
        }
        let start = c;
        let kind = match b {
            b'"' | b'\'' => {
                c.bump();
                while let Some(x) = c.peek() {
                    if x == b'\n' {
                        break; // unterminated: the compiler will say so
                    }
                    c.bump();
                    if x == b'\\' {
                        if matches!((c.peek(), c.peek_at(1)), (Some(b'\n'), _) | (Some(b'\r'), Some(b'\n'))) {
                            // `\` + newline inside a literal joins the lines too.
                            while c.bump() != Some(b'\n') {}
                        } else {
                            c.bump();
                        }
                    } else if x == b {
                        break;
                    }
                }
                if b == b'"' {
                    Kind::Str
                } else {
                    Kind::Char
                }
            }
            b if b.is_ascii_alphabetic() || b == b'_' => {
                while c.peek().is_some_and(|x| x.is_ascii_alphanumeric() || x == b'_') {
                    c.bump();
                }
                Kind::Ident
            }
            b if b.is_ascii_digit() => {
                while c.peek().is_some_and(|x| x.is_ascii_alphanumeric() || x == b'.' || x == b'_') {
                    c.bump();
                }
                Kind::Number
            }
            b => {
                c.bump();
                if b == b'#' && line_start {
                    directive = true;
                }
                Kind::Punct(b)
            }
        };
        // Token boundaries fall on ASCII bytes or at the end, so the slice is valid UTF-8, except
        // for a stray non-ASCII byte (a `Punct` of its own), whose text is then empty.
        let text = src.get(start.i..c.i).unwrap_or_default();
        out.push(Token { kind, text, line: start.line, col: start.col, directive });
        line_start = false;
    }
    out
}

/// The value of a string literal token (escapes decoded), and for each byte of the value the
/// line and column it was written at, so a diagnostic can point into the literal.
pub fn string_value(tok: &Token<'_>) -> (String, Vec<(u32, u32)>) {
    let mut c = Cursor { src: tok.text.as_bytes(), i: 0, line: tok.line, col: tok.col };
    let mut value = Vec::new();
    let mut pos = Vec::new();
    c.bump(); // opening quote
    while let Some(x) = c.peek() {
        let at = (c.line, c.col);
        match x {
            b'"' => break,
            b'\\' if c.at_continuation() => while c.bump() != Some(b'\n') {},
            b'\\' => {
                c.bump();
                let e = c.bump().unwrap_or(b'\\');
                value.push(match e {
                    b'n' => b'\n',
                    b't' => b'\t',
                    b'r' => b'\r',
                    b'0' => 0,
                    other => other,
                });
                pos.push(at);
            }
            _ => {
                c.bump();
                value.push(x);
                pos.push(at);
            }
        }
    }
    (String::from_utf8_lossy(&value).into_owned(), pos)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(Kind, &str, u32, u32, bool)> {
        tokens(src).into_iter().map(|t| (t.kind, t.text, t.line, t.col, t.directive)).collect()
    }

    #[test]
    fn comments_literals_and_positions() {
        let t = kinds("int /* a\n b */ x = 'a'; // asm(\"x\")\n  f(\"a\\\"b\", u8\"ü\");");
        assert_eq!(
            t,
            vec![
                (Kind::Ident, "int", 1, 1, false),
                (Kind::Ident, "x", 2, 7, false),
                (Kind::Punct(b'='), "=", 2, 9, false),
                (Kind::Char, "'a'", 2, 11, false),
                (Kind::Punct(b';'), ";", 2, 14, false),
                (Kind::Ident, "f", 3, 3, false),
                (Kind::Punct(b'('), "(", 3, 4, false),
                (Kind::Str, "\"a\\\"b\"", 3, 5, false),
                (Kind::Punct(b','), ",", 3, 11, false),
                (Kind::Ident, "u8", 3, 13, false),
                (Kind::Str, "\"ü\"", 3, 15, false),
                (Kind::Punct(b')'), ")", 3, 18, false),
                (Kind::Punct(b';'), ";", 3, 19, false),
            ]
        );
    }

    #[test]
    fn preprocessor_lines_with_continuations_and_comments() {
        let src = "#define K(x) \\\n  __global__ void x()\n /* c */ # include <a.h>\nint a; # not a directive\n#if 0 /* one\n two */ x\ny";
        let directive: Vec<(&str, bool)> = tokens(src).iter().map(|t| (t.text, t.directive)).collect();
        let expect = [
            ("#", true),
            ("define", true),
            ("K", true),
            ("(", true),
            ("x", true),
            (")", true),
            ("__global__", true),
            ("void", true),
            ("x", true),
            ("(", true),
            (")", true),
            ("#", true),
            ("include", true),
            ("<", true),
            ("a", true),
            (".", true),
            ("h", true),
            (">", true),
            ("int", false),
            ("a", false),
            (";", false),
            ("#", false),
            ("not", false),
            ("a", false),
            ("directive", false),
            ("#", true),
            ("if", true),
            ("0", true),
            ("x", true),
            ("y", false),
        ];
        assert_eq!(directive, expect);
        assert_eq!(tokens(src).last().unwrap().line, 7);
    }

    #[test]
    fn string_values_point_at_each_byte() {
        let t = tokens("  asm(\"a\\tb\" \"%0\");");
        let (v, pos) = string_value(&t[2]);
        assert_eq!(v, "a\tb");
        assert_eq!(pos, vec![(1, 8), (1, 9), (1, 11)]);
        let (v, pos) = string_value(&t[3]);
        assert_eq!((v.as_str(), pos[1]), ("%0", (1, 16)));
        assert_eq!(t[2].literal_body(), "a\\tb");
        // Unterminated: up to the end of the line.
        let t = tokens("\"abc\nx");
        assert_eq!((t[0].text, t[0].literal_body(), t[1].line), ("\"abc", "abc", 2));
    }

    /// Linear in the input: a megabyte of tokens, comments and literals in well under a second
    /// (a quadratic step would take minutes here).
    #[test]
    fn large_input() {
        let src = "extern \"C\" __global__ void f(int *x) /* c */ { asm(\"mov.u32 %0, 1;\" : \"=r\"(x)); } // k\n".repeat(12_000);
        let t = tokens(&src);
        assert_eq!(t.len(), 12_000 * 22);
        assert_eq!(t.last().unwrap().line, 12_000);
    }
}
