//! When and how long to wait before retrying a failed model stream (§13).
//!
//! [`retryable`] and [`delay`] are opencode's functions, exactly; the
//! [`RetryPolicy`] adds what opencode lacks: a limit on attempts and on the
//! time spent retrying, a cap on waits the server did not ask for, one
//! retry of a timeout, and retrying a server that went away mid-backoff.
//!
//! **Never after output was handed out.** The loop retries a stream only
//! while nothing of that attempt has been *committed* to the caller: the
//! processor holds back the attempt's events until the first text or
//! reasoning delta or the first complete tool call arrives, and tools run
//! only after the stream finished. A failure before that point (an HTTP
//! 429, a stream cut while a tool call's arguments were still streaming) is
//! retried and its held-back events are discarded; a failure after it ends
//! the step with the error recorded (opencode instead retries and resets
//! the text the user already saw).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Headers, ModelError, header_in};

/// The largest delay, 2³¹−1 ms (what JavaScript timers accept).
pub const MAX_DELAY_MS: u64 = 2_147_483_647;
/// The first backoff step.
pub const INITIAL_DELAY_MS: u64 = 2_000;
/// The cap of the backoff schedule when the error carried no headers.
pub const MAX_DELAY_NO_HEADERS_MS: u64 = 30_000;

/// Why a failed stream is worth retrying: the message shown in the
/// session's `retry` status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryInfo {
    /// What to tell the user (`Provider is overloaded`, `Rate Limited`, the
    /// provider's message ...).
    pub message: String,
}

impl RetryInfo {
    fn new(message: impl Into<String>) -> Option<Self> {
        Some(RetryInfo {
            message: message.into(),
        })
    }
}

/// opencode's `retryable` (§13): `Some` with a message when the error is
/// worth retrying, `None` otherwise.
///
/// - [`ModelError::ContextOverflow`] and [`ModelError::Cancelled`]: never.
/// - [`ModelError::Api`]: only when `is_retryable` or the status is ≥ 500;
///   the message becomes "Provider is overloaded" when it contains
///   "Overloaded".
/// - [`ModelError::Interrupted`] (a cut stream or dropped connection): as a
///   retryable API error without headers.
/// - [`ModelError::TimedOut`]: like `Interrupted` (the policy retries it
///   once); [`ModelError::Unreachable`]: not on its own.
/// - [`ModelError::Other`]: when the message mentions a rate limit, or is
///   one of the JSON error bodies §13 lists.
///
/// (opencode's upsell actions for its own paid plans are not ported.)
pub fn retryable(error: &ModelError) -> Option<RetryInfo> {
    match error {
        ModelError::ContextOverflow { .. } | ModelError::Cancelled => None,
        ModelError::Api(api) => {
            let status_retry = api.status.is_some_and(|s| s >= 500);
            if !(api.is_retryable || status_retry) {
                return None;
            }
            if api.message.contains("Overloaded") {
                RetryInfo::new("Provider is overloaded")
            } else {
                RetryInfo::new(api.message.clone())
            }
        }
        ModelError::Interrupted { message } | ModelError::TimedOut { message } => {
            RetryInfo::new(message.clone())
        }
        // Retried only after an attempt that reached the server
        // ([`RetryPolicy::plan`]); on its own it is most likely a wrong URL.
        ModelError::Unreachable { .. } => None,
        ModelError::Other { message } => retryable_message(message),
    }
}

/// §13's rules for errors that are not API errors, on their message.
pub fn retryable_message(message: &str) -> Option<RetryInfo> {
    let lower = message.to_lowercase();
    if [
        "rate increased too quickly",
        "rate limit",
        "too many requests",
    ]
    .iter()
    .any(|needle| lower.contains(needle))
    {
        return RetryInfo::new(message);
    }
    let json: Value = serde_json::from_str(message).ok()?;
    let is_error = json.get("type").and_then(Value::as_str) == Some("error");
    let inner = json.get("error");
    if is_error
        && inner.and_then(|e| e.get("type")).and_then(Value::as_str) == Some("too_many_requests")
    {
        return RetryInfo::new("Too Many Requests");
    }
    if let Some(code) = json.get("code").and_then(Value::as_str)
        && (code.contains("exhausted") || code.contains("unavailable"))
    {
        return RetryInfo::new("Provider is overloaded");
    }
    if is_error
        && inner
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str)
            .is_some_and(|code| code.contains("rate_limit"))
    {
        return RetryInfo::new("Rate Limited");
    }
    None
}

/// opencode's `delay(attempt, error)` (§13) in milliseconds, `attempt`
/// counting from 1. `headers` are the response headers of an API error
/// (`None` for errors without headers and for non-API errors):
///
/// - with headers: `retry-after-ms` (a number, 0 allowed), else
///   `retry-after` in seconds (rounded up to whole ms), else `retry-after`
///   as an HTTP date in the future, else `2000 × 2^(attempt−1)` **without**
///   a cap;
/// - without: `min(2000 × 2^(attempt−1), 30000)`.
///
/// Every value is capped at [`MAX_DELAY_MS`].
///
/// ```
/// use agentgate_core::testing::semantics::retry_delay;
/// use agentgate_core::Headers;
/// assert_eq!(retry_delay(3, None), 8_000);
/// let headers = Headers::from([("retry-after".to_string(), "1.5".to_string())]);
/// assert_eq!(retry_delay(1, Some(&headers)), 1_500);
/// ```
pub fn delay(attempt: u32, headers: Option<&Headers>) -> u64 {
    delay_at(attempt, headers, SystemTime::now())
}

/// [`delay`] with an explicit "now", for HTTP-date `retry-after` values.
pub fn delay_at(attempt: u32, headers: Option<&Headers>, now: SystemTime) -> u64 {
    let backoff = backoff(attempt);
    let Some(headers) = headers else {
        return backoff.min(MAX_DELAY_NO_HEADERS_MS);
    };
    server_delay(headers, now).unwrap_or_else(|| backoff.min(MAX_DELAY_MS))
}

/// The wait the server asked for: `retry-after-ms`, else `retry-after` in
/// seconds or as an HTTP date in the future; `None` when it asked nothing.
fn server_delay(headers: &Headers, now: SystemTime) -> Option<u64> {
    if let Some(ms) = header_in(headers, "retry-after-ms").and_then(parse_number) {
        return Some(cap(ms));
    }
    let value = header_in(headers, "retry-after")?;
    if let Some(seconds) = parse_number(value) {
        return Some(cap(seconds * 1000.0));
    }
    let date = parse_http_date(value)?;
    let ahead = date.duration_since(now).ok()?;
    (!ahead.is_zero()).then(|| cap(ahead.as_secs_f64() * 1000.0))
}

/// `2000 × 2^(attempt−1)`, saturating.
fn backoff(attempt: u32) -> u64 {
    let exponent = attempt.saturating_sub(1).min(40);
    INITIAL_DELAY_MS.saturating_mul(1u64 << exponent)
}

/// JavaScript's `Number.parseFloat`, which opencode applies to the retry
/// headers: leading white space is skipped and the longest prefix that is a
/// decimal number (or `Infinity`) is read, so `"5s"` is 5. Negative values
/// become 0 (retry at once, as a negative wait does in opencode). `None`
/// when no number starts the text.
fn parse_number(value: &str) -> Option<f64> {
    let text = value.trim_start();
    let unsigned = text.trim_start_matches(['+', '-']);
    let sign_len = text.len() - unsigned.len();
    if sign_len > 1 {
        return None;
    }
    let negative = text.starts_with('-');
    if unsigned.starts_with("Infinity") {
        return Some(if negative { 0.0 } else { f64::INFINITY });
    }
    let bytes = unsigned.as_bytes();
    let digits = |from: usize| {
        bytes[from..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let int = digits(0);
    let mut end = int;
    let mut frac = 0;
    if bytes.get(end) == Some(&b'.') {
        frac = digits(end + 1);
        end += 1 + frac;
    }
    if int == 0 && frac == 0 {
        return None;
    }
    if matches!(bytes.get(end), Some(b'e' | b'E')) {
        let mut at = end + 1;
        if matches!(bytes.get(at), Some(b'+' | b'-')) {
            at += 1;
        }
        let exponent = digits(at);
        if exponent > 0 {
            end = at + exponent;
        }
    }
    let number: f64 = unsigned.get(..end)?.parse().ok()?;
    Some(if negative { 0.0 } else { number })
}

fn cap(ms: f64) -> u64 {
    let ms = ms.ceil();
    if ms >= MAX_DELAY_MS as f64 {
        MAX_DELAY_MS
    } else {
        ms as u64
    }
}

/// Parses an HTTP date (RFC 7231 §7.1.1.1): IMF-fixdate
/// (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
/// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime
/// (`Sun Nov  6 08:49:37 1994`). Written here rather than pulled in as a
/// dependency because it is this small.
pub fn parse_http_date(value: &str) -> Option<SystemTime> {
    let mut tokens: Vec<&str> = value.split_whitespace().collect();
    // Like JavaScript's Date.parse, accept UTC spelled other ways, and a
    // numeric offset (applied below).
    let mut offset_secs: i64 = 0;
    if let Some(zone) = tokens.last().copied() {
        if matches!(zone, "UTC" | "UT" | "Z") {
            if let Some(last) = tokens.last_mut() {
                *last = "GMT";
            }
        } else if let Some(offset) = parse_offset(zone) {
            offset_secs = offset;
            if let Some(last) = tokens.last_mut() {
                *last = "GMT";
            }
        }
    }
    let (day, month, year, time) = match tokens.as_slice() {
        [_, day, month, year, time, "GMT"] => (
            day.parse::<u32>().ok()?,
            month_number(month)?,
            year.parse::<i64>().ok()?,
            *time,
        ),
        [_, date, time, "GMT"] => {
            let mut pieces = date.split('-');
            let day = pieces.next()?.parse::<u32>().ok()?;
            let month = month_number(pieces.next()?)?;
            let yy = pieces.next()?.parse::<i64>().ok()?;
            let year = if yy < 50 { 2000 + yy } else { 1900 + yy };
            (day, month, year, *time)
        }
        [_, month, day, time, year] => (
            day.parse::<u32>().ok()?,
            month_number(month)?,
            year.parse::<i64>().ok()?,
            *time,
        ),
        _ => return None,
    };
    let mut clock = time.split(':').map(|t| t.parse::<u32>().ok());
    let (hour, minute, second) = (clock.next()??, clock.next()??, clock.next()??);
    if clock.next().is_some() || hour > 23 || minute > 59 || second > 60 || !(1..=31).contains(&day)
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let secs = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second) - offset_secs;
    let secs = u64::try_from(secs).ok()?;
    UNIX_EPOCH.checked_add(Duration::from_secs(secs))
}

/// A `+hhmm` / `-hhmm` zone offset in seconds east of UTC.
fn parse_offset(zone: &str) -> Option<i64> {
    let (sign, digits) = match zone.as_bytes().first()? {
        b'+' => (1, &zone[1..]),
        b'-' => (-1, &zone[1..]),
        _ => return None,
    };
    if digits.len() != 4 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let hours: i64 = digits[..2].parse().ok()?;
    let minutes: i64 = digits[2..].parse().ok()?;
    Some(sign * (hours * 3600 + minutes * 60))
}

fn month_number(name: &str) -> Option<u32> {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(name))
        .map(|i| i as u32 + 1)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
/// algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Retries a step may make after its first attempt, by default.
pub const DEFAULT_MAX_RETRIES: u32 = 8;
/// The longest wait the loop chooses itself (when the server sent no
/// `retry-after`), by default.
pub const DEFAULT_MAX_DELAY_MS: u64 = 30_000;
/// How long a step may spend on failed attempts and waits before no new
/// retry starts, by default: with the other defaults a provider that keeps
/// answering 500 fails the step after nine attempts and 150 s of waiting,
/// and a server whose `retry-after` asks for more than this is
/// given up on at once.
pub const DEFAULT_MAX_ELAPSED_MS: u64 = 160_000;

/// How the loop retries failed streams.
///
/// The default bounds both the number of attempts and the time a step may
/// spend retrying, so an unattended run always ends: a persistent HTTP 500
/// fails after 9 attempts (waits of 2, 4, 8, 16 and four times 30 s). A wait the
/// server asks for (`retry-after-ms`, `retry-after`) is honoured as it is,
/// within the time bound; any other wait is capped at `max_delay_ms`.
/// [`RetryPolicy::unlimited`] is opencode's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RetryPolicy {
    /// How many retries (after the first attempt) a step may make; `None`
    /// retries forever as opencode does. Default: [`DEFAULT_MAX_RETRIES`].
    pub max_retries: Option<u32>,
    /// The cap, in ms, on a wait the server did not ask for; `None` keeps
    /// opencode's schedule, which doubles without a cap when the error
    /// carried response headers (64 s, 128 s, 256 s ...). Default:
    /// [`DEFAULT_MAX_DELAY_MS`].
    pub max_delay_ms: Option<u64>,
    /// The bound, in ms, on the time since the step's first attempt
    /// started: a retry whose wait would end after it is not made. `None`:
    /// no bound. Default: [`DEFAULT_MAX_ELAPSED_MS`].
    pub max_elapsed_ms: Option<u64>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: Some(DEFAULT_MAX_RETRIES),
            max_delay_ms: Some(DEFAULT_MAX_DELAY_MS),
            max_elapsed_ms: Some(DEFAULT_MAX_ELAPSED_MS),
        }
    }
}

/// A step's failed attempts so far, for [`RetryPolicy::plan`]. Times are
/// tokio's clock, so tests under a paused clock see the waits they made.
#[derive(Debug, Clone)]
pub struct RetryHistory {
    started: tokio::time::Instant,
    retries: u32,
    timeouts: u32,
}

impl RetryHistory {
    /// A history starting now, before the step's first attempt.
    pub fn start() -> Self {
        RetryHistory {
            started: tokio::time::Instant::now(),
            retries: 0,
            timeouts: 0,
        }
    }

    /// How many retries were planned so far.
    pub fn retries(&self) -> u32 {
        self.retries
    }

    /// Time since the step's first attempt started.
    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

impl Default for RetryHistory {
    fn default() -> Self {
        RetryHistory::start()
    }
}

/// A retry the loop is about to make.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RetryPlan {
    /// Why the error is worth retrying (opencode's message).
    pub info: RetryInfo,
    /// How long to wait first.
    pub wait: Duration,
    /// The retry number, from 1 (the attempt about to start is one more).
    pub retry: u32,
    /// How many attempts the policy allows in all, when it limits them.
    pub max_attempts: Option<u32>,
}

impl RetryPolicy {
    /// opencode's policy: unlimited retries, its own delay schedule, no
    /// time bound.
    pub fn unlimited() -> Self {
        RetryPolicy {
            max_retries: None,
            max_delay_ms: None,
            max_elapsed_ms: None,
        }
    }

    /// No retries at all.
    pub fn never() -> Self {
        RetryPolicy {
            max_retries: Some(0),
            ..RetryPolicy::default()
        }
    }

    /// This policy with another attempt limit (`None`: unlimited).
    pub fn with_max_retries(mut self, max_retries: Option<u32>) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Whether retry number `attempt` (from 1) is within the limit.
    pub fn allows(&self, attempt: u32) -> bool {
        self.max_retries.is_none_or(|max| attempt <= max)
    }

    /// The wait before retry number `attempt` (from 1), or `None` when the
    /// policy allows no such retry: what the server asked for, else
    /// opencode's backoff capped at `max_delay_ms`.
    pub fn delay(&self, attempt: u32, headers: Option<&Headers>) -> Option<Duration> {
        if !self.allows(attempt) {
            return None;
        }
        let ms = match headers.and_then(|h| server_delay(h, SystemTime::now())) {
            Some(asked) => asked,
            None => {
                let ours = delay(attempt, headers);
                self.max_delay_ms.map_or(ours, |cap| ours.min(cap))
            }
        };
        Some(Duration::from_millis(ms))
    }

    /// What to do about `error` on retry number `attempt` (from 1): the
    /// reason and the wait, or `None` to give up. Knows nothing of time
    /// spent; the loop uses [`RetryPolicy::plan`].
    pub fn next(&self, attempt: u32, error: &ModelError) -> Option<(RetryInfo, Duration)> {
        let info = retryable(error)?;
        let wait = self.delay(attempt, error.retry_headers())?;
        Some((info, wait))
    }

    /// Whether and when to retry after `error`, given the step's `history`
    /// (updated when a retry is planned). `Err` gives up, with a note for
    /// the user when a limit of this policy (rather than the kind of error)
    /// is why.
    ///
    /// Beyond [`RetryPolicy::next`]: a timeout is retried once per step, a
    /// server that cannot be reached only after an earlier attempt of the
    /// step failed otherwise (a server restarting during a backoff, not a
    /// wrong base URL), and no retry is made whose wait would end past
    /// `max_elapsed_ms`.
    pub fn plan(
        &self,
        history: &mut RetryHistory,
        error: &ModelError,
    ) -> Result<RetryPlan, Option<String>> {
        let attempts = history.retries + 1;
        let info = match error {
            ModelError::TimedOut { message } if history.timeouts == 0 => {
                RetryInfo::new(message.clone())
            }
            ModelError::TimedOut { .. } => {
                return Err(Some(format!(
                    "it timed out twice, so it was not retried again ({attempts} attempts)"
                )));
            }
            ModelError::Unreachable { message } if history.retries > 0 => {
                RetryInfo::new(message.clone())
            }
            other => retryable(other),
        };
        let Some(info) = info else {
            return Err(None);
        };
        let retry = history.retries + 1;
        let plural = if attempts == 1 { "" } else { "s" };
        let Some(wait) = self.delay(retry, error.retry_headers()) else {
            return Err(Some(format!(
                "gave up after {attempts} attempt{plural}; raise `retry.max_retries` in the \
                 config or pass --max-retries"
            )));
        };
        let elapsed = history.elapsed();
        if let Some(bound) = self.max_elapsed_ms.map(Duration::from_millis)
            && elapsed + wait > bound
        {
            return Err(Some(format!(
                "gave up after {attempts} attempt{plural} in {}: the next wait of {} would pass \
                 the retry time limit of {}; raise `retry.max_time` (milliseconds) in the config",
                seconds(elapsed),
                seconds(wait),
                seconds(bound),
            )));
        }
        history.retries = retry;
        if matches!(error, ModelError::TimedOut { .. }) {
            history.timeouts += 1;
        }
        Ok(RetryPlan {
            info,
            wait,
            retry,
            max_attempts: self.max_retries.map(|max| max.saturating_add(1)),
        })
    }

    /// Reads the config's `retry` key: `false` (no retries), `true` (the
    /// default), or an object with `max_retries` (a whole number, or `null`
    /// for no limit), `max_delay` and `max_time` (milliseconds, or `false`
    /// for no bound); fields left out keep their default. `path` names the
    /// key in messages.
    pub fn from_config(value: &Value, path: &str) -> Result<RetryPolicy, String> {
        let mut policy = RetryPolicy::default();
        let fields = match value {
            Value::Bool(false) => return Ok(RetryPolicy::never()),
            Value::Bool(true) | Value::Null => return Ok(policy),
            Value::Object(fields) => fields,
            other => {
                return Err(format!(
                    "{path}: expected false or an object with max_retries, max_delay, max_time; found {other}"
                ));
            }
        };
        const KEYS: &[&str] = &["max_retries", "max_delay", "max_time"];
        for (key, v) in fields {
            let at = format!("{path}.{key}");
            match key.as_str() {
                "max_retries" => {
                    policy.max_retries = match v {
                        Value::Null => None,
                        v => Some(v.as_u64().and_then(|n| u32::try_from(n).ok()).ok_or_else(
                            || format!("{at}: expected a whole number or null, found {v}"),
                        )?),
                    }
                }
                "max_delay" => policy.max_delay_ms = millis_or_off(v, &at)?,
                "max_time" => policy.max_elapsed_ms = millis_or_off(v, &at)?,
                other => {
                    let hint = crate::config::did_you_mean(other, KEYS)
                        .map(|k| format!("; did you mean {k:?}?"))
                        .unwrap_or_default();
                    return Err(format!(
                        "{at}: unknown key (known: {}){hint}",
                        KEYS.join(", ")
                    ));
                }
            }
        }
        Ok(policy)
    }
}

/// A whole number of milliseconds, or `false` for none.
fn millis_or_off(value: &Value, at: &str) -> Result<Option<u64>, String> {
    match value {
        Value::Bool(false) => Ok(None),
        v => v.as_u64().map(Some).ok_or_else(|| {
            format!("{at}: expected milliseconds (a whole number) or false, found {v}")
        }),
    }
}

/// A duration for messages: `4 s`, `1.5 s`, `2 min 30 s`.
pub fn seconds(duration: Duration) -> String {
    let ms = duration.as_millis();
    if ms >= 60_000 {
        let secs = ms / 1000;
        return match secs % 60 {
            0 => format!("{} min", secs / 60),
            rest => format!("{} min {rest} s", secs / 60),
        };
    }
    if ms.is_multiple_of(1000) {
        format!("{} s", ms / 1000)
    } else {
        format!("{:.1} s", ms as f64 / 1000.0)
    }
}

/// `error` with `note` added to its message (the gave-up explanation).
pub fn with_note(error: ModelError, note: &str) -> ModelError {
    let add = |message: String| format!("{message} ({note})");
    match error {
        ModelError::Api(mut api) => {
            api.message = add(api.message);
            ModelError::Api(api)
        }
        ModelError::Interrupted { message } => ModelError::interrupted(add(message)),
        ModelError::TimedOut { message } => ModelError::timed_out(add(message)),
        ModelError::Unreachable { message } => ModelError::unreachable(add(message)),
        ModelError::Other { message } => ModelError::other(add(message)),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_read_like_javascript_parse_float() {
        assert_eq!(parse_number("5"), Some(5.0));
        assert_eq!(parse_number(" 1.5 "), Some(1.5));
        assert_eq!(parse_number("5s"), Some(5.0));
        assert_eq!(parse_number(".5"), Some(0.5));
        assert_eq!(parse_number("2e3ms"), Some(2000.0));
        assert_eq!(parse_number("1e"), Some(1.0));
        assert_eq!(parse_number("Infinity"), Some(f64::INFINITY));
        assert_eq!(parse_number("-1"), Some(0.0));
        assert_eq!(parse_number("abc"), None);
        assert_eq!(parse_number("."), None);
        assert_eq!(parse_number("--1"), None);
        assert_eq!(parse_number(""), None);
    }

    #[test]
    fn retry_headers_are_found_whatever_their_case_and_form() {
        let now = UNIX_EPOCH + Duration::from_secs(784_111_767); // 1994-11-06 08:49:27 GMT
        let headers = |k: &str, v: &str| -> Headers {
            let mut h = Headers::new();
            h.insert(k.to_string(), v.to_string());
            h
        };
        assert_eq!(delay_at(1, Some(&headers("Retry-After", "3")), now), 3000);
        assert_eq!(delay_at(1, Some(&headers("retry-after", "5s")), now), 5000);
        assert_eq!(
            delay_at(1, Some(&headers("retry-after", "Infinity")), now),
            MAX_DELAY_MS
        );
        assert_eq!(delay_at(1, Some(&headers("retry-after-ms", "-5")), now), 0);
        let date = "Sun, 06 Nov 1994 08:49:37 UTC";
        assert_eq!(
            delay_at(1, Some(&headers("retry-after", date)), now),
            10_000
        );
        let date = "Sun, 06 Nov 1994 09:49:37 +0100";
        assert_eq!(
            delay_at(1, Some(&headers("retry-after", date)), now),
            10_000
        );
        let api = crate::error::ApiError {
            message: String::new(),
            status: Some(429),
            is_retryable: true,
            headers: Some(headers("Retry-After-Ms", "250")),
            body: None,
        };
        assert_eq!(api.retry_after_ms(), Some("250"));
    }

    #[test]
    fn http_dates() {
        let imf = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let rfc850 = parse_http_date("Sunday, 06-Nov-94 08:49:37 GMT").unwrap();
        let asctime = parse_http_date("Sun Nov  6 08:49:37 1994").unwrap();
        assert_eq!(
            imf.duration_since(UNIX_EPOCH).unwrap().as_secs(),
            784_111_777
        );
        assert_eq!(imf, rfc850);
        assert_eq!(imf, asctime);
        assert!(parse_http_date("Invalid Date String").is_none());
    }

    #[test]
    fn date_in_the_future_rounds_up() {
        let now = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT").unwrap();
        let headers = Headers::from([(
            "retry-after".to_string(),
            "Sun, 06 Nov 1994 08:50:07 GMT".to_string(),
        )]);
        assert_eq!(delay_at(1, Some(&headers), now), 30_000);
        let past = Headers::from([(
            "retry-after".to_string(),
            "Sun, 06 Nov 1994 08:00:00 GMT".to_string(),
        )]);
        assert_eq!(delay_at(3, Some(&past), now), 8_000);
    }

    #[test]
    fn policy_limits_attempts() {
        let policy = RetryPolicy::default().with_max_retries(Some(2));
        assert!(policy.delay(2, None).is_some());
        assert!(policy.delay(3, None).is_none());
        assert!(RetryPolicy::unlimited().delay(1000, None).is_some());
    }

    fn server_error() -> ModelError {
        ModelError::Api(crate::error::ApiError {
            message: "Internal Server Error".into(),
            status: Some(500),
            is_retryable: false,
            headers: Some(Headers::from([(
                "content-type".to_string(),
                "text/plain".to_string(),
            )])),
            body: None,
        })
    }

    /// The plans the default policy makes for `error` repeated until it
    /// gives up, with the clock advanced by each wait.
    async fn plans(error: &ModelError) -> (Vec<u64>, Option<String>) {
        let policy = RetryPolicy::default();
        let mut history = RetryHistory::start();
        let mut waits = Vec::new();
        loop {
            match policy.plan(&mut history, error) {
                Ok(plan) => {
                    assert_eq!(plan.retry as usize, waits.len() + 1);
                    assert_eq!(plan.max_attempts, Some(9));
                    waits.push(plan.wait.as_millis() as u64);
                    tokio::time::sleep(plan.wait).await;
                }
                Err(note) => return (waits, note),
            }
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_persistent_server_error_gives_up_after_150_s_of_waits() {
        // Headers but no retry-after: opencode's schedule would double
        // without a cap (64 s, 128 s, 256 s ...).
        let (waits, note) = plans(&server_error()).await;
        assert_eq!(
            waits,
            [2_000, 4_000, 8_000, 16_000, 30_000, 30_000, 30_000, 30_000]
        );
        let note = note.unwrap();
        assert!(note.contains("gave up after 9 attempts"), "{note}");
        assert!(note.contains("--max-retries"), "{note}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_long_retry_after_is_given_up_on_at_once() {
        let mut api = match server_error() {
            ModelError::Api(api) => api,
            _ => unreachable!(),
        };
        api.status = Some(429);
        api.is_retryable = true;
        api.headers = Some(Headers::from([(
            "retry-after".to_string(),
            "600".to_string(),
        )]));
        let (waits, note) = plans(&ModelError::Api(api)).await;
        assert!(waits.is_empty());
        let note = note.unwrap();
        assert!(note.contains("next wait of 10 min"), "{note}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_timeout_is_retried_once() {
        let (waits, note) = plans(&ModelError::timed_out("no data for 5 s")).await;
        assert_eq!(waits, [2_000]);
        assert!(note.unwrap().contains("timed out twice"));
    }

    #[tokio::test(start_paused = true)]
    async fn an_unreachable_server_is_retried_only_after_another_failure() {
        let policy = RetryPolicy::default();
        let refused = ModelError::unreachable("could not connect");
        assert_eq!(policy.plan(&mut RetryHistory::start(), &refused), Err(None));
        let mut history = RetryHistory::start();
        assert!(policy.plan(&mut history, &server_error()).is_ok());
        let plan = policy.plan(&mut history, &refused).unwrap();
        assert_eq!((plan.retry, plan.wait), (2, Duration::from_secs(4)));
    }

    #[test]
    fn the_config_key_reads_every_form() {
        let read = |v: Value| RetryPolicy::from_config(&v, "retry");
        assert_eq!(read(Value::Bool(false)).unwrap(), RetryPolicy::never());
        assert_eq!(read(Value::Bool(true)).unwrap(), RetryPolicy::default());
        let policy =
            read(serde_json::json!({"max_retries": 2, "max_delay": 5000, "max_time": false}))
                .unwrap();
        assert_eq!(
            policy,
            RetryPolicy {
                max_retries: Some(2),
                max_delay_ms: Some(5000),
                max_elapsed_ms: None,
            }
        );
        assert_eq!(
            read(serde_json::json!({"max_retries": null}))
                .unwrap()
                .max_retries,
            None
        );
        let error = read(serde_json::json!({"max_retrys": 2})).unwrap_err();
        assert!(error.contains("did you mean \"max_retries\""), "{error}");
        assert!(read(serde_json::json!({"max_delay": "5s"})).is_err());
        assert!(read(serde_json::json!(3)).is_err());
        // Serialised policies missing a field keep its default.
        let partial: RetryPolicy = serde_json::from_str(r#"{"max_retries": 2}"#).unwrap();
        assert_eq!(partial, RetryPolicy::default().with_max_retries(Some(2)));
    }

    #[test]
    fn durations_read_naturally() {
        assert_eq!(seconds(Duration::from_secs(4)), "4 s");
        assert_eq!(seconds(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(seconds(Duration::from_secs(150)), "2 min 30 s");
        assert_eq!(seconds(Duration::from_secs(600)), "10 min");
    }
}
