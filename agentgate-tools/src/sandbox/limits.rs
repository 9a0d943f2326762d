//! The ceilings of one sandboxed call: how many processes (threads
//! included) it may run at once and how much memory it may use. This is
//! the `sandbox.limits` configuration key; the kernel side is `cgroup`
//! (a cgroup leaf per call) or, where none can be made, resource limits
//! set in the command before exec.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The process ceiling when the configuration names none: far above
/// what a build or test run starts (a `cargo build` of this repository
/// peaks near 40 tasks on two cores; see `docs/sandbox.md`), far below
/// what stalls a machine.
pub const DEFAULT_PROCESSES: u64 = 4096;

/// The memory ceiling when the configuration names none is this share
/// (numerator, denominator) of the machine's memory, so one runaway
/// command leaves the rest to the agent and the host.
pub const DEFAULT_MEMORY_SHARE: (u64, u64) = (3, 4);

/// Where the machine's memory cannot be read, the default ceiling.
const FALLBACK_MEMORY: u64 = 8 << 30;

/// One ceiling as configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
#[non_exhaustive]
pub enum Ceiling {
    /// Not configured: the default applies.
    #[default]
    Default,
    /// `"unlimited"`: no ceiling.
    Unlimited,
    /// At most this many (processes, or bytes).
    At(u64),
}

impl Ceiling {
    /// Whether this is [`Ceiling::Default`].
    pub fn is_default(&self) -> bool {
        *self == Ceiling::Default
    }
}

/// A `sandbox.limits` value that is not a ceiling.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid `{key}` value `{value}`: {expected}")]
pub struct InvalidLimit {
    /// The configuration key (`sandbox.limits.processes`).
    pub key: &'static str,
    /// The value as written.
    pub value: String,
    /// What the key takes.
    pub expected: &'static str,
}

/// The `sandbox.limits` key: the ceilings of each sandboxed call.
///
/// ```json
/// {"sandbox": {"limits": {"processes": 4096, "memory": "8GiB"}}}
/// ```
///
/// A call that reaches one is ended, and the bash tool's output names the
/// ceiling and this key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SandboxLimits {
    /// How many processes and threads the call may run at once: a number
    /// of at least 1, or `"unlimited"`; default [`DEFAULT_PROCESSES`].
    #[serde(
        serialize_with = "serialize_ceiling",
        deserialize_with = "deserialize_processes",
        skip_serializing_if = "Ceiling::is_default"
    )]
    pub processes: Ceiling,
    /// How much memory the call may use: bytes, or a size such as
    /// `"512MiB"` or `"4GiB"` (`KiB`, `MiB`, `GiB`, `TiB`; `K`, `M`, `G`, `T`
    /// are the same binary units), or `"unlimited"`; default three quarters
    /// of the machine's memory.
    #[serde(
        serialize_with = "serialize_ceiling",
        deserialize_with = "deserialize_memory",
        skip_serializing_if = "Ceiling::is_default"
    )]
    pub memory: Ceiling,
}

/// The key names, for messages.
pub(crate) const PROCESSES_KEY: &str = "sandbox.limits.processes";
/// The key names, for messages.
pub(crate) const MEMORY_KEY: &str = "sandbox.limits.memory";

const PROCESSES_EXPECTED: &str = "write a number of processes of at least 1, or \"unlimited\"";
const MEMORY_EXPECTED: &str =
    "write a size such as \"512MiB\" or \"4GiB\", a number of bytes, or \"unlimited\"";

impl SandboxLimits {
    /// Sets the process ceiling.
    pub fn with_processes(mut self, processes: Ceiling) -> Self {
        self.processes = processes;
        self
    }

    /// Sets the memory ceiling.
    pub fn with_memory(mut self, memory: Ceiling) -> Self {
        self.memory = memory;
        self
    }

    /// The process ceiling in effect (`None`: unlimited).
    pub fn processes_max(&self) -> Option<u64> {
        match self.processes {
            Ceiling::Default => Some(DEFAULT_PROCESSES),
            Ceiling::Unlimited => None,
            Ceiling::At(n) => Some(n),
        }
    }

    /// The memory ceiling in effect, in bytes (`None`: unlimited).
    pub fn memory_max(&self) -> Option<u64> {
        match self.memory {
            Ceiling::Default => Some(default_memory()),
            Ceiling::Unlimited => None,
            Ceiling::At(n) => Some(n),
        }
    }
}

/// Parses a `sandbox.limits.processes` value written as text.
pub fn parse_processes(text: &str) -> Result<Ceiling, InvalidLimit> {
    let invalid = || InvalidLimit {
        key: PROCESSES_KEY,
        value: text.to_string(),
        expected: PROCESSES_EXPECTED,
    };
    match text.trim() {
        "unlimited" => Ok(Ceiling::Unlimited),
        digits => match digits.parse::<u64>() {
            Ok(n) if n >= 1 => Ok(Ceiling::At(n)),
            _ => Err(invalid()),
        },
    }
}

/// The binary units a memory size may end with, longest first.
const UNITS: &[(&str, u32)] = &[
    ("KiB", 10),
    ("MiB", 20),
    ("GiB", 30),
    ("TiB", 40),
    ("K", 10),
    ("M", 20),
    ("G", 30),
    ("T", 40),
    ("B", 0),
];

/// Parses a `sandbox.limits.memory` value written as text: `"4GiB"`,
/// `"512M"`, `"1048576"`, `"unlimited"`. At least one page (4 KiB).
pub fn parse_memory(text: &str) -> Result<Ceiling, InvalidLimit> {
    let invalid = || InvalidLimit {
        key: MEMORY_KEY,
        value: text.to_string(),
        expected: MEMORY_EXPECTED,
    };
    let trimmed = text.trim();
    if trimmed == "unlimited" {
        return Ok(Ceiling::Unlimited);
    }
    let (number, shift) = UNITS
        .iter()
        .find_map(|(unit, shift)| trimmed.strip_suffix(unit).map(|n| (n.trim(), *shift)))
        .unwrap_or((trimmed, 0));
    let bytes = number
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(1u64 << shift))
        .filter(|bytes| *bytes >= 4096)
        .ok_or_else(invalid)?;
    Ok(Ceiling::At(bytes))
}

/// A ceiling as written in configuration: a number, or text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Written {
    Number(u64),
    Text(String),
}

fn deserialize_processes<'de, D: Deserializer<'de>>(de: D) -> Result<Ceiling, D::Error> {
    let parsed = match Written::deserialize(de) {
        Ok(Written::Number(n)) => parse_processes(&n.to_string()),
        Ok(Written::Text(text)) => parse_processes(&text),
        Err(_) => parse_processes("(not a number or text)"),
    };
    parsed.map_err(serde::de::Error::custom)
}

fn deserialize_memory<'de, D: Deserializer<'de>>(de: D) -> Result<Ceiling, D::Error> {
    let parsed = match Written::deserialize(de) {
        Ok(Written::Number(n)) => parse_memory(&n.to_string()),
        Ok(Written::Text(text)) => parse_memory(&text),
        Err(_) => parse_memory("(not a number or text)"),
    };
    parsed.map_err(serde::de::Error::custom)
}

fn serialize_ceiling<S: Serializer>(ceiling: &Ceiling, ser: S) -> Result<S::Ok, S::Error> {
    match ceiling {
        Ceiling::Default => ser.serialize_none(),
        Ceiling::Unlimited => ser.serialize_str("unlimited"),
        Ceiling::At(n) => ser.serialize_u64(*n),
    }
}

/// [`DEFAULT_MEMORY_SHARE`] of the machine's memory (`MemTotal` of
/// `/proc/meminfo`), read once.
fn default_memory() -> u64 {
    static MEMORY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *MEMORY.get_or_init(|| {
        let total = std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|text| mem_total(&text))
            .unwrap_or(FALLBACK_MEMORY / 3 * 4);
        total / DEFAULT_MEMORY_SHARE.1 * DEFAULT_MEMORY_SHARE.0
    })
}

/// `MemTotal:  24684432 kB` → bytes.
fn mem_total(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib = line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    kib.checked_mul(1024)
}

/// The size in the units a person reads (`64 MiB`, `3.5 GiB`).
pub(crate) fn human_bytes(bytes: u64) -> String {
    const STEPS: [(&str, u32); 4] = [("TiB", 40), ("GiB", 30), ("MiB", 20), ("KiB", 10)];
    for (unit, shift) in STEPS {
        let size = 1u64 << shift;
        if bytes >= size {
            let whole = bytes / size;
            let tenths = (bytes % size) * 10 / size;
            return match tenths {
                0 => format!("{whole} {unit}"),
                t => format!("{whole}.{t} {unit}"),
            };
        }
    }
    format!("{bytes} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_in_binary_units() {
        for (text, bytes) in [
            ("4GiB", 4u64 << 30),
            ("4G", 4 << 30),
            ("64 MiB", 64 << 20),
            ("512M", 512 << 20),
            ("1048576", 1 << 20),
            ("8KiB", 8 << 10),
            ("1TiB", 1 << 40),
            ("4096B", 4096),
        ] {
            assert_eq!(parse_memory(text), Ok(Ceiling::At(bytes)), "{text}");
        }
        assert_eq!(parse_memory("unlimited"), Ok(Ceiling::Unlimited));
        for bad in ["", "4XB", "-1G", "1.5G", "100", "99999999999T", "GiB"] {
            let error = parse_memory(bad).unwrap_err();
            assert_eq!(error.key, MEMORY_KEY, "{bad}");
        }
    }

    #[test]
    fn processes_parse_and_refuse_zero() {
        assert_eq!(parse_processes("32"), Ok(Ceiling::At(32)));
        assert_eq!(parse_processes("unlimited"), Ok(Ceiling::Unlimited));
        for bad in ["0", "-3", "many", ""] {
            assert_eq!(parse_processes(bad).unwrap_err().key, PROCESSES_KEY);
        }
    }

    #[test]
    fn the_config_key_names_itself_when_invalid() {
        let ok: SandboxLimits =
            serde_json::from_value(serde_json::json!({"processes": 32, "memory": "64MiB"}))
                .unwrap();
        assert_eq!(ok.processes_max(), Some(32));
        assert_eq!(ok.memory_max(), Some(64 << 20));
        let error = serde_json::from_value::<SandboxLimits>(serde_json::json!({"memory": "4XB"}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("sandbox.limits.memory"), "{error}");
        let error = serde_json::from_value::<SandboxLimits>(serde_json::json!({"processes": 0}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("sandbox.limits.processes"), "{error}");
        let error = serde_json::from_value::<SandboxLimits>(serde_json::json!({"processes": [1]}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("sandbox.limits.processes"), "{error}");
        let error = serde_json::from_value::<SandboxLimits>(serde_json::json!({"procs": 1}))
            .unwrap_err()
            .to_string();
        assert!(error.contains("procs"), "{error}");
    }

    #[test]
    fn defaults_apply_when_unset_and_round_trip() {
        let limits = SandboxLimits::default();
        assert_eq!(limits.processes_max(), Some(DEFAULT_PROCESSES));
        assert!(limits.memory_max().is_some_and(|m| m >= 1 << 20));
        let unlimited = SandboxLimits::default()
            .with_processes(Ceiling::Unlimited)
            .with_memory(Ceiling::At(1 << 30));
        let json = serde_json::to_value(unlimited).unwrap();
        assert_eq!(
            json,
            serde_json::json!({"processes": "unlimited", "memory": 1073741824u64})
        );
        assert_eq!(
            serde_json::from_value::<SandboxLimits>(json).unwrap(),
            unlimited
        );
        let json = serde_json::to_value(SandboxLimits::default()).unwrap();
        assert_eq!(
            serde_json::from_value::<SandboxLimits>(json).unwrap(),
            SandboxLimits::default()
        );
    }

    #[test]
    fn meminfo_and_human_sizes() {
        assert_eq!(
            mem_total("MemTotal:       24684432 kB\nMemFree: 1 kB\n"),
            Some(24684432 * 1024)
        );
        assert_eq!(mem_total("nothing"), None);
        assert_eq!(human_bytes(64 << 20), "64 MiB");
        assert_eq!(human_bytes((7 << 29) + 1), "3.5 GiB");
        assert_eq!(human_bytes(100), "100 bytes");
    }
}
