//! The markdown tables: medians per peer and scenario, ratios against the
//! agent on the same wire API, and the per-step CPU of the long run.

use crate::measure::Measurement;
use crate::peer::{Peer, Scenario};

/// The runs of one peer on one scenario.
#[derive(Debug, Default)]
pub struct Cell {
    /// Successful runs.
    pub ok: Vec<Measurement>,
    /// Why each failed run failed.
    pub failures: Vec<String>,
}

fn median(mut values: Vec<f64>) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

impl Cell {
    fn wall_ms(&self) -> Option<f64> {
        median(self.ok.iter().map(|m| m.wall.as_secs_f64() * 1e3).collect())
    }
    fn cpu_ms(&self) -> Option<f64> {
        median(self.ok.iter().map(|m| m.cpu.as_secs_f64() * 1e3).collect())
    }
    fn rss_mib(&self) -> Option<f64> {
        median(
            self.ok
                .iter()
                .map(|m| m.max_rss_kib as f64 / 1024.0)
                .collect(),
        )
    }
    /// Mean CPU per step of steps `range` (ms), median over the runs.
    fn step_cpu_ms(&self, first: bool, count: usize) -> Option<f64> {
        median(
            self.ok
                .iter()
                .filter_map(|m| {
                    let steps = m.record.cpu_per_step();
                    if steps.len() < count {
                        return None;
                    }
                    let slice = if first {
                        &steps[..count]
                    } else {
                        &steps[steps.len() - count..]
                    };
                    Some(slice.iter().sum::<u64>() as f64 / count as f64 / 1e6)
                })
                .collect(),
        )
    }
    fn last_body_mib(&self) -> Option<f64> {
        median(
            self.ok
                .iter()
                .filter_map(|m| m.record.requests.iter().rfind(|r| r.main))
                .map(|r| r.body_bytes as f64 / (1 << 20) as f64)
                .collect(),
        )
    }
    fn sent_mib(&self) -> Option<f64> {
        median(
            self.ok
                .iter()
                .map(|m| {
                    m.record
                        .requests
                        .iter()
                        .map(|r| r.body_bytes)
                        .sum::<usize>() as f64
                        / (1 << 20) as f64
                })
                .collect(),
        )
    }
    fn requests(&self) -> String {
        let mut seen: Vec<String> = self
            .ok
            .iter()
            .map(|m| {
                let aux = m.record.aux_requests();
                if aux > 0 {
                    format!("{} (+{aux} untooled)", m.record.main_requests())
                } else {
                    m.record.main_requests().to_string()
                }
            })
            .collect();
        seen.sort();
        seen.dedup();
        if seen.is_empty() {
            "—".into()
        } else {
            seen.join(" / ")
        }
    }
}

fn num(value: Option<f64>, digits: usize) -> String {
    value.map_or("—".into(), |v| format!("{v:.digits$}"))
}

fn ratio(peer: Option<f64>, agent: Option<f64>) -> String {
    match (peer, agent) {
        (Some(p), Some(a)) if a > 0.0 => format!("{:.1}x", p / a),
        _ => "—".into(),
    }
}

fn status(cell: &Cell, rounds: usize, peer: &Peer) -> String {
    if let Err(why) = &peer.binary {
        return format!("NOT RUN: {why}");
    }
    if cell.failures.is_empty() {
        return format!("ok {}/{rounds}", cell.ok.len());
    }
    let mut reasons = cell.failures.clone();
    reasons.dedup();
    format!(
        "FAILED {}/{rounds}: {}",
        cell.failures.len(),
        reasons.join("; ").replace('|', "\\|")
    )
}

/// The whole report (markdown).
pub fn render(
    peers: &[Peer],
    scenarios: &[Scenario],
    cells: &[Vec<Cell>],
    rounds: usize,
    versions: &[String],
) -> String {
    let mut out = String::new();
    out.push_str("Peers and versions:\n\n");
    for (peer, version) in peers.iter().zip(versions) {
        out.push_str(&format!(
            "- **{}** ({}): {}\n",
            peer.name,
            peer.wire.name(),
            version
        ));
    }
    out.push_str(&format!(
        "\nMedians of {rounds} interleaved rounds. `x agent` = this peer / the agent on the same \
         wire API (higher: the agent is ahead). CPU = user + system time of the peer's whole \
         process tree (its commands included); RSS = peak resident set of its largest process. \
         Requests = requests with tools the mock answered per run (expected: steps + 1), then \
         requests without tools (titles).\n\n"
    ));
    out.push_str(
        "| scenario | peer | status | requests | wall ms | CPU ms | peak RSS MiB | wall x agent | CPU x agent | RSS x agent |\n",
    );
    out.push_str("| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
    for (s, scenario) in scenarios.iter().enumerate() {
        for (p, peer) in peers.iter().enumerate() {
            let cell = &cells[p][s];
            let base = peers
                .iter()
                .position(|b| b.is_agent() && b.wire == peer.wire)
                .map(|b| &cells[b][s]);
            let (wall_r, cpu_r, rss_r) = match base {
                Some(base) if !peer.is_agent() => (
                    ratio(cell.wall_ms(), base.wall_ms()),
                    ratio(cell.cpu_ms(), base.cpu_ms()),
                    ratio(cell.rss_mib(), base.rss_mib()),
                ),
                _ => ("1.0x".into(), "1.0x".into(), "1.0x".into()),
            };
            let expected = match scenario.steps {
                Some(steps) => format!("{} of {}", cell.requests(), steps + 1),
                None => cell.requests(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n",
                scenario.name,
                peer.name,
                status(cell, rounds, peer),
                expected,
                num(cell.wall_ms(), 1),
                num(cell.cpu_ms(), 1),
                num(cell.rss_mib(), 1),
                wall_r,
                cpu_r,
                rss_r,
            ));
        }
    }
    out.push_str(
        "\nHosts each peer tried to reach beyond the mock (its HTTP(S) proxy is the mock, which \
         refuses them at once, as a machine without network would):\n\n",
    );
    for (p, peer) in peers.iter().enumerate() {
        let mut hosts: Vec<String> = cells[p]
            .iter()
            .flat_map(|cell| cell.ok.iter().flat_map(|m| m.record.external.clone()))
            .collect();
        hosts.sort();
        hosts.dedup();
        out.push_str(&format!(
            "- {}: {}\n",
            peer.name,
            if hosts.is_empty() {
                "none".to_string()
            } else {
                hosts.join(", ")
            }
        ));
    }
    if let Some(s) = scenarios.iter().rposition(|s| s.steps.unwrap_or(0) >= 20) {
        let scenario = &scenarios[s];
        out.push_str(&format!(
            "\nPer step, {}: CPU time of the peer's own process (its threads' \
             `/proc/PID/task/*/schedstat` sampled by the mock at each request; the commands it \
             runs are not included), mean of the first 10 and the last 10 steps; the history \
             it re-sends (the last request's body) and the peak RSS per byte of it.\n\n",
            scenario.name
        ));
        out.push_str(
            "| peer | CPU/step, steps 1-10 ms | CPU/step, last 10 ms | last / first | last request MiB | sent in all MiB | peak RSS / last request |\n",
        );
        out.push_str("| --- | ---: | ---: | ---: | ---: | ---: | ---: |\n");
        for (p, peer) in peers.iter().enumerate() {
            let cell = &cells[p][s];
            let first = cell.step_cpu_ms(true, 10);
            let last = cell.step_cpu_ms(false, 10);
            let per_byte = match (cell.rss_mib(), cell.last_body_mib()) {
                (Some(rss), Some(body)) if body > 0.0 => format!("{:.1}", rss / body),
                _ => "—".into(),
            };
            out.push_str(&format!(
                "| {} | {} | {} | {} | {} | {} | {} |\n",
                peer.name,
                num(first, 2),
                num(last, 2),
                match (first, last) {
                    (Some(f), Some(l)) if f > 0.0 => format!("{:.2}x", l / f),
                    _ => "—".into(),
                },
                num(cell.last_body_mib(), 2),
                num(cell.sent_mib(), 1),
                per_byte,
            ));
        }
    }
    out
}
