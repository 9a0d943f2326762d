//! `agent approvals pending`: the asks `agent serve` saved in this
//! machine's database (see "Asks that outlive the process" in
//! docs/server.md), those of a server that stopped included. Patterns and
//! metadata are the model's and the project's text: the table is printed
//! terminal-safe by the caller.

use agentgate::store::SqliteRelay;
use serde_json::json;

/// The saved asks as a table (or JSON), oldest first.
pub(crate) async fn pending(json: bool) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let relay = SqliteRelay::new((*store).clone());
    let asks = relay
        .pending_since()
        .await
        .map_err(|e| format!("cannot read the saved asks: {e}"))?;
    if json {
        let list: Vec<_> = asks
            .iter()
            .map(|(request, created)| {
                json!({
                    "id": request.id,
                    "sessionID": request.session_id,
                    "permission": request.permission,
                    "patterns": request.patterns,
                    "created": created,
                })
            })
            .collect();
        return Ok(serde_json::to_string_pretty(&list).unwrap_or_default() + "\n");
    }
    if asks.is_empty() {
        return Ok("no asks waiting\n".into());
    }
    let now = now_ms();
    let mut out = String::new();
    for (request, created) in &asks {
        out.push_str(&format!(
            "{}  {}  {}  {}  {} ago\n",
            request.id,
            request.session_id,
            request.permission,
            crate::render::one_line(&request.patterns.join(", "), 60),
            age(now.saturating_sub(*created))
        ));
    }
    Ok(out)
}

/// `ms` as `12 s`, `3 min`, `5 h` or `2 d`.
fn age(ms: u64) -> String {
    let seconds = ms / 1000;
    match seconds {
        0..60 => format!("{seconds} s"),
        60..3600 => format!("{} min", seconds / 60),
        3600..86_400 => format!("{} h", seconds / 3600),
        _ => format!("{} d", seconds / 86_400),
    }
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_in_the_largest_whole_unit() {
        assert_eq!(age(12_400), "12 s");
        assert_eq!(age(180_000), "3 min");
        assert_eq!(age(5 * 3_600_000 + 1), "5 h");
        assert_eq!(age(2 * 86_400_000), "2 d");
    }
}
