//! What the run's property tests share: how many generated sequences each
//! checks (`PROPTEST_CASES`, default 1,000), none of a failure persisted.

use proptest::test_runner::Config;

/// The proptest config of a property over generated edit sequences.
pub(super) fn config() -> Config {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1_000);
    Config {
        cases,
        failure_persistence: None,
        ..Config::default()
    }
}
