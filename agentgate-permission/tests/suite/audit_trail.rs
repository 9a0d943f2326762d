//! The gate's audit trail: every automatic decision with its rule and
//! layer, every ask, every answer with who gave it, the cascades.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use agentgate_permission::{
    Action, AllowAll, Answerer, AskRequest, AuditEntry, AuditSink, PermissionGate, Reply,
    ReplyKind, Rule, Ruleset,
};

use super::common::{ask_pending, finished};

#[derive(Default)]
struct Collect(Mutex<Vec<AuditEntry>>);

impl AuditSink for Collect {
    fn record(&self, entry: AuditEntry) {
        self.0.lock().unwrap().push(entry);
    }
}

impl Collect {
    fn kinds(&self) -> Vec<&'static str> {
        self.0
            .lock()
            .unwrap()
            .iter()
            .map(AuditEntry::kind)
            .collect()
    }
    fn take(&self) -> Vec<AuditEntry> {
        std::mem::take(&mut *self.0.lock().unwrap())
    }
}

fn audited() -> (PermissionGate, Arc<Collect>) {
    let audit = Arc::new(Collect::default());
    let gate = PermissionGate::builder()
        .audit(audit.clone())
        .build()
        .unwrap();
    (gate, audit)
}

#[tokio::test]
async fn rule_decisions_name_their_rule_and_layer() {
    let (gate, audit) = audited();
    let rules = Ruleset::from(vec![
        Rule::new("bash", "*", Action::Ask),
        Rule::new("bash", "ls *", Action::Allow),
        Rule::new("bash", "rm *", Action::Deny),
    ]);
    gate.ask(AskRequest::new("s", "bash", ["ls -l"]).ruleset(rules.clone()))
        .await
        .unwrap();
    gate.ask(AskRequest::new("s", "bash", ["rm -rf x"]).ruleset(rules))
        .await
        .unwrap_err();
    let entries = audit.take();
    let [
        AuditEntry::Decided {
            action: Action::Allow,
            decisions: allowed,
            ..
        },
        AuditEntry::Decided {
            action: Action::Deny,
            decisions: denied,
            ..
        },
    ] = entries.as_slice()
    else {
        panic!("{entries:?}")
    };
    assert_eq!(
        allowed[0].rule,
        Some(Rule::new("bash", "ls *", Action::Allow))
    );
    assert_eq!(allowed[0].layer, "ruleset");
    assert_eq!(
        denied[0].rule,
        Some(Rule::new("bash", "rm *", Action::Deny))
    );
}

#[tokio::test]
async fn asks_answers_and_cascades_name_who_answered() {
    let (gate, audit) = audited();
    let first = ask_pending(
        &gate,
        AskRequest::new("s", "bash", ["make"])
            .id("a")
            .always(["make *"]),
    )
    .await;
    let second = ask_pending(&gate, AskRequest::new("s", "bash", ["make test"]).id("b")).await;
    gate.reply_as(
        "a",
        Reply::Always,
        Answerer::Http {
            remote: Some("127.0.0.1:9".into()),
        },
    )
    .unwrap();
    finished(first).await.unwrap();
    finished(second).await.unwrap();
    // The approval now decides without an ask, in layer `approved`.
    gate.ask(AskRequest::new("s", "bash", ["make all"]))
        .await
        .unwrap();
    let entries = audit.take();
    assert_eq!(
        entries.iter().map(AuditEntry::kind).collect::<Vec<_>>(),
        ["asked", "asked", "answered", "answered", "decided"]
    );
    let AuditEntry::Answered {
        reply,
        stored,
        answered_by,
        ..
    } = &entries[2]
    else {
        panic!()
    };
    assert_eq!(*reply, ReplyKind::Always);
    assert_eq!(stored.rules(), [Rule::new("bash", "make *", Action::Allow)]);
    assert_eq!(
        *answered_by,
        Answerer::Http {
            remote: Some("127.0.0.1:9".into())
        }
    );
    let AuditEntry::Answered { answered_by, .. } = &entries[3] else {
        panic!()
    };
    assert_eq!(
        *answered_by,
        Answerer::Cascade {
            request_id: "a".into()
        }
    );
    let AuditEntry::Decided { decisions, .. } = &entries[4] else {
        panic!()
    };
    assert_eq!(decisions[0].layer, "approved");
}

#[tokio::test]
async fn approvers_name_themselves_and_withdrawals_are_recorded() {
    let (gate, audit) = audited();
    gate.set_approver(Arc::new(AllowAll));
    gate.ask(AskRequest::new("s", "edit", ["a.rs"]))
        .await
        .unwrap();
    let entries = audit.take();
    let AuditEntry::Answered { answered_by, .. } = &entries[1] else {
        panic!("{entries:?}")
    };
    assert_eq!(*answered_by, Answerer::Auto);

    gate.clear_approver();
    let task = ask_pending(&gate, AskRequest::new("s", "edit", ["b.rs"]).id("w")).await;
    task.abort();
    let _ = task.await;
    assert_eq!(audit.kinds(), ["asked", "withdrawn"]);
}

#[tokio::test]
async fn a_gate_without_a_sink_is_not_audited() {
    let gate = PermissionGate::new();
    assert!(!gate.is_audited());
    gate.ask(
        AskRequest::new("s", "bash", ["ls"]).ruleset(Ruleset::from(vec![Rule::new(
            "*",
            "*",
            Action::Allow,
        )])),
    )
    .await
    .unwrap();
}
