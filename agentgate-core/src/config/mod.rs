//! Configuration as a library: opencode's `opencode.json(c)` discovery and
//! precedence, JSONC, `{env:}`/`{file:}` substitution, the `agent` and
//! `mode` maps, markdown agents, providers and instructions (§3.3). The CLI
//! and embedders call the same code.
//!
//! Files: `jsonc.rs` (comments and trailing commas), `substitute.rs`
//! (`{env:}`, `{file:}`), `keys.rs` (known keys, did-you-mean),
//! `provider.rs` (`provider.<id>` entries), `native_agents.rs` (opencode's
//! V2 `agents` map lowered to `agent`), `checks.rs` (type checks of one
//! layer), `hooks.rs` (the `hooks` key and which layers may set it),
//! `loader.rs` (the layers), `trust.rs` (what an untrusted project's
//! layer may set), `trust_store.rs` (the user's record of trusted projects),
//! `error.rs` (errors and warnings naming file and key path).

mod checks;
mod error;
mod hooks;
mod jsonc;
mod keys;
mod loader;
mod native_agents;
mod provider;
mod substitute;
mod trust;
mod trust_store;

pub use error::{ConfigError, ConfigErrors, ConfigWarning};
pub use hooks::HookConfig;
pub use jsonc::{UnterminatedComment, strip_jsonc};
pub use keys::{TOP_LEVEL_KEYS, did_you_mean};
pub use loader::{Config, ConfigLoader, EnvLookup, ProviderPredicate, parse_config_text};
pub use provider::{ProviderConfig, ProviderModel};
pub use substitute::{substitute, substitute_within_project};
pub use trust::{
    PROJECT_KEYS, RiskKind, RiskyPart, Screened, Treatment, canonical_json, screen_agent,
    screen_project_layer, strip_allows,
};
pub use trust_store::{
    TRUST_FILE, TrustRecord, TrustStore, TrustStoreError, fingerprint, project_key,
};
