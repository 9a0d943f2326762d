//! Sessions and where they are kept: [`Session`], the [`SessionStore`]
//! trait, the in-memory default [`MemorySessionStore`] and the file-backed
//! [`FileSessionStore`], so sessions resume after a restart.

mod error;
mod file;
mod fork;
mod memory;
mod session;
mod store;

pub use error::SessionStoreError;
pub use file::FileSessionStore;
pub use fork::forked_title;
pub use memory::MemorySessionStore;
pub use session::{RevertPoint, Session, SessionTime};
pub use store::SessionStore;
