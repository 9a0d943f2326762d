//! The approvals of [`PostgresStore`](super::PostgresStore): the
//! synchronous [`ApprovalStore`](agentgate_permission::ApprovalStore) over
//! the async driver.
//!
//! A dedicated thread owns a single-threaded tokio runtime and one pooled
//! connection; each call sends it a job over a channel and waits for the
//! answer. The caller's runtime is never entered from inside itself (so a
//! call from a task on a current-thread runtime neither panics nor
//! deadlocks), and every read goes to the database, so a revocation made
//! by another server counts at once. The thread ends when the last clone
//! of the store is dropped.

use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::time::Duration;

use agentgate_permission::{Rule, Ruleset, StoreError};
use sqlx::postgres::PgPool;

use super::{PostgresError, PostgresOptions};

/// How long a caller waits for the approvals thread (a connection that
/// cannot be had within the pool's own 30 s is reported before this).
const WAIT: Duration = Duration::from_secs(60);

enum Job {
    Load(String, SyncSender<Result<Ruleset, PostgresError>>),
    Append(String, Vec<Rule>, SyncSender<Result<(), PostgresError>>),
    Revoke(String, Rule, SyncSender<Result<bool, PostgresError>>),
}

/// The handle to the approvals thread.
#[derive(Debug, Clone)]
pub(super) struct ApprovalWorker {
    jobs: Sender<Job>,
}

fn backend(error: PostgresError) -> StoreError {
    StoreError::Backend(Box::new(error))
}

impl ApprovalWorker {
    /// Starts the thread; it connects on its first job.
    pub(super) fn start(options: PostgresOptions) -> Result<Self, PostgresError> {
        let (jobs, queue) = mpsc::channel();
        std::thread::Builder::new()
            .name("agentgate-pg-approvals".to_string())
            .spawn(move || serve(options, queue))
            .map_err(|e| {
                PostgresError::Connect(format!("cannot start the approvals thread: {e}"))
            })?;
        Ok(ApprovalWorker { jobs })
    }

    fn call<T>(
        &self,
        job: impl FnOnce(SyncSender<Result<T, PostgresError>>) -> Job,
    ) -> Result<T, StoreError> {
        let (reply, answer) = mpsc::sync_channel(1);
        self.jobs.send(job(reply)).map_err(|_| {
            backend(PostgresError::Sql(
                "the approvals thread has stopped".to_string(),
            ))
        })?;
        match answer.recv_timeout(WAIT) {
            Ok(result) => result.map_err(backend),
            Err(_) => Err(backend(PostgresError::Sql(format!(
                "no answer from the database within {WAIT:?}"
            )))),
        }
    }

    pub(super) fn load(&self, project: &str) -> Result<Ruleset, StoreError> {
        self.call(|reply| Job::Load(project.to_string(), reply))
    }

    pub(super) fn append(&self, project: &str, rules: &[Rule]) -> Result<(), StoreError> {
        self.call(|reply| Job::Append(project.to_string(), rules.to_vec(), reply))
    }

    pub(super) fn revoke(&self, project: &str, rule: &Rule) -> Result<bool, StoreError> {
        self.call(|reply| Job::Revoke(project.to_string(), rule.clone(), reply))
    }
}

/// The thread: one runtime, one connection (made on the first job, made
/// again after a failure), jobs in order.
fn serve(options: PostgresOptions, queue: Receiver<Job>) {
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            tracing::error!(error = %e, "the PostgreSQL approvals thread has no runtime");
            return;
        }
    };
    let mut pool: Option<PgPool> = None;
    for job in queue {
        runtime.block_on(async {
            let ready = match &pool {
                Some(pool) => Ok(pool.clone()),
                None => options.pool(1).await,
            };
            let ready = match ready {
                Ok(ready) => {
                    pool = Some(ready.clone());
                    ready
                }
                Err(error) => {
                    // The caller may have timed out and gone: nothing to do.
                    match job {
                        Job::Load(_, reply) => drop(reply.send(Err(error))),
                        Job::Append(_, _, reply) => drop(reply.send(Err(error))),
                        Job::Revoke(_, _, reply) => drop(reply.send(Err(error))),
                    }
                    return;
                }
            };
            // A caller that timed out has gone: its answer is dropped.
            match job {
                Job::Load(project, reply) => drop(reply.send(load(&ready, &project).await)),
                Job::Append(project, rules, reply) => {
                    drop(reply.send(append(&ready, &project, &rules).await))
                }
                Job::Revoke(project, rule, reply) => {
                    drop(reply.send(revoke(&ready, &project, &rule).await))
                }
            }
        });
    }
}

fn decode_rule(project: &str, body: &str) -> Result<Rule, PostgresError> {
    serde_json::from_str(body).map_err(|e| {
        PostgresError::Corrupt(format!(
            "an approval of project {project:?} does not decode: {e}"
        ))
    })
}

async fn load(pool: &PgPool, project: &str) -> Result<Ruleset, PostgresError> {
    let rows: Vec<String> =
        sqlx::query_scalar("SELECT rule FROM approvals WHERE project = $1 ORDER BY seq")
            .bind(project)
            .fetch_all(pool)
            .await?;
    rows.iter().map(|body| decode_rule(project, body)).collect()
}

async fn append(pool: &PgPool, project: &str, rules: &[Rule]) -> Result<(), PostgresError> {
    let mut tx = pool.begin().await?;
    for rule in rules {
        let body = serde_json::to_string(rule)
            .map_err(|e| PostgresError::Sql(format!("cannot encode a rule: {e}")))?;
        sqlx::query("INSERT INTO approvals (project, rule) VALUES ($1, $2)")
            .bind(project)
            .bind(body)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

async fn revoke(pool: &PgPool, project: &str, rule: &Rule) -> Result<bool, PostgresError> {
    let mut tx = pool.begin().await?;
    let rows: Vec<(i64, String)> =
        sqlx::query_as("SELECT seq, rule FROM approvals WHERE project = $1 FOR UPDATE")
            .bind(project)
            .fetch_all(&mut *tx)
            .await?;
    // Compared as rules, not as text.
    let matching: Vec<i64> = rows
        .iter()
        .filter(|(_, body)| serde_json::from_str::<Rule>(body).is_ok_and(|r| &r == rule))
        .map(|(seq, _)| *seq)
        .collect();
    if !matching.is_empty() {
        sqlx::query("DELETE FROM approvals WHERE seq = ANY($1)")
            .bind(&matching)
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(!matching.is_empty())
}
