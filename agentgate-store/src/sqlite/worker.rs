//! The store's worker thread: every call of the async
//! [`SessionStore`](agentgate_core::SessionStore) API is a job on one
//! queue, run on the connection by one thread, so a hundred concurrent
//! sessions wait in a queue instead of a hundred blocking threads waking
//! each other on the connection's lock.
//!
//! **Group commit.** The writes waiting in the queue when the worker takes
//! its next batch run in one transaction, each in its own savepoint (a
//! failed write rolls back alone), and are committed together: one `fsync`
//! (`synchronous=FULL`) for the batch. No write is answered before the
//! commit that holds it is on disk, so what a caller saw acknowledged
//! survives a crash exactly as with one transaction per write; a failed
//! commit fails every write of the batch.
//!
//! The thread starts with the first job and ends when the last clone of
//! the store is dropped.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::Receiver;

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::{SqliteError, SqliteStore};

/// Most jobs run in one batch (one transaction for its writes).
const BATCH: usize = 256;

/// Answers a write once its batch is committed (or failed to commit).
type Done = Box<dyn FnOnce(Result<(), SqliteError>) + Send>;

/// A read: runs on the connection and answers at once.
type ReadJob = Box<dyn FnOnce(&SqliteStore, &mut Connection) + Send>;

/// A write: runs inside the batch's transaction, or answers the error
/// that kept it from running; `None` when it failed (it has answered; its
/// savepoint is rolled back).
type WriteJob =
    Box<dyn FnOnce(&SqliteStore, Result<&Connection, SqliteError>) -> Option<Done> + Send>;

/// One queued call.
pub(super) enum Job {
    Read(ReadJob),
    Write(WriteJob),
}

/// What a job answers when the worker is gone or the job could not run.
fn gone(store: &SqliteStore, what: &str) -> SqliteError {
    SqliteError::Sql {
        path: store.path.to_path_buf(),
        detail: format!("the store's worker thread {what}"),
    }
}

impl SqliteStore {
    /// Runs a read on the worker; its result.
    pub(super) async fn read<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore, &mut Connection) -> Result<T, SqliteError> + Send + 'static,
    ) -> Result<T, SqliteError> {
        let (answer, answered) = oneshot::channel();
        self.submit(Job::Read(Box::new(move |store, conn| {
            let _ = answer.send(work(store, conn));
        })))?;
        answered
            .await
            .unwrap_or_else(|_| Err(gone(self, "stopped before answering")))
    }

    /// Runs a write on the worker; its result once it is committed.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        work: impl FnOnce(&SqliteStore, &Connection) -> Result<T, SqliteError> + Send + 'static,
    ) -> Result<T, SqliteError> {
        let (answer, answered) = oneshot::channel();
        self.submit(Job::Write(Box::new(move |store, conn| {
            match conn.and_then(|conn| work(store, conn)) {
                Ok(value) => Some(Box::new(move |committed: Result<(), SqliteError>| {
                    let _ = answer.send(committed.map(|()| value));
                }) as Done),
                Err(error) => {
                    let _ = answer.send(Err(error));
                    None
                }
            }
        })))?;
        answered
            .await
            .unwrap_or_else(|_| Err(gone(self, "stopped before answering")))
    }

    /// Queues a write without waiting for it: `done` gets its outcome
    /// once its batch is committed (the audit log's appends, which the
    /// gate must never wait for).
    pub(super) fn write_detached(
        &self,
        work: impl FnOnce(&SqliteStore, &Connection) -> Result<(), SqliteError> + Send + 'static,
        done: impl FnOnce(Result<(), SqliteError>) + Send + 'static,
    ) -> Result<(), SqliteError> {
        self.submit(Job::Write(Box::new(move |store, conn| {
            match conn.and_then(|conn| work(store, conn)) {
                Ok(()) => Some(Box::new(done) as Done),
                Err(error) => {
                    done(Err(error));
                    None
                }
            }
        })))
    }

    /// Queues `job`, starting the worker with the first one.
    fn submit(&self, job: Job) -> Result<(), SqliteError> {
        let queue = match self.queue.get() {
            Some(queue) => queue,
            None => {
                let (sender, receiver) = std::sync::mpsc::channel();
                // The worker's own handle has a queue of its own, never
                // used: holding this one would keep the thread alive forever.
                let worker = SqliteStore {
                    path: std::sync::Arc::clone(&self.path),
                    conn: std::sync::Arc::clone(&self.conn),
                    queue: std::sync::Arc::default(),
                };
                std::thread::Builder::new()
                    .name("agentgate-sqlite".into())
                    .spawn(move || run(&worker, &receiver))
                    .map_err(|e| gone(self, &format!("could not start: {e}")))?;
                // A concurrent first call may have started one too: its
                // queue wins, this thread ends at once (its sender drops).
                let _ = self.queue.set(sender);
                self.queue.get().ok_or_else(|| gone(self, "has no queue"))?
            }
        };
        queue
            .send(job)
            .map_err(|_| gone(self, "stopped (the connection is gone)"))
    }
}

/// The worker's loop: a batch of the queued jobs at a time.
fn run(store: &SqliteStore, receiver: &Receiver<Job>) {
    while let Ok(first) = receiver.recv() {
        let mut reads = Vec::new();
        let mut writes = Vec::new();
        let mut next = Some(first);
        while let Some(job) = next.take() {
            match job {
                Job::Read(read) => reads.push(read),
                Job::Write(write) => writes.push(write),
            }
            if reads.len() + writes.len() < BATCH {
                next = receiver.try_recv().ok();
            }
        }
        let mut conn = store.lock();
        if !writes.is_empty() {
            commit_together(store, &conn, writes);
        }
        for read in reads {
            // A panicking job answers nothing (its caller sees the worker
            // "stopped before answering"); the worker goes on.
            let _ = catch_unwind(AssertUnwindSafe(|| read(store, &mut conn)));
        }
    }
}

/// Runs one of the batch's transaction-control statements, prepared once
/// per connection (each batch runs four or more of them).
fn control(conn: &Connection, statement: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(statement)?.execute([]).map(|_| ())
}

/// Runs `writes` in one transaction, each in a savepoint, and answers
/// each once the transaction is committed.
fn commit_together(store: &SqliteStore, conn: &Connection, writes: Vec<WriteJob>) {
    let sql = |e: rusqlite::Error| store.sql(e);
    if let Err(error) = control(conn, "BEGIN IMMEDIATE").map_err(sql) {
        // Nothing runs: each write fails with why (alone, it would have
        // failed the same way).
        for write in writes {
            let _ = catch_unwind(AssertUnwindSafe(|| write(store, Err(error.clone()))));
        }
        return;
    }
    let mut done = Vec::with_capacity(writes.len());
    for write in writes {
        if let Err(error) = control(conn, "SAVEPOINT job").map_err(sql) {
            let _ = catch_unwind(AssertUnwindSafe(|| write(store, Err(error))));
            continue;
        }
        match catch_unwind(AssertUnwindSafe(|| write(store, Ok(conn)))) {
            Ok(Some(answer)) => {
                let _ = control(conn, "RELEASE job");
                done.push(answer);
            }
            Ok(None) | Err(_) => {
                let _ = conn.execute_batch("ROLLBACK TO job; RELEASE job");
            }
        }
    }
    let committed = control(conn, "COMMIT").map_err(sql);
    if committed.is_err() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    for answer in done {
        answer(committed.clone());
    }
}
