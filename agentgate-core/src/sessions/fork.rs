//! Forking a session (opencode's `Session.fork`): the copy of a session
//! and of its messages before a given one, with new ids.

use std::collections::HashMap;

use serde_json::Value;

use super::error::SessionStoreError;
use super::session::{Session, SessionTime};
use crate::ids::{ascending, now_ms};
use crate::message::Message;

/// The title of a fork of a session titled `title`, as opencode writes it:
/// `T (fork #1)`, and `T (fork #N+1)` for a title that already ends in
/// `(fork #N)`.
///
/// ```
/// use agentgate_core::forked_title;
/// assert_eq!(forked_title("Fix login"), "Fix login (fork #1)");
/// assert_eq!(forked_title("Fix login (fork #1)"), "Fix login (fork #2)");
/// ```
pub fn forked_title(title: &str) -> String {
    if let Some(open) = title.rfind(" (fork #")
        && let Some(number) = title[open + " (fork #".len()..].strip_suffix(')')
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && open > 0
        && let Ok(n) = number.parse::<u64>()
    {
        return format!("{} (fork #{})", &title[..open], n.saturating_add(1));
    }
    if title.is_empty() {
        return "(fork #1)".to_string();
    }
    format!("{title} (fork #1)")
}

/// The new session and its messages (not stored yet).
pub(super) fn fork(
    original: &Session,
    messages: &[Message],
    before: Option<&str>,
) -> Result<(Session, Vec<Message>), SessionStoreError> {
    let end = match before {
        None => messages.len(),
        Some(before) => messages
            .iter()
            .position(|m| m.id == before)
            .ok_or_else(|| SessionStoreError::MessageNotFound {
                session: original.id.clone(),
                message: before.to_string(),
            })?,
    };
    let mut session = original.clone();
    session.id = ascending("ses");
    session.parent_id = None;
    session.title = forked_title(&original.title);
    session.time = SessionTime::at(now_ms());
    session.revert = None;
    let ids: HashMap<&str, String> = messages[..end]
        .iter()
        .map(|m| (m.id.as_str(), ascending("msg")))
        .collect();
    let mut copies = Vec::with_capacity(end);
    for message in &messages[..end] {
        let mut copy = message.clone();
        copy.id = ids
            .get(message.id.as_str())
            .cloned()
            .unwrap_or_else(|| ascending("msg"));
        copy.session_id = session.id.clone();
        copy.parts = message
            .parts
            .iter()
            .map(|part| renumbered(part, &ids))
            .collect::<Result<_, _>>()?;
        copies.push(copy);
    }
    Ok((session, copies))
}

/// `part` with a new id (and a compaction's kept message ids mapped to
/// their copies), whatever kind of part it is.
fn renumbered(
    part: &crate::message::Part,
    ids: &HashMap<&str, String>,
) -> Result<crate::message::Part, SessionStoreError> {
    let encode = |e: serde_json::Error| SessionStoreError::Io(format!("cannot copy a part: {e}"));
    let mut value = serde_json::to_value(part).map_err(encode)?;
    if let Value::Object(map) = &mut value {
        map.insert("id".into(), Value::String(ascending("prt")));
        if let Some(Value::Array(kept)) = map.get_mut("kept") {
            for id in kept.iter_mut() {
                if let Some(new) = id.as_str().and_then(|old| ids.get(old)) {
                    *id = Value::String(new.clone());
                }
            }
        }
    }
    serde_json::from_value(value).map_err(encode)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::message::{Part, Role};

    #[test]
    fn fork_titles_count_up() {
        assert_eq!(forked_title("T"), "T (fork #1)");
        assert_eq!(forked_title("T (fork #1)"), "T (fork #2)");
        assert_eq!(forked_title("T (fork #9)"), "T (fork #10)");
        assert_eq!(forked_title("T (fork #x)"), "T (fork #x) (fork #1)");
        assert_eq!(forked_title(""), "(fork #1)");
    }

    #[test]
    fn a_fork_copies_the_messages_before_the_one_named_with_new_ids() {
        let original = Session::new("build", "/w").with_title("Fix login");
        let mut first = Message::user(&original.id, "one");
        first.parts.push(Part::Compaction {
            id: "prt_c".into(),
            auto: false,
            overflow: false,
            kept: vec![first.id.clone()],
        });
        let second = Message::new(original.id.as_str(), Role::Assistant);
        let third = Message::user(&original.id, "two");
        let messages = vec![first.clone(), second.clone(), third.clone()];

        let (session, copies) = fork(&original, &messages, Some(&third.id)).unwrap();
        assert_ne!(session.id, original.id);
        assert_eq!(session.title, "Fix login (fork #1)");
        assert_eq!(session.agent, "build");
        assert_eq!(copies.len(), 2);
        assert!(copies.iter().all(|m| m.session_id == session.id));
        assert_ne!(copies[0].id, first.id);
        assert_eq!(copies[0].text(), "one");
        assert_ne!(copies[0].parts[0].id(), first.parts[0].id());
        assert!(
            matches!(&copies[0].parts[1], Part::Compaction { kept, .. } if kept == &vec![copies[0].id.clone()])
        );
        assert_eq!(copies[1].role, Role::Assistant);

        let (_, all) = fork(&original, &messages, None).unwrap();
        assert_eq!(all.len(), 3);
        assert!(matches!(
            fork(&original, &messages, Some("msg_nope")),
            Err(SessionStoreError::MessageNotFound { .. })
        ));
    }
}
