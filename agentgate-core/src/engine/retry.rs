//! When and how long to wait before retrying a failed model stream (§13).
//!
//! [`retryable`] and [`delay`] are opencode's functions, exactly; the
//! [`RetryPolicy`] adds what opencode lacks, an attempt limit.
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
        ModelError::Interrupted { message } => RetryInfo::new(message.clone()),
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
    if let Some(ms) = header_in(headers, "retry-after-ms").and_then(parse_number) {
        return cap(ms);
    }
    if let Some(value) = header_in(headers, "retry-after") {
        if let Some(seconds) = parse_number(value) {
            return cap(seconds * 1000.0);
        }
        if let Some(date) = parse_http_date(value)
            && let Ok(ahead) = date.duration_since(now)
            && !ahead.is_zero()
        {
            return cap(ahead.as_secs_f64() * 1000.0);
        }
    }
    backoff.min(MAX_DELAY_MS)
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

/// How the loop retries failed streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct RetryPolicy {
    /// How many retries (after the first attempt) a step may make; `None`
    /// retries forever as opencode does. Default: 8 (about 2.5 minutes of
    /// backoff without server hints) — a documented deviation, so that a
    /// provider that stays down does not hang a non-interactive run.
    pub max_retries: Option<u32>,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        RetryPolicy {
            max_retries: Some(8),
        }
    }
}

impl RetryPolicy {
    /// opencode's policy: unlimited retries.
    pub fn unlimited() -> Self {
        RetryPolicy { max_retries: None }
    }

    /// No retries at all.
    pub fn never() -> Self {
        RetryPolicy {
            max_retries: Some(0),
        }
    }

    /// Whether retry number `attempt` (from 1) is within the limit.
    pub fn allows(&self, attempt: u32) -> bool {
        self.max_retries.is_none_or(|max| attempt <= max)
    }

    /// The wait before retry number `attempt` (from 1), or `None` when the
    /// policy allows no such retry.
    pub fn delay(&self, attempt: u32, headers: Option<&Headers>) -> Option<Duration> {
        self.allows(attempt)
            .then(|| Duration::from_millis(delay(attempt, headers)))
    }

    /// What to do about `error` on retry number `attempt` (from 1): the
    /// reason and the wait, or `None` to give up.
    pub fn next(&self, attempt: u32, error: &ModelError) -> Option<(RetryInfo, Duration)> {
        let info = retryable(error)?;
        let wait = self.delay(attempt, error.retry_headers())?;
        Some((info, wait))
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
        let policy = RetryPolicy {
            max_retries: Some(2),
        };
        assert!(policy.delay(2, None).is_some());
        assert!(policy.delay(3, None).is_none());
        assert!(RetryPolicy::unlimited().delay(1000, None).is_some());
    }
}
