//! Sampling values as the user wrote them: [`exact`].

/// The `f64` a user meant by this `f32` (`0.3`, not the widened
/// `0.30000001192092896`): the shortest decimal that reads back as the same
/// `f32`, read as `f64`. The request types carry `f32`; the APIs take JSON
/// numbers, where the widening would show.
pub(crate) fn exact(value: f32) -> f64 {
    value.to_string().parse::<f64>().unwrap_or(f64::from(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_survive() {
        assert_eq!(exact(0.3), 0.3);
        assert_eq!(exact(0.7), 0.7);
        assert_eq!(exact(1.0), 1.0);
        assert_eq!(
            serde_json::to_string(&exact(0.3)).ok().as_deref(),
            Some("0.3")
        );
        assert_ne!(f64::from(0.3f32), 0.3);
    }
}
