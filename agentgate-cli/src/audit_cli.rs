//! `agent audit`: the audit log of permission decisions kept in the
//! database, printed or verified.

use agentgate::store::{AuditQuery, AuditRecord, Verification};
use serde_json::Value;

use crate::terminal_text::Untrusted;

/// What `agent audit` was asked for.
#[derive(Debug, Clone, Default)]
pub struct AuditOptions {
    /// Only this session's entries.
    pub session: Option<String>,
    /// Only entries at or after this time (as given on the command line).
    pub since: Option<String>,
    /// Verify the chain instead of listing.
    pub verify: bool,
    /// JSON (one object per line) instead of text.
    pub json: bool,
}

/// Runs `agent audit`: the text to print, and whether the command
/// succeeded (`--verify` fails on a broken chain).
pub async fn audit(options: AuditOptions) -> Result<(String, bool), String> {
    let store = crate::workspace::audit_store()?;
    if options.verify {
        let verdict = store.verify_audit().await.map_err(|e| e.to_string())?;
        let intact = verdict.is_intact();
        return Ok((verification(&verdict, options.json), intact));
    }
    let since_ms = match &options.since {
        Some(text) => Some(parse_since(text, chrono::Utc::now())?),
        None => None,
    };
    let query = AuditQuery {
        session: options.session.clone(),
        since_ms,
    };
    let records = store
        .audit_entries(&query)
        .await
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    for record in &records {
        if options.json {
            out.push_str(&serde_json::to_string(record).map_err(|e| e.to_string())?);
        } else {
            out.push_str(&line(record));
        }
        out.push('\n');
    }
    if records.is_empty() && !options.json {
        out.push_str("no audit entries\n");
    }
    Ok((out, true))
}

/// The verdict, as text or JSON.
fn verification(verdict: &Verification, json: bool) -> String {
    if json {
        return format!("{}\n", serde_json::to_string(verdict).unwrap_or_default());
    }
    match &verdict.broken {
        None => format!(
            "audit log intact: {} entries, every hash matches\n",
            verdict.entries
        ),
        Some(broken) => format!("audit log BROKEN: {broken}\n"),
    }
}

/// `--since`: an RFC 3339 time (`2025-01-31T12:00:00Z`), a date
/// (`2025-01-31`, midnight UTC), or a span back from now (`30m`, `2h`,
/// `7d`); milliseconds since the epoch.
fn parse_since(text: &str, now: chrono::DateTime<chrono::Utc>) -> Result<i64, String> {
    let text = text.trim();
    if let Ok(time) = chrono::DateTime::parse_from_rfc3339(text) {
        return Ok(time.timestamp_millis());
    }
    if let Ok(date) = chrono::NaiveDate::parse_from_str(text, "%Y-%m-%d") {
        let midnight = date.and_hms_opt(0, 0, 0).map(|t| t.and_utc());
        if let Some(midnight) = midnight {
            return Ok(midnight.timestamp_millis());
        }
    }
    let unit_ms = match text.chars().last() {
        Some('s') => 1_000,
        Some('m') => 60_000,
        Some('h') => 3_600_000,
        Some('d') => 86_400_000,
        _ => 0,
    };
    let amount = text
        .get(..text.len().saturating_sub(1))
        .and_then(|n| n.parse::<i64>().ok());
    match amount {
        Some(amount) if unit_ms > 0 && amount >= 0 => {
            Ok(now.timestamp_millis() - amount.saturating_mul(unit_ms))
        }
        _ => Err(format!(
            "--since {text:?}: give a time (2025-01-31T12:00:00Z), a date (2025-01-31) or a span back from now (30m, 2h, 7d)"
        )),
    }
}

/// One entry as a line: seq, time, session, what happened.
fn line(record: &AuditRecord) -> String {
    let time = chrono::DateTime::from_timestamp_millis(record.time_ms)
        .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
        .unwrap_or_default();
    format!(
        "#{} {} {} {}",
        record.seq,
        time,
        Untrusted::new(record.session_id.as_deref().unwrap_or("-")),
        summary(&record.kind, &record.entry)
    )
}

/// What an entry says, in words; every string from the entry rendered.
fn summary(kind: &str, entry: &Value) -> String {
    let text = |key: &str| Untrusted::new(entry[key].as_str().unwrap_or("").to_string());
    let list = |value: &Value| {
        let items: Vec<String> = value
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        Untrusted::new(items.join(", "))
    };
    match kind {
        "decided" => {
            let why: Vec<String> = entry["decisions"]
                .as_array()
                .map(|all| all.iter().map(decision).collect())
                .unwrap_or_default();
            format!(
                "{} {} by rule: {}",
                text("action"),
                text("permission"),
                why.join("; ")
            )
        }
        "asked" => format!(
            "asked {} {} ({})",
            Untrusted::new(entry["request"]["id"].as_str().unwrap_or("")),
            Untrusted::new(entry["request"]["permission"].as_str().unwrap_or("")),
            list(&entry["request"]["patterns"])
        ),
        "answered" => {
            let mut out = format!(
                "answered {} {} by {}",
                text("request_id"),
                text("reply"),
                answerer(&entry["answered_by"])
            );
            if let Some(feedback) = entry["feedback"].as_str() {
                out.push_str(&format!(" (feedback: {})", Untrusted::new(feedback)));
            }
            if let Some(stored) = entry["stored"].as_array().filter(|s| !s.is_empty()) {
                let rules: Vec<String> = stored.iter().map(rule).collect();
                out.push_str(&format!(" storing {}", rules.join(", ")));
            }
            out
        }
        "withdrawn" => format!("withdrawn {} ({})", text("request_id"), text("reason")),
        "trust" => format!(
            "trust {} {} by {}",
            text("decision"),
            text("directory"),
            text("decided_by")
        ),
        other => format!("{} {}", Untrusted::new(other), Untrusted::new(entry)),
    }
}

/// `pattern: action (rule …, layer …)`.
fn decision(decision: &Value) -> String {
    let rule = match &decision["rule"] {
        Value::Null => "no rule".to_string(),
        found => format!("rule {}", rule(found)),
    };
    format!(
        "{} {} ({rule}, layer {})",
        Untrusted::new(decision["pattern"].as_str().unwrap_or("")),
        Untrusted::new(decision["action"].as_str().unwrap_or("")),
        Untrusted::new(decision["layer"].as_str().unwrap_or(""))
    )
}

/// `permission pattern action`.
fn rule(rule: &Value) -> String {
    Untrusted::new(format!(
        "{} {} {}",
        rule["permission"].as_str().unwrap_or(""),
        rule["pattern"].as_str().unwrap_or(""),
        rule["action"].as_str().unwrap_or("")
    ))
    .to_string()
}

/// Who answered, in words.
fn answerer(by: &Value) -> String {
    let kind = by["by"].as_str().unwrap_or("unknown");
    let detail = ["remote", "client", "request_id", "name"]
        .iter()
        .find_map(|key| by[*key].as_str());
    match detail {
        Some(detail) => format!("{} {}", Untrusted::new(kind), Untrusted::new(detail)),
        None => Untrusted::new(kind).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn since_takes_times_dates_and_spans() {
        let now = chrono::DateTime::parse_from_rfc3339("2025-02-01T00:00:00Z")
            .unwrap()
            .to_utc();
        let day = 86_400_000;
        assert_eq!(
            parse_since("2025-01-31T00:00:00Z", now).unwrap(),
            now.timestamp_millis() - day
        );
        assert_eq!(
            parse_since("2025-01-31", now).unwrap(),
            now.timestamp_millis() - day
        );
        assert_eq!(
            parse_since("1d", now).unwrap(),
            now.timestamp_millis() - day
        );
        assert!(parse_since("yesterday", now).is_err());
    }

    #[test]
    fn summaries_render_what_the_project_wrote() {
        let entry = serde_json::json!({"request": {"id": "per_1", "permission": "bash",
            "patterns": ["echo \u{1b}[2Jhi"]}});
        let shown = summary("asked", &entry);
        assert!(!shown.contains('\u{1b}'), "{shown}");
        let by = serde_json::json!({"by": "http", "remote": "127.0.0.1:5"});
        assert_eq!(answerer(&by), "http 127.0.0.1:5");
    }
}
