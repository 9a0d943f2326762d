//! Placeholder: filled by the approval-gate work (issue 3).
