mod approvals;
mod attachments;
mod fixtures;
mod import;
mod postgres_relay;
#[cfg(unix)]
mod private_store;
mod session_contract;
mod sqlite;
mod sqlite_crash;
