//! A type checker that cannot see the project's dependencies: most of its
//! findings are unresolved imports, and the run says so.

use super::result::GateResult;

/// Most findings are unresolved imports when at least this many are and
/// they outnumber the rest: one import of a typo is not an environment.
const UNRESOLVED_IMPORTS_AT_LEAST: usize = 3;

/// How many of the gate's findings carry one of `codes`.
pub(crate) fn count_unresolved_imports(result: &GateResult, codes: &[String]) -> usize {
    result
        .violations
        .iter()
        .filter(|v| v.code.as_ref().is_some_and(|c| codes.contains(c)))
        .count()
}

/// Whether `unresolved` of `total` findings is "mostly unresolved imports".
pub(crate) fn mostly_unresolved(unresolved: usize, total: usize) -> bool {
    unresolved >= UNRESOLVED_IMPORTS_AT_LEAST && unresolved * 2 > total
}

/// Warns when most of a gate's findings say an import cannot be resolved:
/// the tool does not see the project's dependencies, and its other
/// findings are mostly their echo. The `advice` is asked for only then
/// (it reads the environment: not a cost for every run).
pub(crate) fn advise_on_unresolved_imports(
    result: &mut GateResult,
    codes: &[String],
    advice: impl FnOnce() -> String,
) {
    let unresolved = count_unresolved_imports(result, codes);
    let total = result.violations.len();
    if mostly_unresolved(unresolved, total) {
        let advice = advice();
        result.warnings.push(format!(
            "{unresolved} of {total} findings are unresolved imports: {advice}"
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mostly_unresolved_means_at_least_three_and_more_than_half() {
        assert!(mostly_unresolved(3, 5));
        assert!(mostly_unresolved(3, 3));
        assert!(!mostly_unresolved(3, 6), "half is not more than half");
        assert!(
            !mostly_unresolved(2, 2),
            "two imports are not an environment"
        );
        assert!(!mostly_unresolved(0, 0));
        assert!(mostly_unresolved(153, 229));
    }
}
