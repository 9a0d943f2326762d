//! The report's sections of named measures (serve, ACP): per peer, the
//! median over the rounds of each measure, and ratios against the agent.

/// One peer's rounds of a section.
#[derive(Debug, Default)]
pub struct MetricCell {
    /// Why the peer was not run at all (not installed, no such mode).
    pub not_run: Option<String>,
    /// The measures of each successful round, in the section's column
    /// order.
    pub ok: Vec<Vec<f64>>,
    /// Why each failed round failed.
    pub failures: Vec<String>,
}

impl MetricCell {
    /// Records one round's outcome.
    pub fn push(&mut self, outcome: Result<Vec<f64>, String>) {
        match outcome {
            Ok(values) => self.ok.push(values),
            Err(why) => self.failures.push(why),
        }
    }

    /// The median over the successful rounds of measure `column`.
    fn median(&self, column: usize) -> Option<f64> {
        let mut values: Vec<f64> = self
            .ok
            .iter()
            .filter_map(|v| v.get(column).copied())
            .collect();
        median(&mut values)
    }

    fn status(&self, rounds: usize) -> String {
        if let Some(why) = &self.not_run {
            return format!("NOT RUN: {why}");
        }
        if self.failures.is_empty() {
            return format!("ok {}/{rounds}", self.ok.len());
        }
        let mut reasons = self.failures.clone();
        reasons.dedup();
        format!(
            "FAILED {}/{rounds}: {}",
            self.failures.len(),
            reasons.join("; ").replace('|', "\\|")
        )
    }
}

/// The median of `values` (`None` when empty).
pub fn median(values: &mut [f64]) -> Option<f64> {
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

/// A section's heading, explanation and columns.
#[derive(Debug, Clone, Copy)]
pub struct Section<'a> {
    /// The heading (without `#`).
    pub title: &'a str,
    /// The paragraph under it: what is measured, how.
    pub intro: &'a str,
    /// The measures' column names, units included.
    pub columns: &'a [&'a str],
    /// The measures (indexes into `columns`) that get an `x agent` column.
    pub ratios: &'a [usize],
}

/// `section` as markdown: a row per peer, the first row the agent, whose
/// medians are the ratios' denominators.
pub fn render(section: &Section, rounds: usize, rows: &[(&str, &MetricCell)]) -> String {
    let mut out = format!(
        "\n### {}\n\n{}\n\n| peer | status |",
        section.title, section.intro
    );
    for column in section.columns {
        out.push_str(&format!(" {column} |"));
    }
    for &r in section.ratios {
        out.push_str(&format!(" {} x agent |", short(section.columns[r])));
    }
    out.push_str("\n| --- | --- |");
    out.push_str(&" ---: |".repeat(section.columns.len() + section.ratios.len()));
    out.push('\n');
    let base = rows.first().map(|(_, cell)| *cell);
    for (name, cell) in rows {
        out.push_str(&format!("| {name} | {} |", cell.status(rounds)));
        for c in 0..section.columns.len() {
            out.push_str(&format!(" {} |", number(cell.median(c))));
        }
        for &r in section.ratios {
            let ratio = match (cell.median(r), base.and_then(|b| b.median(r))) {
                (Some(p), Some(a)) if a > 0.0 => format!("{:.1}x", p / a),
                _ => "—".into(),
            };
            out.push_str(&format!(" {ratio} |"));
        }
        out.push('\n');
    }
    out
}

/// A column name without its unit, for the ratio's heading.
fn short(column: &str) -> &str {
    column
        .strip_suffix(" ms")
        .or_else(|| column.strip_suffix(" MiB"))
        .unwrap_or(column)
}

/// One decimal below 100, none above: the tables' precision.
fn number(value: Option<f64>) -> String {
    match value {
        None => "—".into(),
        Some(v) if v.abs() >= 100.0 => format!("{v:.0}"),
        Some(v) => format!("{v:.1}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_are_against_the_first_row_and_missing_peers_say_why() {
        let mut agent = MetricCell::default();
        agent.push(Ok(vec![2.0, 10.0]));
        agent.push(Ok(vec![4.0, 30.0]));
        let mut peer = MetricCell::default();
        peer.push(Ok(vec![30.0, 200.0]));
        peer.push(Err("timed out".into()));
        let absent = MetricCell {
            not_run: Some("no serve mode".into()),
            ..MetricCell::default()
        };
        let section = Section {
            title: "T",
            intro: "I",
            columns: &["ready ms", "peak RSS MiB"],
            ratios: &[0, 1],
        };
        let text = render(
            &section,
            2,
            &[("agent", &agent), ("peer", &peer), ("x", &absent)],
        );
        assert!(
            text.contains("| ready x agent | peak RSS x agent |"),
            "{text}"
        );
        assert!(
            text.contains("| agent | ok 2/2 | 3.0 | 20.0 | 1.0x | 1.0x |"),
            "{text}"
        );
        assert!(
            text.contains("| peer | FAILED 1/2: timed out | 30.0 | 200 | 10.0x | 10.0x |"),
            "{text}"
        );
        assert!(
            text.contains("| x | NOT RUN: no serve mode | — | — | — | — |"),
            "{text}"
        );
    }
}
