//! `kreplicate migrate status`: where a migration stands, read from the cluster that holds it.

use super::selection_text;
use super::state::{Direction, State, Store, STATE_TOPIC};
use crate::cli::MigrateStatusArgs;
use crate::config;
use crate::error::{Error, Exit, Result};
use crate::topics;

/// `kreplicate migrate status`: the stored state, read only.
pub fn run(args: &MigrateStatusArgs) -> Result<Exit> {
    let file = config::load(&args.ends)?;
    let ends = config::endpoints(&args.ends, &file)?;
    let timeout = config::timeout(args.timeout.as_ref(), &file)?;
    let id = args
        .id
        .clone()
        .unwrap_or_else(|| selection_text(&ends.topics));
    let (direction, holder) = match args.failback {
        true => (Direction::Failback, &ends.from),
        false => (Direction::Forward, &ends.to),
    };
    let (_, found) = topics::metadata(holder, "target", "--to", timeout)?;
    let key = State::key(&id, direction);
    let Some(state) = Store::new(holder, timeout).read(&key, found.contains_key(STATE_TOPIC))?
    else {
        return Err(Error::usage(format!(
            "'{}' holds no migration '{key}': check --id and --to",
            holder.name
        )));
    };
    if args.json {
        let line = serde_json::to_string(&state)
            .map_err(|e| Error::failed(format!("cannot write the state as JSON: {e}")))?;
        println!("{line}");
        return Ok(Exit::Done);
    }
    println!(
        "migration '{}' ({}): stage {}/6 {} since {}\nclusters: {} → {}\ntopics: {}{}\nguarantee: {}",
        state.id,
        match state.direction {
            Direction::Forward => "move",
            Direction::Failback => "failback",
        },
        state.stage.number(),
        state.stage.as_str(),
        state.updated,
        state.source_cluster,
        state.target_cluster,
        state.topics,
        match state.rename.as_str() {
            "{topic}" => String::new(),
            r => format!(" (renamed {r})"),
        },
        state.guarantee
    );
    if !state.final_ends.is_empty() {
        let ends: Vec<String> = state
            .final_ends
            .iter()
            .map(|(k, v)| format!("{k}={v}"))
            .collect();
        println!("the writers stopped at: {}", ends.join(" "));
    }
    for g in &state.groups {
        println!(
            "group {} {}[{}]: {} → {} ({})",
            g.group,
            g.topic,
            g.partition,
            g.source_position.map_or("-".into(), |p| p.to_string()),
            g.target_position.map_or("-".into(), |p| p.to_string()),
            g.status
        );
    }
    Ok(Exit::Done)
}
