//! "Did you mean": the known name nearest to a misspelt one, as clap does for flags.

/// The candidate closest to `name` by edit distance, if it is close enough to be a typo.
pub fn nearest<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (name.chars().count() / 3).max(1);
    candidates
        .into_iter()
        .map(|c| (distance(name, c), c))
        .filter(|(d, _)| *d <= limit)
        .min()
        .map(|(_, c)| c)
}

/// Levenshtein distance over chars.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(above + 1);
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_22_a_typo_finds_its_name_and_nothing_else_does() {
        let keys = [
            "create-topics",
            "commit-interval",
            "timeout",
            "linger.ms",
            "acks",
        ];
        assert_eq!(nearest("create-topic", keys), Some("create-topics"));
        assert_eq!(nearest("create_topics", keys), Some("create-topics"));
        assert_eq!(nearest("lingr.ms", keys), Some("linger.ms"));
        assert_eq!(nearest("timeuot", keys), Some("timeout"));
        assert_eq!(nearest("replication", keys), None);
        assert_eq!(nearest("x", keys), None);
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
