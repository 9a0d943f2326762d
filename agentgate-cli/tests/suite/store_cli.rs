//! The CLI's store: sessions and approvals in `<data dir>/agentgate.db`,
//! the file stores of earlier versions imported the first time, once, and
//! left in place.

use agentgate_core::{FileSessionStore, Message, Session, SessionStore};
use agentgate_permission::{Action, ApprovalStore, JsonFileStore, Rule};

use super::run_cli::{Sandbox, text};

#[tokio::test]
async fn an_earlier_file_store_is_imported_once_and_left_in_place() {
    let sandbox = Sandbox::new("store-import");
    let data = sandbox.root.join("data/agent-sdk");
    let files = FileSessionStore::open(data.join("sessions")).await.unwrap();
    let session = Session::new("build", &sandbox.project).with_title("from the file store");
    files.put_session(&session).await.unwrap();
    files
        .put_message(&Message::user(&session.id, "an old question"))
        .await
        .unwrap();
    let project = sandbox.project.display().to_string();
    let json = JsonFileStore::new(data.join("approvals"));
    json.append(
        &project,
        &[Rule::new("bash", "git status *", Action::Allow)],
    )
    .unwrap();

    let list = text(&sandbox.agent(&["sessions", "list"], &[]).await.stdout);
    assert!(list.contains(&session.id), "{list}");
    let show = sandbox.agent(&["sessions", "show", &session.id], &[]).await;
    assert!(
        text(&show.stdout).contains("an old question"),
        "{}",
        text(&show.stderr)
    );
    let approvals = text(&sandbox.agent(&["approvals", "list"], &[]).await.stdout);
    assert!(approvals.contains("git status *"), "{approvals}");
    assert!(data.join("agentgate.db").is_file());

    // Revoked in the database; the next run does not import it again.
    let revoke = sandbox
        .agent(&["approvals", "revoke", "bash", "git status *"], &[])
        .await;
    assert!(revoke.status.success(), "{}", text(&revoke.stderr));
    let approvals = text(&sandbox.agent(&["approvals", "list"], &[]).await.stdout);
    assert!(
        approvals.starts_with("no remembered approvals"),
        "{approvals}"
    );

    // The old files are untouched.
    assert_eq!(
        files.session(&session.id).await.unwrap().title,
        session.title
    );
    assert_eq!(json.load(&project).unwrap().len(), 1);
    let _ = std::fs::remove_dir_all(&sandbox.root);
}
