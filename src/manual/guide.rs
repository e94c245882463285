//! docs/guide.md's generated blocks: the metric table, the config and JSON references, the
//! cut-over recipe. Each sits between two markers and is rewritten by `kreplicate generate .`;
//! a test fails when the committed guide differs from what the code generates.

use super::texts;
use crate::metrics::catalogue::CATALOGUE;

/// The operators' guide, relative to the repository root.
pub const GUIDE: &str = "docs/guide.md";

/// Each block's name and its Markdown.
fn blocks() -> Vec<(&'static str, String)> {
    let fenced = |lang: &str, body: &str| format!("```{lang}\n{body}\n```");
    let mut metrics = String::from("| metric | type | labels | meaning |\n|---|---|---|---|\n");
    for m in CATALOGUE {
        let labels = match m.labels {
            [] => String::new(),
            l => format!(" {} ", l.join(", ")),
        };
        metrics.push_str(&format!(
            "| `{}` | {} |{labels}| {} |\n",
            m.name,
            m.kind.as_str(),
            m.meaning
        ));
    }
    let mut fields = String::from("| field | meaning |\n|---|---|\n");
    for (names, meaning) in texts::JSON_FIELDS {
        let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
        fields.push_str(&format!("| {} | {meaning} |\n", names.join(", ")));
    }
    vec![
        ("metrics", metrics.trim_end().to_string()),
        ("config-example", fenced("yaml", texts::CONFIG_EXAMPLE)),
        ("secured-example", fenced("yaml", texts::SECURED_EXAMPLE)),
        ("json-example", fenced("json", texts::JSON_EXAMPLE)),
        ("json-fields", fields.trim_end().to_string()),
        ("verify-json", texts::VERIFY_JSON.to_string()),
        ("groups-output", texts::GROUPS_OUTPUT.to_string()),
        ("cutover", fenced("sh", texts::CUTOVER)),
    ]
}

fn start_marker(name: &str) -> String {
    format!("<!-- generated: {name} ")
}

fn end_marker(name: &str) -> String {
    format!("<!-- end generated: {name} -->")
}

/// The marker line that opens block `name`, as the guide must spell it.
fn start_line(name: &str) -> String {
    format!(
        "{}(from the code by `cargo run -- generate .`: edit src/manual/texts.rs or src/metrics/catalogue.rs, not here) -->",
        start_marker(name)
    )
}

/// `text` with every block rewritten; an error names a block whose markers are missing.
pub fn regenerate(text: &str) -> Result<String, String> {
    let mut out = text.to_string();
    for (name, body) in blocks() {
        let missing = || format!("{GUIDE}: no generated block '{name}' (its markers are missing)");
        let start = out.find(&start_marker(name)).ok_or_else(missing)?;
        let end = out[start..]
            .find(&end_marker(name))
            .map(|e| start + e)
            .ok_or_else(missing)?;
        if out[end + 1..].contains(&start_marker(name)) {
            return Err(format!("{GUIDE}: generated block '{name}' appears twice"));
        }
        out.replace_range(start..end, &format!("{}\n{body}\n", start_line(name)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drift fails: the committed guide's blocks are what the code generates.
    #[test]
    fn the_guide_blocks_match_the_code() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(GUIDE);
        let text = std::fs::read_to_string(&path).expect("docs/guide.md");
        let new = regenerate(&text).unwrap_or_else(|e| panic!("{e}"));
        if new != text {
            let at = new
                .lines()
                .zip(text.lines())
                .position(|(a, b)| a != b)
                .unwrap_or(0);
            panic!(
                "{GUIDE} differs from the code at line {}: run `cargo run -- generate .`\nguide: {:?}\ncode:  {:?}",
                at + 1,
                text.lines().nth(at),
                new.lines().nth(at)
            );
        }
    }

    #[test]
    fn a_block_is_rewritten_between_its_markers() {
        let mut text = String::from("intro\n");
        for (name, _) in blocks() {
            text.push_str(&format!(
                "{}\nstale\n{}\n",
                start_marker(name),
                end_marker(name)
            ));
        }
        text.push_str("outro\n");
        let new = regenerate(&text).expect("every block present");
        assert!(!new.contains("stale"), "{new}");
        assert!(new.starts_with("intro\n") && new.ends_with("outro\n"));
        assert!(new.contains("| `kreplicate_lag_records` | gauge | topic, partition |"));
        assert_eq!(regenerate(&new).as_deref(), Ok(new.as_str()));
        let without = text.replace(&end_marker("cutover"), "");
        assert!(regenerate(&without).unwrap_err().contains("'cutover'"));
    }
}
