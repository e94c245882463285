//! The config section of verify's report: copied topic configs that differ between source
//! and target. They change the exit code only with `--configs`.

use serde::Serialize;

use super::report::Report;
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

impl Report {
    /// Adds the config comparison; with `counted` (`--configs`) differences make the copy
    /// inexact.
    pub(super) fn add_configs(
        &mut self,
        found: std::result::Result<Vec<TopicDrift>, String>,
        counted: bool,
    ) {
        self.configs = match found {
            Ok(differences) => Configs {
                compared: true,
                note: None,
                counted,
                differences,
            },
            Err(why) => Configs {
                compared: false,
                note: Some(why),
                counted,
                differences: Vec::new(),
            },
        };
        if counted && !self.configs.differences.is_empty() {
            if self.exact {
                self.verdict = format!(
                    "DIFF: the records match, but {} copied topic configs differ",
                    self.configs.differences.len()
                );
            } else {
                self.verdict.push_str(&format!(
                    "; {} copied topic configs differ",
                    self.configs.differences.len()
                ));
            }
            self.exact = false;
        }
    }
}
