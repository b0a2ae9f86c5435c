//! CPU time of this process's threads, grouped by thread name, from `/proc/self/task`;
//! with every PostgreSQL process on the machine (`postgres`, from `/proc/*/stat`) and the
//! machine's idle time (`(idle)`, from `/proc/stat`, not part of any total).
//!
//! Throughput on a shared 2-core machine moves with whatever else runs; the CPU a request
//! costs, per thread group, moves much less, and says where the time goes (the HTTP
//! workers, the store's writer and flusher, the database, the benchmark's own clients).
//! The idle time says whether the machine was the limit.

use std::collections::BTreeMap;
use std::time::Duration;

/// Kernel clock ticks per second in `/proc/*/stat` (`USER_HZ`, 100 on Linux).
const TICKS_PER_SECOND: u64 = 100;

/// CPU ticks (user + system) per thread group at one moment.
#[derive(Clone, Default)]
pub struct CpuSample(BTreeMap<String, u64>);

impl CpuSample {
    /// Every live thread's ticks, under its name with a trailing `-<n>` cut (tokio names
    /// its workers alike). Threads that ended before the sample are not counted, so take
    /// samples while the threads measured are alive.
    pub fn now() -> CpuSample {
        let mut groups = BTreeMap::new();
        for task in entries("/proc/self/task") {
            if let Some((name, ticks)) = stat(&task.join("stat")) {
                *groups.entry(group_of(&name)).or_default() += ticks;
            }
        }
        for process in entries("/proc") {
            if let Some((name, ticks)) = stat(&process.join("stat"))
                && name == "postgres"
            {
                *groups.entry(name).or_default() += ticks;
            }
        }
        // "cpu  user nice system idle …", summed over the cores.
        let idle = std::fs::read_to_string("/proc/stat").ok().and_then(|s| {
            s.lines()
                .next()
                .and_then(|l| l.split_whitespace().nth(4))
                .and_then(|t| t.parse::<u64>().ok())
        });
        if let Some(idle) = idle {
            groups.insert(IDLE.into(), idle);
        }
        CpuSample(groups)
    }

    /// CPU spent per group since `earlier`.
    pub fn since(&self, earlier: &CpuSample) -> BTreeMap<String, Duration> {
        self.0
            .iter()
            .map(|(group, &ticks)| {
                let before = earlier.0.get(group).copied().unwrap_or(0);
                let spent = ticks.saturating_sub(before);
                let nanos = spent * 1_000_000_000 / TICKS_PER_SECOND;
                (group.clone(), Duration::from_nanos(nanos))
            })
            .filter(|(_, spent)| !spent.is_zero())
            .collect()
    }
}

/// The group of the machine's idle time: outside every total.
pub const IDLE: &str = "(idle)";

fn entries(dir: &str) -> impl Iterator<Item = std::path::PathBuf> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
}

/// A task's or process's name and CPU ticks (user + system) from its `stat`.
fn stat(path: &std::path::Path) -> Option<(String, u64)> {
    let stat = std::fs::read_to_string(path).ok()?;
    // "tid (comm) state ppid …": comm may hold spaces; the fields after the last ')'
    // are fixed, utime and stime being the 12th and 13th of them.
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|f| f.parse::<u64>().ok());
    Some((stat[open + 1..close].to_string(), ticks(11)? + ticks(12)?))
}

fn group_of(name: &str) -> String {
    match name.rsplit_once('-') {
        Some((stem, n)) if n.chars().all(|c| c.is_ascii_digit()) && !stem.is_empty() => {
            stem.to_string()
        }
        _ => name.to_string(),
    }
}
