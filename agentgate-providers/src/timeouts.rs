//! How long a model call may wait: opencode's three provider options,
//! `headerTimeout` (for the response headers), `chunkTimeout` (between two
//! pieces of the streamed body) and `timeout` (the whole request), in
//! milliseconds, `false` for none.
//!
//! The first two are on by default, so a server that accepts a request and
//! then says nothing cannot hang an unattended run: such a call fails with
//! [`ModelError::TimedOut`], whose message names the option to change.

use std::time::Duration;

use agentgate_core::ModelError;
use serde_json::{Map, Value};
use tokio::time::Instant;

/// How long the response headers may take, by default (opencode's
/// `headerTimeout` default, 5 minutes).
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(300);

/// How long the stream may be silent between two chunks, by default: 5
/// minutes (opencode's default is 15; 5 keeps a stalled stream from
/// holding an unattended run for longer than a reasoning model's longest
/// usual silence).
pub const DEFAULT_CHUNK_TIMEOUT: Duration = Duration::from_secs(300);

/// The client timeouts of a model call. `None` turns one off.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// From sending the request to its response headers (`headerTimeout`).
    /// Default: [`DEFAULT_HEADER_TIMEOUT`].
    pub header: Option<Duration>,
    /// Between two chunks of the streamed body (`chunkTimeout`). Default:
    /// [`DEFAULT_CHUNK_TIMEOUT`].
    pub chunk: Option<Duration>,
    /// From sending the request to the end of its stream (`timeout`).
    /// Default: none, since a long answer can legitimately stream for many
    /// minutes.
    pub total: Option<Duration>,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            header: Some(DEFAULT_HEADER_TIMEOUT),
            chunk: Some(DEFAULT_CHUNK_TIMEOUT),
            total: None,
        }
    }
}

impl Timeouts {
    /// No timeouts at all (a call can then wait forever).
    pub fn none() -> Self {
        Timeouts {
            header: None,
            chunk: None,
            total: None,
        }
    }

    /// The defaults with what a `provider.<id>.options` object sets:
    /// `timeout`, `headerTimeout`, `chunkTimeout`, each a number of
    /// milliseconds or `false`. `path` (`provider.anthropic.options`) names
    /// the keys in messages.
    pub fn from_options(options: &Map<String, Value>, path: &str) -> Result<Timeouts, String> {
        let mut timeouts = Timeouts::default();
        for (key, slot) in [
            ("timeout", &mut timeouts.total),
            ("headerTimeout", &mut timeouts.header),
            ("chunkTimeout", &mut timeouts.chunk),
        ] {
            match options.get(key) {
                None | Some(Value::Null) => {}
                Some(Value::Bool(false)) => *slot = None,
                Some(value) => {
                    let ms = value
                        .as_f64()
                        .filter(|ms| ms.is_finite() && *ms > 0.0)
                        .ok_or_else(|| {
                            format!(
                                "{path}.{key}: expected a number of milliseconds above 0, or \
                                 false for no limit; found {value}"
                            )
                        })?;
                    *slot = Some(Duration::from_secs_f64(ms / 1000.0));
                }
            }
        }
        Ok(timeouts)
    }
}

/// Which timeout fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Header,
    Chunk,
    Total,
}

impl Which {
    fn option(self) -> &'static str {
        match self {
            Which::Header => "headerTimeout",
            Which::Chunk => "chunkTimeout",
            Which::Total => "timeout",
        }
    }

    fn builder(self) -> &'static str {
        match self {
            Which::Header => "with_header_timeout",
            Which::Chunk => "with_chunk_timeout",
            Which::Total => "with_request_timeout",
        }
    }
}

/// The timeouts of one call, started when the request is sent.
#[derive(Debug, Clone)]
pub(crate) struct CallClock {
    timeouts: Timeouts,
    provider: String,
    started: Instant,
}

impl CallClock {
    /// Starts the clock of a call to `provider` (its id, for messages).
    pub(crate) fn start(timeouts: Timeouts, provider: &str) -> Self {
        CallClock {
            timeouts,
            provider: provider.to_string(),
            started: Instant::now(),
        }
    }

    /// How long the headers may still take, and which timeout that is.
    pub(crate) fn header_wait(&self) -> Option<(Duration, Which)> {
        self.tighter(self.timeouts.header.map(|t| (t, Which::Header)))
    }

    /// How long the next chunk may still take, and which timeout that is.
    pub(crate) fn chunk_wait(&self) -> Option<(Duration, Which)> {
        self.tighter(self.timeouts.chunk.map(|t| (t, Which::Chunk)))
    }

    /// `own`, or what is left of the whole-request timeout when that ends
    /// first.
    fn tighter(&self, own: Option<(Duration, Which)>) -> Option<(Duration, Which)> {
        let left = self
            .timeouts
            .total
            .map(|total| (total.saturating_sub(self.started.elapsed()), Which::Total));
        match (own, left) {
            (Some(own), Some(left)) if left.0 < own.0 => Some(left),
            (Some(own), _) => Some(own),
            (None, left) => left,
        }
    }

    /// The error of timeout `which`: what happened, and how to change it.
    pub(crate) fn error(&self, which: Which) -> ModelError {
        let limit = match which {
            Which::Header => self.timeouts.header,
            Which::Chunk => self.timeouts.chunk,
            Which::Total => self.timeouts.total,
        }
        .unwrap_or_default();
        let what = match which {
            Which::Header => format!(
                "no response headers from {} within {}",
                self.provider,
                seconds(limit)
            ),
            Which::Chunk => format!("no data for {} from {}", seconds(limit), self.provider),
            Which::Total => format!(
                "the request to {} did not finish within {}",
                self.provider,
                seconds(limit)
            ),
        };
        let option = which.option();
        ModelError::timed_out(format!(
            "{what} ({option}); raise provider.{}.options.{option} in the config (milliseconds, \
             or false for no limit; a program embedding the library: the client's `{}`)",
            self.provider,
            which.builder()
        ))
    }
}

/// A duration for messages: `300 s`, `0.5 s`.
fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn options(json: Value) -> Map<String, Value> {
        json.as_object().unwrap().clone()
    }

    #[test]
    fn options_set_and_turn_off_each_timeout() {
        let path = "provider.x.options";
        assert_eq!(
            Timeouts::from_options(&Map::new(), path).unwrap(),
            Timeouts::default()
        );
        let set = Timeouts::from_options(
            &options(serde_json::json!({"chunkTimeout": 5000, "headerTimeout": false, "timeout": 1500.5})),
            path,
        )
        .unwrap();
        assert_eq!(set.chunk, Some(Duration::from_secs(5)));
        assert_eq!(set.header, None);
        assert_eq!(set.total, Some(Duration::from_micros(1_500_500)));
        for bad in [
            serde_json::json!({"chunkTimeout": "5s"}),
            serde_json::json!({"timeout": 0}),
            serde_json::json!({"headerTimeout": true}),
        ] {
            let error = Timeouts::from_options(&options(bad), path).unwrap_err();
            assert!(error.starts_with("provider.x.options."), "{error}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn the_whole_request_timeout_shortens_the_others() {
        let timeouts = Timeouts {
            total: Some(Duration::from_secs(10)),
            ..Timeouts::default()
        };
        let clock = CallClock::start(timeouts, "anthropic");
        tokio::time::sleep(Duration::from_secs(4)).await;
        assert_eq!(
            clock.chunk_wait(),
            Some((Duration::from_secs(6), Which::Total))
        );
        let quick = CallClock::start(Timeouts::default(), "anthropic");
        assert_eq!(
            quick.header_wait(),
            Some((DEFAULT_HEADER_TIMEOUT, Which::Header))
        );
        assert_eq!(CallClock::start(Timeouts::none(), "x").chunk_wait(), None);
    }

    #[test]
    fn messages_name_the_timeout_and_the_setting() {
        let clock = CallClock::start(Timeouts::default(), "anthropic");
        let message = clock.error(Which::Chunk).to_string();
        assert!(
            message.starts_with(
                "no data for 300 s from anthropic (chunkTimeout); raise \
                 provider.anthropic.options.chunkTimeout"
            ),
            "{message}"
        );
    }
}
