//! [`CompactionSettings`]: when and how the engine compacts (§14).

use serde::{Deserialize, Serialize};

/// opencode's output budget cap (`OUTPUT_TOKEN_MAX`).
pub const OUTPUT_TOKEN_MAX: u64 = 32_000;

/// Overflow detection and compaction settings (§14).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct CompactionSettings {
    /// Detect overflow at all (`compaction.auto`, default true).
    pub auto: bool,
    /// Tokens kept free below an input limit (`compaction.reserved`);
    /// default `min(20000, max_output)`.
    pub reserved: Option<u64>,
    /// The output budget cap, default 32 000 (opencode's `OUTPUT_TOKEN_MAX`).
    pub output_token_max: u64,
    /// How many recent user turns compaction keeps verbatim when they fit
    /// the preserve budget (`compaction.tail_turns`, default 2).
    pub tail_turns: u32,
    /// Token budget of the kept tail (`compaction.preserve_recent_tokens`);
    /// default `clamp(usable / 4, 2000, 8000)`.
    pub preserve_recent_tokens: Option<u64>,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        CompactionSettings {
            auto: true,
            reserved: None,
            output_token_max: OUTPUT_TOKEN_MAX,
            tail_turns: 2,
            preserve_recent_tokens: None,
        }
    }
}
