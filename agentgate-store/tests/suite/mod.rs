mod approvals;
mod attachments;
mod fixtures;
mod import;
mod postgres_relay;
mod session_contract;
mod sqlite;
mod sqlite_crash;
