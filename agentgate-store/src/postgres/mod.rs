//! PostgreSQL: [`PostgresStore`] (sessions, messages, approvals, the
//! audit log) and
//! [`PostgresRelay`] (asks and answers across processes over
//! `LISTEN/NOTIFY`), on one database shared by every server of a
//! deployment.
//!
//! Tables live in one schema (`public` unless
//! [`PostgresOptions::schema`] names another, created if needed) and are
//! created on connect by idempotent, versioned migrations serialised by an
//! advisory lock, so servers starting together do not race.

mod approvals;
mod audit;
mod relay;
mod schema;
mod sessions;

use std::time::Duration;

use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};
use sqlx::{ConnectOptions, Executor};

pub use relay::{HEARTBEAT, OWNER_GONE_AFTER, PostgresRelay};
pub use sessions::PostgresStore;

/// Why a PostgreSQL store or relay failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PostgresError {
    /// The URL is not a PostgreSQL URL, or the server refused the
    /// connection.
    #[error(
        "cannot connect to PostgreSQL: {0}; check the URL (postgres://user:password@host:port/database), that the server runs and accepts this user"
    )]
    Connect(String),
    /// The schema name is not a plain lowercase identifier.
    #[error(
        "schema name {0:?} is not usable: use 1 to 40 lowercase ASCII letters, digits and '_', starting with a letter"
    )]
    InvalidSchema(String),
    /// The schema was written by a newer version of the SDK.
    #[error(
        "the PostgreSQL schema {schema:?} has version {found}, but this SDK knows only up to {supported}; upgrade the SDK or use another schema"
    )]
    TooNew {
        /// The schema.
        schema: String,
        /// The version it declares.
        found: i64,
        /// The newest version this SDK writes.
        supported: i64,
    },
    /// A statement failed.
    #[error("PostgreSQL: {0}")]
    Sql(String),
    /// A stored row does not decode.
    #[error("PostgreSQL: {0}; the row was written by something else than this SDK")]
    Corrupt(String),
}

impl From<sqlx::Error> for PostgresError {
    fn from(error: sqlx::Error) -> Self {
        PostgresError::Sql(error.to_string())
    }
}

/// Where and how to connect.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PostgresOptions {
    url: String,
    schema: String,
    max_connections: u32,
}

impl PostgresOptions {
    /// Connects to `url` (`postgres://user:password@host:port/database`),
    /// tables in schema `public`, at most 5 pooled connections.
    pub fn new(url: impl Into<String>) -> Self {
        PostgresOptions {
            url: url.into(),
            schema: "public".to_string(),
            max_connections: 5,
        }
    }

    /// Keeps the tables in `schema` (created on connect): several
    /// deployments, or tests, can share one database.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = schema.into();
        self
    }

    /// At most `max` pooled connections for the sessions (the relay's
    /// listener and the approvals thread each hold one more).
    pub fn max_connections(mut self, max: u32) -> Self {
        self.max_connections = max.max(1);
        self
    }

    /// The schema the tables are in.
    pub fn schema_name(&self) -> &str {
        &self.schema
    }

    /// The `NOTIFY` channel of this schema's relay.
    fn channel(&self) -> String {
        format!("agentgate_asks_{}", self.schema)
    }

    fn checked_schema(&self) -> Result<&str, PostgresError> {
        let s = self.schema.as_str();
        let ok = !s.is_empty()
            && s.len() <= 40
            && s.starts_with(|c: char| c.is_ascii_lowercase())
            && s.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if ok {
            Ok(s)
        } else {
            Err(PostgresError::InvalidSchema(self.schema.clone()))
        }
    }

    /// A pool whose connections use the schema, the schema created and
    /// migrated.
    async fn pool(&self, max_connections: u32) -> Result<PgPool, PostgresError> {
        let schema = self.checked_schema()?.to_string();
        let connect: PgConnectOptions = self
            .url
            .parse()
            .map_err(|e: sqlx::Error| PostgresError::Connect(e.to_string()))?;
        // Statements are logged at debug level only: they carry no secrets,
        // but a busy server would flood the info log.
        let connect = connect.log_statements(tracing::log::LevelFilter::Debug);
        {
            let mut first = connect
                .connect()
                .await
                .map_err(|e| PostgresError::Connect(e.to_string()))?;
            schema::migrate(&mut first, &schema).await?;
        }
        let search_path = format!("SET search_path TO \"{schema}\"");
        PgPoolOptions::new()
            .max_connections(max_connections)
            .acquire_timeout(Duration::from_secs(30))
            .after_connect(move |conn, _meta| {
                let search_path = search_path.clone();
                Box::pin(async move {
                    conn.execute(search_path.as_str()).await?;
                    Ok(())
                })
            })
            .connect_with(connect)
            .await
            .map_err(|e| PostgresError::Connect(e.to_string()))
    }
}
