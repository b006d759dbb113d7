//! A task's output, kept in bounded memory however much it prints: the
//! first [`HEAD_BYTES`] and the last [`TAIL_BYTES`] (a ring), with the
//! count of everything in between; read from any offset of the whole
//! stream, the dropped middle said as a gap.

/// Kept from the start of the output.
pub const HEAD_BYTES: usize = 256 * 1024;
/// Kept from the end of the output: with the head, 1 MiB per task.
pub const TAIL_BYTES: usize = 768 * 1024;
/// The most one read returns; a longer stretch keeps its start and end.
pub const READ_BYTES: usize = 24 * 1024;
/// Of a cut read, this much comes from its start (the rest from its end).
const READ_HEAD_BYTES: usize = 4 * 1024;

#[derive(Debug, Default)]
pub struct Output {
    head: Vec<u8>,
    /// A ring once full: the oldest byte at `tail_pos`.
    tail: Vec<u8>,
    tail_pos: usize,
    total: u64,
}

/// One read: the text and how many bytes of the stretch it leaves out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stretch {
    pub text: String,
    pub to: u64,
    pub skipped: u64,
}

enum Piece {
    Bytes(Vec<u8>),
    Gap(u64),
}

impl Output {
    pub fn push(&mut self, mut chunk: &[u8]) {
        self.total += chunk.len() as u64;
        if self.head.len() < HEAD_BYTES {
            let take = chunk.len().min(HEAD_BYTES - self.head.len());
            self.head.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        if chunk.len() >= TAIL_BYTES {
            self.tail.clear();
            self.tail.extend_from_slice(&chunk[chunk.len() - TAIL_BYTES..]);
            self.tail_pos = 0;
            return;
        }
        if self.tail.len() < TAIL_BYTES {
            let take = chunk.len().min(TAIL_BYTES - self.tail.len());
            self.tail.extend_from_slice(&chunk[..take]);
            chunk = &chunk[take..];
        }
        while !chunk.is_empty() {
            let take = chunk.len().min(TAIL_BYTES - self.tail_pos);
            self.tail[self.tail_pos..self.tail_pos + take].copy_from_slice(&chunk[..take]);
            self.tail_pos = (self.tail_pos + take) % TAIL_BYTES;
            chunk = &chunk[take..];
        }
    }

    /// The tail in order, from byte `skip` of it.
    fn tail_from(&self, skip: usize) -> Vec<u8> {
        let (newer, older) = self.tail.split_at(self.tail_pos);
        let mut ordered = Vec::with_capacity(self.tail.len().saturating_sub(skip));
        if skip < older.len() {
            ordered.extend_from_slice(&older[skip..]);
            ordered.extend_from_slice(newer);
        } else {
            ordered.extend_from_slice(&newer[(skip - older.len()).min(newer.len())..]);
        }
        ordered
    }

    /// Bytes printed in all.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// Everything from byte `from` on, bounded to [`READ_BYTES`] (the start
    /// and the end of a longer stretch), as text.
    pub fn read_from(&self, from: u64) -> Stretch {
        let from = from.min(self.total);
        let mut pieces = self.pieces(from);
        let length: usize = pieces.iter().map(|p| if let Piece::Bytes(b) = p { b.len() } else { 0 }).sum();
        if length > READ_BYTES {
            pieces = cut(pieces, length);
        }
        let skipped = pieces.iter().map(|p| if let Piece::Gap(n) = p { *n } else { 0 }).sum();
        let mut text = String::new();
        for piece in pieces {
            match piece {
                Piece::Bytes(bytes) => text.push_str(&printable(&bytes)),
                Piece::Gap(n) => text.push_str(&format!("\n[... {n} bytes left out ...]\n")),
            }
        }
        Stretch { text, to: self.total, skipped }
    }

    /// The last `n` lines with text in them.
    pub fn last_lines(&self, n: usize) -> Vec<String> {
        let from = self.total.saturating_sub(4096);
        let mut bytes = Vec::new();
        for piece in self.pieces(from) {
            if let Piece::Bytes(b) = piece {
                bytes.extend(b);
            }
        }
        let text = printable(&bytes);
        let lines: Vec<String> = text.lines().filter(|l| !l.trim().is_empty()).map(|l| l.chars().take(200).collect()).collect();
        lines[lines.len().saturating_sub(n)..].to_vec()
    }

    fn pieces(&self, from: u64) -> Vec<Piece> {
        let mut pieces = Vec::new();
        let head_len = self.head.len() as u64;
        if from < head_len {
            pieces.push(Piece::Bytes(self.head[from as usize..].to_vec()));
        }
        let tail_start = self.total - self.tail.len() as u64;
        let gap_start = from.max(head_len);
        if tail_start > gap_start {
            pieces.push(Piece::Gap(tail_start - gap_start));
        }
        let skip = from.max(tail_start).saturating_sub(tail_start);
        let skip = usize::try_from(skip).unwrap_or(usize::MAX).min(self.tail.len());
        if skip < self.tail.len() {
            pieces.push(Piece::Bytes(self.tail_from(skip)));
        }
        pieces
    }
}

/// Keep the first [`READ_HEAD_BYTES`] and the last of `pieces` up to
/// [`READ_BYTES`], the rest a gap.
/// A read that starts inside the dropped middle still starts with its gap.
fn cut(pieces: Vec<Piece>, length: usize) -> Vec<Piece> {
    let mut all = Vec::with_capacity(length);
    let mut leading_gap = 0;
    let mut gap_total = 0;
    for piece in pieces {
        match piece {
            Piece::Bytes(b) => all.extend(b),
            Piece::Gap(n) if all.is_empty() => leading_gap += n,
            Piece::Gap(n) => gap_total += n,
        }
    }
    let tail = READ_BYTES - READ_HEAD_BYTES;
    let left_out = (all.len() - READ_HEAD_BYTES - tail) as u64 + gap_total;
    let mut cut = Vec::with_capacity(4);
    if leading_gap > 0 {
        cut.push(Piece::Gap(leading_gap));
    }
    cut.extend([Piece::Bytes(all[..READ_HEAD_BYTES].to_vec()), Piece::Gap(left_out), Piece::Bytes(all[all.len() - tail..].to_vec())]);
    cut
}

/// Output as text a model and a terminal can show: invalid UTF-8 and
/// control characters become U+FFFD, terminal escape sequences (colours,
/// cursor moves) are dropped, a carriage return ends a line.
pub fn printable(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\u{1b}' => {
                // CSI: ESC [ parameters final byte (0x40..=0x7e); other
                // escapes: ESC and one more character.
                if chars.peek() == Some(&'[') {
                    chars.next();
                    for next in chars.by_ref() {
                        if ('\u{40}'..='\u{7e}').contains(&next) {
                            break;
                        }
                    }
                } else {
                    chars.next();
                }
            }
            '\r' => {
                if chars.peek() != Some(&'\n') {
                    out.push('\n');
                }
            }
            '\n' | '\t' => out.push(c),
            c if c.is_control() => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn reads_continue_where_the_last_one_ended() {
        let mut out = Output::default();
        out.push(b"one\ntwo\n");
        let first = out.read_from(0);
        assert_eq!((first.text.as_str(), first.to, first.skipped), ("one\ntwo\n", 8, 0));
        out.push(b"three\n");
        let second = out.read_from(first.to);
        assert_eq!((second.text.as_str(), second.to), ("three\n", 14));
        assert_eq!(out.read_from(second.to).text, "");
    }

    #[test]
    fn a_gigabyte_keeps_its_start_and_end_in_bounded_memory() {
        let mut out = Output::default();
        let chunk = vec![b'x'; 64 * 1024];
        out.push(b"START\n");
        for _ in 0..(1 << 14) {
            out.push(&chunk);
        }
        out.push(b"\nEND\n");
        assert_eq!(out.total(), 6 + (1 << 30) + 5);
        assert!(out.head.len() + out.tail.len() <= HEAD_BYTES + TAIL_BYTES);
        let read = out.read_from(0);
        assert!(read.text.starts_with("START\nxxx") && read.text.ends_with("xxx\nEND\n"), "{}", &read.text[..20]);
        assert!(read.text.len() < READ_BYTES + 100);
        assert_eq!(read.skipped, out.total() - READ_BYTES as u64);
        assert_eq!(out.last_lines(1), vec!["END".to_string()]);
        // A read from inside the dropped middle says so.
        let middle = out.read_from(1 << 29);
        assert!(middle.text.starts_with("\n[... "), "{}", &middle.text[..40]);
    }

    #[test]
    fn binary_and_terminal_output_read_as_plain_text() {
        expect_test::expect![[r#""\u{1b}" "a�b�c\nred\nline1\nline2\ttab""#]]
            .assert_eq(&format!("{:?} {:?}", "\u{1b}", printable(b"a\x00b\xffc\r\n\x1b[31mred\x1b[0m\nline1\rline2\ttab")));
    }
}
