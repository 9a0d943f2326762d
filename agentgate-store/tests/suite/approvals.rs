//! One contract, every `ApprovalStore`: memory, JSON files, SQLite,
//! PostgreSQL.

use agentgate_permission::{Action, ApprovalStore, JsonFileStore, MemoryStore, Rule, Ruleset};
use agentgate_store::{PostgresStore, SqliteStore};

use super::fixtures::{TempDir, postgres};

fn rule(pattern: &str) -> Rule {
    Rule::new("bash", pattern, Action::Allow)
}

/// Append, load, list and revoke, two projects kept apart.
fn round_trip(store: &dyn ApprovalStore) {
    let project = "/home/ü/project one";
    let other = "/home/u/other";
    assert_eq!(store.load(project).unwrap(), Ruleset::default());

    store
        .append(project, &[rule("git *"), rule("npm run *")])
        .unwrap();
    store
        .append(project, &[Rule::new("edit", "src/日本/*", Action::Allow)])
        .unwrap();
    store.append(other, &[rule("ls *")]).unwrap();
    let expected = Ruleset::from(vec![
        rule("git *"),
        rule("npm run *"),
        Rule::new("edit", "src/日本/*", Action::Allow),
    ]);
    assert_eq!(store.load(project).unwrap(), expected);
    assert_eq!(store.list(project).unwrap(), expected);
    assert_eq!(
        store.load(other).unwrap(),
        Ruleset::from(vec![rule("ls *")])
    );

    // Revoke removes every equal rule, of that project only.
    store.append(project, &[rule("git *")]).unwrap();
    store.append(other, &[rule("git *")]).unwrap();
    assert!(store.revoke(project, &rule("git *")).unwrap());
    assert!(!store.revoke(project, &rule("git *")).unwrap());
    assert_eq!(
        store.load(project).unwrap(),
        Ruleset::from(vec![
            rule("npm run *"),
            Rule::new("edit", "src/日本/*", Action::Allow)
        ])
    );
    assert_eq!(
        store.load(other).unwrap(),
        Ruleset::from(vec![rule("ls *"), rule("git *")])
    );
    assert!(!store.revoke("/nowhere", &rule("git *")).unwrap());
}

#[test]
fn memory_approvals_round_trip() {
    round_trip(&MemoryStore::new());
}

#[test]
fn json_file_approvals_round_trip() {
    let dir = TempDir::new("approvals-json");
    round_trip(&JsonFileStore::new(&dir.0));
}

#[test]
fn sqlite_approvals_round_trip() {
    let dir = TempDir::new("approvals-sqlite");
    round_trip(&SqliteStore::open(dir.0.join("agentgate.db")).unwrap());
}

/// The synchronous trait called from inside a task of a current-thread
/// runtime: the approvals thread has its own runtime, so nothing panics
/// or deadlocks.
#[tokio::test(flavor = "current_thread")]
async fn postgres_approvals_round_trip_from_a_current_thread_runtime() {
    let Some(options) = postgres("approvals") else {
        return;
    };
    let store = PostgresStore::connect(options.clone()).await.unwrap();
    round_trip(&store);
    // Another connection, as another server would have, sees the result.
    let other = PostgresStore::connect(options).await.unwrap();
    assert_eq!(
        other.load("/home/u/other").unwrap(),
        Ruleset::from(vec![rule("ls *"), rule("git *")])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_approvals_round_trip_from_a_multi_thread_runtime() {
    let Some(options) = postgres("approvals_mt") else {
        return;
    };
    round_trip(&PostgresStore::connect(options).await.unwrap());
}

#[test]
fn postgres_approvals_round_trip_outside_any_runtime() {
    let Some(options) = postgres("approvals_nort") else {
        return;
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let store = runtime.block_on(PostgresStore::connect(options)).unwrap();
    round_trip(&store);
}
