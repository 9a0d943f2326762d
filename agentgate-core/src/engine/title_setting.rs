//! [`SessionTitles`]: whether and with which model an engine titles new
//! sessions (the writing itself is in `titles`).

use std::sync::Arc;

use crate::model::LanguageModel;

/// The name of the hidden agent that writes titles.
pub const TITLE_AGENT: &str = "title";

/// Whether an engine titles new sessions, and with which model
/// ([`EngineBuilder::session_titles`](crate::EngineBuilder::session_titles)).
/// The `title` agent's own configured `model` wins over both models.
#[derive(Clone, Default)]
#[non_exhaustive]
pub enum SessionTitles {
    /// No titles are written (the engine builder's default).
    #[default]
    Off,
    /// Titles are written by this model (e.g. the configuration's
    /// `small_model`).
    Model(Arc<dyn LanguageModel>),
    /// Titles are written by the model the prompt runs on (opencode's
    /// fallback when no small model is configured).
    SessionModel,
}

impl std::fmt::Debug for SessionTitles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionTitles::Off => f.write_str("Off"),
            SessionTitles::Model(model) => write!(f, "Model({})", model.info().full_id()),
            SessionTitles::SessionModel => f.write_str("SessionModel"),
        }
    }
}

impl SessionTitles {
    /// Whether titles are written at all.
    pub fn is_on(&self) -> bool {
        !matches!(self, SessionTitles::Off)
    }
}
