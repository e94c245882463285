//! Each stage of a migration: what it does, and the step it leads to.

use super::*;

impl Migration<'_> {
    /// Stage 1: everything `plan` checks, with the guarantee the copies will keep.
    pub(super) fn plan(&mut self) -> Result<Step> {
        let mut chosen = self.args.guarantee.unwrap_or(Guarantee::ExactlyOnce);
        let mut plan = crate::plan::make(&self.copy_args(chosen))?;
        let mut instead = None;
        if plan.refusal.is_some() && self.args.guarantee.is_none() {
            let alo = crate::plan::make(&self.copy_args(Guarantee::AtLeastOnce))?;
            if alo.refusal.is_none() {
                instead = plan.refusal.take();
                (plan, chosen) = (alo, Guarantee::AtLeastOnce);
            }
        }
        eprint!("{}", plan.human());
        if let Some(refusal) = plan.refusal {
            return Err(Error::usage(refusal));
        }
        // Its readers would read them too, and the drain's comparison could never pass. (The
        // failback's target holds the originals of what it copies back: none is foreign.)
        let forward = self.state.direction == Direction::Forward;
        if let Some(foreign) = plan.foreign.first().filter(|_| forward) {
            return Err(Error::usage(format!(
                "{foreign}; a migration needs target topics that hold only its own copies: empty them, or choose others with --rename"
            )));
        }
        if let Some(why) = instead {
            self.say(&format!(
                "the target refuses exactly-once ({why}): every copy of this migration is at-least-once"
            ));
        }
        self.state.guarantee = chosen.as_str().to_string();
        self.opts.guarantee = chosen;
        let groups = self.selected_groups()?;
        self.say(&match groups {
            None => "groups: none (--failback moves the --groups named)".to_string(),
            Some(g) if g.is_empty() => "groups: none on the source yet".to_string(),
            Some(g) => format!(
                "groups: {} on the source ({}); those with positions on the topics move at stage 5",
                table::count(g.len() as u64, "group"),
                g.join(", ")
            ),
        });
        Ok(Step::Next(Stage::Copying))
    }

    /// The groups `--groups` selects on the source; `None` when none are to move.
    fn selected_groups(&self) -> Result<Option<Vec<String>>> {
        let Some(selection) = self.selection()? else {
            return Ok(None);
        };
        let (source, _) = topics::metadata(&self.opts.from, "source", "--from", self.opts.timeout)?;
        let listed = groups::listed(&source, "source", self.opts.timeout)?;
        Ok(Some(selection.choose(
            &listed,
            &self.opts.from.name,
            self.args.groups.is_some(),
        )?))
    }

    fn selection(&self) -> Result<Option<groups::Selection>> {
        match (&self.args.groups, self.state.direction) {
            (None, Direction::Failback) => Ok(None),
            (spec, _) => groups::Selection::parse(spec.as_deref(), "--groups").map(Some),
        }
    }

    /// Stage 2: copies to the end, again and again, until little is left.
    pub(super) fn copy(&mut self, out: &mut Outcome) -> Result<Step> {
        loop {
            let started = Instant::now();
            let Some(summary) = self.copy_once(out)? else {
                return Ok(Step::Stopped);
            };
            let left = self.left(&summary)?;
            let rate = summary.records as f64 / started.elapsed().as_secs_f64().max(0.001);
            let eta = match rate > 0.0 {
                true => format!(", about {:.0} s at this rate", left as f64 / rate),
                false => String::new(),
            };
            self.say(&format!(
                "copied {} in {:.1} s ({rate:.0}/s); {} left{eta} (the writers stop once at most {} are left)",
                table::count(summary.records, "record"),
                started.elapsed().as_secs_f64(),
                table::count(left, "record"),
                self.max_lag
            ));
            if left <= self.max_lag {
                return Ok(Step::Next(Stage::WaitingForWriters));
            }
        }
    }

    /// One copy to the end as it stands now; `None` when a signal stopped it.
    fn copy_once(&self, out: &mut Outcome) -> Result<Option<Summary>> {
        let counters = Arc::new(Counters::default());
        let summary = crate::engine::with_progress(&self.opts, counters, self.args.quiet, |r| {
            r.run(&self.stop)
        })?;
        out.records_copied += summary.records;
        if let Some(e) = &summary.error {
            return Err(match summary.exit() {
                Exit::Usage => Error::usage(e),
                _ => Error::failed(e),
            });
        }
        if self.stop.load(Ordering::SeqCst) {
            return Ok(None);
        }
        Ok(Some(summary))
    }

    /// Records left to copy now: what the copy left, and what was written since it looked.
    fn left(&self, summary: &Summary) -> Result<u64> {
        let parts = summary
            .partitions
            .iter()
            .map(|p| (p.topic.clone(), p.partition))
            .collect();
        let now = writers::Reader::new(&self.opts.from, parts, self.opts.timeout)?.read()?;
        Ok(summary
            .partitions
            .iter()
            .map(|p| {
                let high = now.get(&(p.topic.clone(), p.partition)).map(|e| e.high);
                let since = match (high, p.end_offset) {
                    (Some(h), Some(e)) => (h - e).max(0),
                    _ => 0,
                };
                (p.lag.unwrap_or(0).max(0) + since) as u64
            })
            .sum())
    }

    /// The source partitions of the migration's topics.
    fn partitions(&self) -> Result<Vec<(String, i32)>> {
        let (_, found) = topics::metadata(&self.opts.from, "source", "--from", self.opts.timeout)?;
        let routes = topics::select(
            &self.opts.topics,
            self.opts.exclude.as_ref(),
            &self.opts.rename,
            &found,
            &self.opts.from.name,
        )?;
        Ok(routes
            .iter()
            .flat_map(|r| (0..r.partitions).map(move |p| (r.source.clone(), p)))
            .collect())
    }

    /// Stage 3: the operator stops the writers; the source shows when they did.
    pub(super) fn writers(&mut self) -> Result<Step> {
        let parts = self.partitions()?;
        let mut names: Vec<&str> = parts.iter().map(|(t, _)| t.as_str()).collect();
        names.dedup();
        let what = format!(
            "stop the producers writing to {} on '{}' (consumers may go on until their groups move)",
            names.join(", "),
            self.opts.from.name
        );
        if !self.args.go_on {
            if !(std::io::stdin().is_terminal() && std::io::stderr().is_terminal()) {
                return Ok(Step::Wait(
                    "waiting-for-writers",
                    format!("{what}, then run this command again with --continue"),
                    Vec::new(),
                ));
            }
            self.say(&format!("{what}; press Enter once they stopped (Ctrl-C leaves: run again with --continue later)"));
            self.at_once.store(true, Ordering::SeqCst);
            let mut line = String::new();
            let read = std::io::stdin().read_line(&mut line);
            self.at_once.store(false, Ordering::SeqCst); // stage 3 stops cleanly again
            if matches!(read, Ok(0) | Err(_)) {
                return Ok(Step::Wait(
                    "waiting-for-writers",
                    format!("{what}, then run this command again with --continue"),
                    Vec::new(),
                ));
            }
        }
        self.say(&format!(
            "waiting until every source partition's end stays still for {} with no transaction open (at most {})",
            humantime::format_duration(self.quiet_for),
            humantime::format_duration(self.writers_timeout)
        ));
        let reader = writers::Reader::new(&self.opts.from, parts, self.opts.timeout)?;
        let tell = |why: &[String]| self.say(&format!("still written to: {}", shortened(why)));
        match writers::wait(&reader, self.quiet_for, self.writers_timeout, &self.stop, &tell)? {
            Quiet::Still(ends) => {
                self.state.final_ends = ends
                    .iter()
                    .map(|((t, p), e)| (format!("{t}/{p}"), e.high))
                    .collect();
                let at: Vec<String> = ends
                    .iter()
                    .map(|((t, p), e)| format!("{t}[{p}] {}", e.high))
                    .collect();
                self.say(&format!(
                    "the writers stopped; the source ends at {}",
                    shortened(&at)
                ));
                Ok(Step::Next(Stage::Draining))
            }
            Quiet::Moving(why) => Ok(Step::Wait(
                "writers-active",
                format!(
                    "the source is still written to after {}: {}; {what}, then run this command again with --continue",
                    humantime::format_duration(self.writers_timeout),
                    shortened(&why)
                ),
                why,
            )),
            Quiet::Stopped => Ok(Step::Stopped),
        }
    }

    /// Stage 4: copies to the ends the writers left, then compares every partition.
    pub(super) fn drain(&mut self, out: &mut Outcome) -> Result<Step> {
        let parts = self.partitions()?;
        let now = writers::Reader::new(&self.opts.from, parts, self.opts.timeout)?.read()?;
        let mut moved = Vec::new();
        for ((t, p), e) in &now {
            match self.state.final_ends.get(&format!("{t}/{p}")) {
                Some(end) if *end == e.high => {}
                Some(end) => moved.push(format!("{t}[{p}] end {end} → {}", e.high)),
                None => moved.push(format!("{t}[{p}] appeared")),
            }
        }
        if !moved.is_empty() {
            self.say(&format!(
                "the source was written to after the writers stopped ({}): back to waiting for the writers",
                shortened(&moved)
            ));
            self.state.final_ends.clear();
            return Ok(Step::Next(Stage::WaitingForWriters));
        }
        if self.copy_once(out)?.is_none() {
            return Ok(Step::Stopped);
        }
        let accept_duplicates = self.opts.guarantee != Guarantee::ExactlyOnce;
        let report = verify::check(
            (&self.opts.from, &self.opts.to),
            &self.opts.topics,
            self.opts.exclude.as_ref(),
            &self.opts.rename,
            self.opts.timeout,
            accept_duplicates,
        )?;
        eprint!("{}", report.human());
        if !report.exact {
            return Err(Error::failed(format!(
                "the target differs from the source after the drain ({}): run again to copy and verify again",
                report.verdict
            )));
        }
        Ok(Step::Next(Stage::Verified))
    }

    /// Stage 5: the consumer groups, once none of them is still consumed on the source.
    pub(super) fn move_groups(&mut self) -> Result<Step> {
        let Some(selection) = self.selection()? else {
            return Ok(Step::Next(Stage::Done));
        };
        let request = |dry_run| groups::Request {
            from: &self.opts.from,
            to: &self.opts.to,
            topics: &self.opts.topics,
            exclude: self.opts.exclude.as_ref(),
            rename: &self.opts.rename,
            selection: &selection,
            strict: self.args.groups.is_some(),
            dry_run,
            allow_rewind: false,
            timeout: self.opts.timeout,
        };
        let seen = groups::translate(&request(true))?;
        let (source, _) = topics::metadata(&self.opts.from, "source", "--from", self.opts.timeout)?;
        let rk = source.client().native_ptr();
        let mut busy = Vec::new();
        for g in &seen.groups {
            let view =
                kafka::admin::groups::view(rk, &g.group, self.opts.timeout).map_err(|e| {
                    Error::failed(format!(
                        "cannot describe group '{}' on the source: {e}",
                        g.group
                    ))
                })?;
            if let Some(v) = view.filter(|v| v.busy()) {
                let who: Vec<String> = v
                    .members
                    .iter()
                    .map(|m| format!("{} on host {}", m.client_id, m.host))
                    .collect();
                busy.push(format!(
                    "'{}' ({}: {})",
                    g.group,
                    table::count(v.members.len() as u64, "live member"),
                    if who.is_empty() {
                        format!("state {}", v.state)
                    } else {
                        who.join(", ")
                    }
                ));
            }
        }
        if !busy.is_empty() {
            return Ok(Step::Wait(
                "group-active",
                format!(
                    "stop the consumers of {} on '{}' (a group moves only once nobody reads with it), then run this command again with --continue",
                    busy.join(", "),
                    self.opts.from.name
                ),
                busy,
            ));
        }
        let report = groups::translate(&request(false))?;
        if !report.all_translated() {
            // The report shows the positions moved; a refusal's table says why.
            eprint!("{}", report.table());
            return Err(Error::failed(format!(
                "not every group moved: {}; run again once that is fixed",
                report.summary()
            )));
        }
        self.state.groups = report
            .partitions
            .iter()
            .map(|r| MovedPosition {
                group: r.group.clone(),
                topic: r.topic.clone(),
                partition: r.partition,
                source_position: Some(r.source_position),
                target_position: r.target_position,
                status: r.status.text().to_string(),
            })
            .collect();
        Ok(Step::Next(Stage::Done))
    }

    /// Stage 6: what moved and what the operator does next.
    pub(super) fn report(&self, out: &mut Outcome) {
        let s = &self.state;
        let mut groups: Vec<&str> = s.groups.iter().map(|g| g.group.as_str()).collect();
        groups.dedup();
        let records: i64 = s.final_ends.values().sum();
        self.say(&format!(
            "done: '{}' → '{}' with --guarantee {}: {} copied up to where the writers stopped ({} offsets in all) and verified; {} moved{}",
            self.opts.from.name,
            self.opts.to.name,
            s.guarantee,
            table::count(s.final_ends.len() as u64, "partition"),
            table::number(records.max(0) as u64),
            table::count(groups.len() as u64, "group"),
            match groups.is_empty() {
                true => String::new(),
                false => format!(" ({})", groups.join(", ")),
            }
        ));
        if !s.groups.is_empty() {
            let rows = s
                .groups
                .iter()
                .map(|g| {
                    [
                        g.group.clone(),
                        g.topic.clone(),
                        g.partition.to_string(),
                        g.source_position.map_or("-".into(), |p| p.to_string()),
                        g.target_position.map_or("-".into(), |p| p.to_string()),
                        g.status.clone(),
                    ]
                })
                .collect();
            eprint!("{}", groups::positions(rows));
        }
        self.say(&format!(
            "next: point the consumers at '{}' (each group resumes where it stopped on '{}'), then the producers; `kreplicate migrate --failback` with these flags copies back what they write there, should you return",
            self.opts.to.name, self.opts.from.name
        ));
        out.final_ends = s.final_ends.clone();
        out.groups = s.groups.clone();
        out.guarantee = Some(s.guarantee.clone());
    }
}
