//! [`ApprovalStore`] for [`SqliteStore`]: rules as JSON rows, one
//! transaction per append or revocation.

use agentgate_permission::{ApprovalStore, Rule, Ruleset, StoreError};
use rusqlite::TransactionBehavior;

use super::{SqliteError, SqliteStore};

fn backend(error: SqliteError) -> StoreError {
    StoreError::Backend(Box::new(error))
}

impl ApprovalStore for SqliteStore {
    fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        let conn = self.lock();
        let mut statement = conn
            .prepare_cached("SELECT rule FROM approvals WHERE project = ?1 ORDER BY seq")
            .map_err(|e| backend(self.sql(e)))?;
        let rows = statement
            .query_map([project], |r| r.get::<_, String>(0))
            .map_err(|e| backend(self.sql(e)))?;
        let mut rules = Vec::new();
        for row in rows {
            let body = row.map_err(|e| backend(self.sql(e)))?;
            let rule: Rule = serde_json::from_str(&body).map_err(|e| {
                backend(self.corrupt(format!("an approval of project {project:?}: {e}")))
            })?;
            rules.push(rule);
        }
        Ok(Ruleset::from(rules))
    }

    fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(self.sql(e)))?;
        for rule in rules {
            let body = serde_json::to_string(rule).map_err(|e| StoreError::Backend(Box::new(e)))?;
            tx.execute(
                "INSERT INTO approvals (project, rule) VALUES (?1, ?2)",
                [project, body.as_str()],
            )
            .map_err(|e| backend(self.sql(e)))?;
        }
        tx.commit().map_err(|e| backend(self.sql(e)))
    }

    fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        let mut conn = self.lock();
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| backend(self.sql(e)))?;
        let mut matching = Vec::new();
        {
            let mut statement = tx
                .prepare_cached("SELECT seq, rule FROM approvals WHERE project = ?1")
                .map_err(|e| backend(self.sql(e)))?;
            let rows = statement
                .query_map([project], |r| {
                    Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?))
                })
                .map_err(|e| backend(self.sql(e)))?;
            for row in rows {
                let (seq, body) = row.map_err(|e| backend(self.sql(e)))?;
                // Compared as rules, not as text: the JSON of an equal rule
                // written by another version may differ in spacing.
                if serde_json::from_str::<Rule>(&body).is_ok_and(|stored| &stored == rule) {
                    matching.push(seq);
                }
            }
        }
        for seq in &matching {
            tx.execute("DELETE FROM approvals WHERE seq = ?1", [seq])
                .map_err(|e| backend(self.sql(e)))?;
        }
        tx.commit().map_err(|e| backend(self.sql(e)))?;
        Ok(!matching.is_empty())
    }
}
