//! `agent approvals pending` and `agent approvals answer`: the asks
//! `agent serve` saved in this machine's database (see "Asks that outlive
//! the process" in docs/server.md), those of a server that stopped
//! included, and answering one of a stopped server here: the ask is
//! claimed and its turn resumed in this process. Patterns, metadata and
//! the model's answer are foreign text: printed terminal-safe by the
//! caller.

use agentgate::store::SqliteRelay;
use serde_json::json;

/// The saved asks as a table (or JSON), oldest first.
pub(crate) async fn pending(json: bool) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let relay = SqliteRelay::new((*store).clone());
    let asks: Vec<(agentgate::permission::PermissionRequest, u64)> = relay
        .saved()
        .await
        .map_err(|e| format!("cannot read the saved asks: {e}"))?
        .into_iter()
        .map(|saved| (saved.request, saved.created_ms))
        .collect();
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

/// `agent approvals answer ID REPLY [--message M]`: claims the saved ask
/// `id` of a server that stopped and resumes its turn here (later asks of
/// the turn are rejected: nobody can answer them in this process); the
/// turn's outcome and answer.
pub(crate) async fn answer(
    id: &str,
    reply: agentgate::permission::Reply,
) -> Result<String, String> {
    let store = crate::workspace::session_store().await?;
    let relay = SqliteRelay::new((*store).clone());
    let saved = relay
        .saved()
        .await
        .map_err(|e| format!("cannot read the saved asks: {e}"))?
        .into_iter()
        .find(|saved| saved.request.id == id)
        .ok_or_else(|| format!("no ask {id} is waiting: `agent approvals pending` lists them"))?;
    if saved.owner_pid != std::process::id() && process_runs(saved.owner_pid) {
        return Err(format!(
            "ask {id} belongs to a running `agent serve` (pid {}): answer it there (POST /permission/{id}/reply), or stop that server first",
            saved.owner_pid
        ));
    }
    let session = agentgate::SessionStore::session(store.as_ref(), &saved.request.session_id)
        .await
        .map_err(|e| e.to_string())?;
    let directory = session.directory.clone();
    let options = crate::run_cli::RunOptions {
        session: Some(session.id.clone()),
        directory: Some(directory.clone()),
        ..Default::default()
    };
    let permissions = crate::workspace::gate(&directory)?;
    let approver = std::sync::Arc::new(agentgate::permission::RejectAll::new(std::io::sink()));
    let built = crate::run_cli::build_agent(&options, approver, Some(permissions)).await?;
    let request = agentgate::store::AskRelay::claim(&relay, id)
        .await
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("ask {id} was answered meanwhile"))?;
    let cancel = agentgate::CancellationToken::new();
    let turn = built
        .agent
        .engine()
        .resume_ask(&request, reply, cancel)
        .await
        .map_err(|e| e.to_string())?;
    Ok(format!(
        "resumed session {}: {:?}\n{}\n",
        session.id,
        turn.stop,
        turn.text()
    ))
}

/// Whether process `pid` still runs on this machine.
fn process_runs(pid: u32) -> bool {
    pid != 0 && std::path::Path::new(&format!("/proc/{pid}")).exists()
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
