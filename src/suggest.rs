//! "Did you mean …?" for unknown keys, gate ids and variants.

/// The candidate closest to `input`, if it is close enough to be a likely typo.
pub(crate) fn did_you_mean<'a, I>(input: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    candidates
        .into_iter()
        .map(|candidate| (strsim::jaro_winkler(input, candidate), candidate))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, candidate)| candidate)
}

/// A sentence naming the fix: "did you mean `x`?" or the list of valid choices.
pub(crate) fn hint(input: &str, candidates: &[&str]) -> String {
    match did_you_mean(input, candidates.iter().copied()) {
        Some(best) => format!("did you mean `{best}`?"),
        None if candidates.is_empty() => String::new(),
        None => {
            let quoted: Vec<String> = candidates.iter().map(|c| format!("`{c}`")).collect();
            format!("expected one of {}", quoted.join(", "))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(
            did_you_mean("fial_on", ["fail_on", "exit_codes_ok"]),
            Some("fail_on")
        );
        assert_eq!(did_you_mean("zzz", ["fail_on"]), None);
        assert_eq!(
            hint("pyrigt", &["pyright", "mypy"]),
            "did you mean `pyright`?"
        );
        assert_eq!(hint("zzz", &["a", "b"]), "expected one of `a`, `b`");
    }
}
