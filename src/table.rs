//! The aligned tables `plan`, `groups` and `verify` print: columns two spaces apart, padded
//! to the display width of their widest cell (a topic name may be any Unicode), each line
//! trimmed at its end.

use unicode_width::UnicodeWidthStr;

/// `n` and its noun, singular for one: `1 partition`, `2 partitions` (nouns with a plain
/// plural `s`), the number as [`number`] writes it.
pub fn count(n: impl Into<u64>, noun: &str) -> String {
    let n = n.into();
    format!("{} {noun}{}", number(n), if n == 1 { "" } else { "s" })
}

/// 1234567 → "1,234,567": one way to write a count, on the progress line and in the summary
/// (issue 35: the one said "2,000 records", the other "copied 2000 records").
pub fn number(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The rows (the first is usually the header) as aligned lines. Columns whose index is in
/// `right` are right-aligned (numbers); the others left-aligned.
pub fn aligned<R, S>(rows: &[R], right: &[usize]) -> String
where
    R: AsRef<[S]>,
    S: AsRef<str>,
{
    let mut widths: Vec<usize> = Vec::new();
    for row in rows {
        for (i, cell) in row.as_ref().iter().enumerate() {
            let w = cell.as_ref().width();
            match widths.get_mut(i) {
                Some(max) => *max = (*max).max(w),
                None => widths.push(w),
            }
        }
    }
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (i, (cell, w)) in row.as_ref().iter().zip(&widths).enumerate() {
            let cell = cell.as_ref();
            let pad = " ".repeat(w.saturating_sub(cell.width()));
            if i > 0 {
                line.push_str("  ");
            }
            if right.contains(&i) {
                line.push_str(&pad);
                line.push_str(cell);
            } else {
                line.push_str(cell);
                line.push_str(&pad);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_35_counts_are_written_as_the_progress_line_writes_them() {
        assert_eq!(count(1u64, "record"), "1 record");
        assert_eq!(count(2000u64, "record"), "2,000 records");
        assert_eq!(number(1_234_567), "1,234,567");
    }

    #[test]
    fn columns_line_up_left_and_right() {
        let rows = [["a", "bb", "1"], ["ccc", "d", "100"]];
        assert_eq!(aligned(&rows, &[2]), "a    bb    1\nccc  d   100\n");
    }

    #[test]
    fn issue_21_non_ascii_cells_pad_to_their_display_width() {
        // 'é' is 2 bytes and one column, '注文' 6 bytes and four columns: counting bytes
        // (as the groups table did) or chars pads these lines differently.
        let rows = [
            vec!["TOPIC", "STATUS"],
            vec!["commandes-été", "translated"],
            vec!["注文", "kept"],
            vec!["orders", "refused"],
        ];
        let t = aligned(&rows, &[]);
        for (line, row) in t.lines().zip(&rows) {
            let at = line.rfind(row[1]).unwrap_or_default();
            assert_eq!(line[..at].width(), 15, "{t}");
        }
        assert_eq!(
            t.lines().nth(2),
            Some(format!("注文{}kept", " ".repeat(11)).as_str())
        );
    }
}
