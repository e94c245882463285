//! The config section of verify's report: copied topic configs that differ between source
//! and target. They change the exit code only with `--configs`.

use serde::Serialize;

use crate::topics::configs::describe;
use crate::topics::TopicDrift;

/// What verify found about topic configs.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Configs {
    /// False when a broker could not describe them (`note` says why).
    pub compared: bool,
    pub note: Option<String>,
    /// `--configs`: differences make the copy inexact (exit 1).
    pub counted: bool,
    pub differences: Vec<TopicDrift>,
}

impl Configs {
    /// The section's lines for the table output.
    pub fn human(&self) -> String {
        if !self.compared {
            let why = self.note.as_deref().unwrap_or("not compared");
            return format!("\nConfigs: not compared: {why}\n");
        }
        if self.differences.is_empty() {
            return "\nConfigs: every copied topic config matches\n".into();
        }
        let mut out = format!(
            "\nConfigs: {} copied topic configs differ{}:\n",
            self.differences.len(),
            if self.counted {
                ""
            } else {
                " (reported only; --configs makes them fail verify)"
            }
        );
        for d in &self.differences {
            out.push_str(&format!("  {}: {}\n", d.target_topic, describe(&d.drift)));
        }
        out
    }
}
