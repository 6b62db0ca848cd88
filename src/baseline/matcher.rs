//! One-to-one matching of today's violations against remembered ones, in
//! tiers from strict to loose, as a multiset: two identical findings where
//! the baseline held one are one known and one new.

use rustc_hash::FxHashMap;

use serde::{Deserialize, Serialize};

/// A violation as it is remembered and compared.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub(crate) struct Entry {
    /// Root-relative path (`""` for a finding that belongs to no file).
    pub(crate) path: String,
    /// Gate id.
    pub(crate) gate: String,
    /// Rule code (`""` when the tool gives none).
    #[serde(default)]
    pub(crate) code: String,
    /// Normalized message (see `fingerprint::normalize_message`).
    pub(crate) message: String,
    /// Hash of the flagged line without whitespace (`""`: file-level).
    #[serde(default)]
    pub(crate) line_hash: String,
    /// The line it was on when recorded: a value, never part of the
    /// identity; only the last tier uses it, carried through the diff.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) line: Option<u64>,
}

/// What the matcher compares, borrowed: a remembered [`Entry`] or a
/// violation of this run (which need not be copied into one).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Parts<'a> {
    /// Gate id.
    pub(crate) gate: &'a str,
    /// Root-relative path.
    pub(crate) path: &'a str,
    /// Rule code.
    pub(crate) code: &'a str,
    /// Hash of the flagged line.
    pub(crate) line_hash: &'a str,
    /// Normalized message.
    pub(crate) message: &'a str,
    /// Line, if any.
    pub(crate) line: Option<u64>,
}

/// Anything the matcher can compare.
pub(crate) trait Comparable {
    /// The identity parts.
    fn parts(&self) -> Parts<'_>;
}

impl Comparable for Entry {
    fn parts(&self) -> Parts<'_> {
        Parts {
            gate: &self.gate,
            path: &self.path,
            code: &self.code,
            line_hash: &self.line_hash,
            message: &self.message,
            line: self.line,
        }
    }
}

impl Comparable for Parts<'_> {
    fn parts(&self) -> Parts<'_> {
        *self
    }
}

impl<T: Comparable + Clone> Comparable for std::borrow::Cow<'_, T> {
    fn parts(&self) -> Parts<'_> {
        self.as_ref().parts()
    }
}

/// How a current violation was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tier {
    /// Same rule, line content and message.
    Exact,
    /// Same rule and line content, another message: the tool reworded it.
    Reworded,
    /// Same rule and message near where the remembered line went: the
    /// flagged line itself was edited.
    Moved,
}

/// The result of matching.
#[derive(Debug, Clone, Default)]
pub(crate) struct Matching {
    /// For each current entry: the remembered entry it matched, and how.
    pub(crate) matched: Vec<Option<(usize, Tier)>>,
    /// Remembered entries no current one matched (fixed, or out of reach).
    pub(crate) unmatched: Vec<usize>,
}

impl Matching {
    /// Current entries matched in `tier`.
    pub(crate) fn count(&self, tier: Tier) -> usize {
        self.matched
            .iter()
            .filter(|m| m.is_some_and(|(_, t)| t == tier))
            .count()
    }
}

/// How far (in lines) beyond the range a remembered line maps to a
/// finding of the same rule and message may sit and still be the same one.
const NEAR: u64 = 2;

/// Matches `current` against `remembered`. `near` gives, for the index of
/// a remembered entry, the range of current lines its line maps to (through the diff
/// of its file); `None` means its own line.
pub(crate) fn match_entries<R: Comparable, C: Comparable>(
    remembered: &[R],
    current: &[C],
    rewording: Rewording,
    near: &mut dyn FnMut(usize) -> Option<(u64, u64)>,
) -> Matching {
    let mut matched: Vec<Option<(usize, Tier)>> = vec![None; current.len()];
    let mut taken = vec![false; remembered.len()];
    pair_by_key(
        remembered,
        current,
        &mut taken,
        &mut matched,
        Tier::Exact,
        exact_key,
    );
    if rewording == Rewording::Matched {
        pair_by_key(
            remembered,
            current,
            &mut taken,
            &mut matched,
            Tier::Reworded,
            reworded_key,
        );
    }
    pair_nearby(remembered, current, &mut taken, &mut matched, near);
    let unmatched = (0..remembered.len()).filter(|i| !taken[*i]).collect();
    Matching { matched, unmatched }
}

/// Whether a finding whose message alone changed (same gate, file, rule
/// and line) is the remembered one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rewording {
    /// Yes: the tool changed since the baseline was written (or which
    /// version wrote it is unknown), and tools reword between versions.
    Matched,
    /// No: the same tool gives another message at an unchanged line only
    /// when the finding changed (an upstream edit changed its types) —
    /// a new finding, never a known one.
    New,
}

/// Gate, path, rule, line hash, message — borrowed, so a large baseline
/// is matched without copying its strings.
/// Inclusive range of current lines a remembered line maps to.
type LineRange = (u64, u64);

type Key<'a> = (&'a str, &'a str, &'a str, &'a str, &'a str);

fn exact_key(e: Parts<'_>) -> Key<'_> {
    (e.gate, e.path, e.code, e.line_hash, e.message)
}

fn reworded_key(e: Parts<'_>) -> Key<'_> {
    (e.gate, e.path, e.code, e.line_hash, "")
}

fn nearby_key(e: Parts<'_>) -> Key<'_> {
    (e.gate, e.path, e.code, "", e.message)
}

/// Pairs untaken entries with equal keys, in order (so the first of two
/// identical current findings takes the first remembered one).
fn pair_by_key<'a, R: Comparable, C: Comparable>(
    remembered: &'a [R],
    current: &'a [C],
    taken: &mut [bool],
    matched: &mut [Option<(usize, Tier)>],
    tier: Tier,
    key: fn(Parts<'_>) -> Key<'_>,
) {
    // Entries sharing a key form a chain through `next`, first index at
    // the head: no allocation per key, however large the baseline.
    const END: usize = usize::MAX;
    let open = (0..remembered.len()).filter(|i| !taken[*i]).count();
    if open == 0 {
        return;
    }
    let mut heads: FxHashMap<Key<'a>, usize> =
        FxHashMap::with_capacity_and_hasher(open, Default::default());
    let mut next = vec![END; remembered.len()];
    for (i, entry) in remembered.iter().enumerate().rev() {
        if !taken[i] {
            let head = heads.entry(key(entry.parts())).or_insert(END);
            next[i] = *head;
            *head = i;
        }
    }
    for (j, entry) in current.iter().enumerate() {
        if matched[j].is_some() {
            continue;
        }
        if let Some(head) = heads.get_mut(&key(entry.parts())) {
            if *head != END {
                let i = *head;
                *head = next[i];
                taken[i] = true;
                matched[j] = Some((i, tier));
            }
        }
    }
}

/// The last tier: same gate, path, rule and message, the current line
/// within [`NEAR`] lines of where the remembered line went; nearest first.
fn pair_nearby<'a, R: Comparable, C: Comparable>(
    remembered: &'a [R],
    current: &'a [C],
    taken: &mut [bool],
    matched: &mut [Option<(usize, Tier)>],
    near: &mut dyn FnMut(usize) -> Option<(u64, u64)>,
) {
    let key = nearby_key;
    let mut pool: FxHashMap<Key<'a>, Vec<(usize, LineRange)>> = FxHashMap::default();
    for (i, entry) in remembered.iter().enumerate() {
        if taken[i] {
            continue;
        }
        let entry = entry.parts();
        let Some(line) = entry.line else { continue };
        let range = near(i).unwrap_or((line, line));
        pool.entry(key(entry)).or_default().push((i, range));
    }
    if pool.is_empty() {
        return;
    }
    for (j, entry) in current.iter().enumerate() {
        let entry = entry.parts();
        let (None, Some(line)) = (matched[j], entry.line) else {
            continue;
        };
        let Some(candidates) = pool.get_mut(&key(entry)) else {
            continue;
        };
        let distance = |(lo, hi): (u64, u64)| {
            if line < lo {
                lo - line
            } else {
                line.saturating_sub(hi)
            }
        };
        let best = candidates
            .iter()
            .enumerate()
            .filter(|(_, (_, range))| distance(*range) <= NEAR)
            .min_by_key(|(_, (_, range))| distance(*range))
            .map(|(k, _)| k);
        if let Some(k) = best {
            let (i, _) = candidates.swap_remove(k);
            taken[i] = true;
            matched[j] = Some((i, Tier::Moved));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(code: &str, line_hash: &str, message: &str, line: u64) -> Entry {
        Entry {
            path: "a.py".into(),
            gate: "lint".into(),
            code: code.into(),
            message: message.into(),
            line_hash: line_hash.into(),
            line: Some(line),
        }
    }

    fn run(old: &[Entry], new: &[Entry]) -> Matching {
        match_entries(old, new, Rewording::Matched, &mut |_| None)
    }

    #[test]
    fn shifted_lines_still_match_exactly() {
        let old = [entry("F401", "h1", "os unused", 3)];
        let new = [entry("F401", "h1", "os unused", 13)];
        let m = run(&old, &new);
        assert_eq!(m.matched, [Some((0, Tier::Exact))]);
        assert!(m.unmatched.is_empty());
    }

    #[test]
    fn a_duplicate_of_a_known_finding_is_one_new() {
        let old = [entry("F401", "h1", "os unused", 3)];
        let new = [
            entry("F401", "h1", "os unused", 3),
            entry("F401", "h1", "os unused", 9),
        ];
        let m = run(&old, &new);
        assert_eq!(m.matched.iter().filter(|x| x.is_none()).count(), 1);
    }

    #[test]
    fn a_reworded_message_matches_by_line_content() {
        let old = [entry("E1", "h1", "old words", 3)];
        let new = [entry("E1", "h1", "new words", 30)];
        assert_eq!(run(&old, &new).matched, [Some((0, Tier::Reworded))]);
    }

    #[test]
    fn an_edited_line_matches_by_message_only_nearby() {
        let old = [entry("E1", "h1", "msg", 10)];
        let near = [entry("E1", "h2", "msg", 11)];
        assert_eq!(run(&old, &near).matched, [Some((0, Tier::Moved))]);
        let far = [entry("E1", "h2", "msg", 40)];
        assert_eq!(run(&old, &far).matched, [None]);
        assert_eq!(run(&old, &far).unmatched, [0]);
        // Carried through the diff: line 10 became 38..=39.
        let carried = match_entries(&old, &far, Rewording::Matched, &mut |_| Some((38, 39)));
        assert_eq!(carried.matched, [Some((0, Tier::Moved))]);
    }

    #[test]
    fn other_rules_never_match() {
        let old = [entry("E1", "h1", "msg", 10)];
        let new = [entry("E2", "h1", "msg", 10)];
        assert_eq!(run(&old, &new).matched, [None]);
    }
}

#[cfg(test)]
mod properties {
    use proptest::prelude::*;

    use super::*;

    /// Small alphabets, so that collisions (the hard cases) are common.
    fn entries() -> impl Strategy<Value = Vec<Entry>> {
        prop::collection::vec(
            ("[ab]", "[xy]", "[12]", "[pq]", 1u64..40).prop_map(
                |(path, code, hash, message, line)| Entry {
                    path: format!("{path}.py"),
                    gate: "g".into(),
                    code,
                    message,
                    line_hash: hash,
                    line: Some(line),
                },
            ),
            0..40,
        )
    }

    fn check_one_to_one(m: &Matching, remembered: usize) {
        let used: Vec<usize> = m.matched.iter().flatten().map(|(i, _)| *i).collect();
        let unique: std::collections::BTreeSet<usize> = used.iter().copied().collect();
        assert_eq!(used.len(), unique.len(), "a remembered entry matched twice");
        assert_eq!(used.len() + m.unmatched.len(), remembered);
        assert!(m.unmatched.iter().all(|i| !unique.contains(i)));
    }

    proptest! {
        #[test]
        fn matching_is_one_to_one(old in entries(), new in entries()) {
            let m = match_entries(&old, &new, Rewording::Matched, &mut |_| None);
            check_one_to_one(&m, old.len());
            // Never set semantics: more current findings than remembered ones
            // leave at least the surplus new.
            let new_count = m.matched.iter().filter(|x| x.is_none()).count();
            prop_assert!(new_count >= new.len().saturating_sub(old.len()));
        }

        #[test]
        fn shifted_and_shuffled_findings_all_match_exactly(
            old in entries(), shift in 0u64..100, seed in any::<u64>()
        ) {
            let mut new: Vec<Entry> = old
                .iter()
                .map(|e| Entry { line: e.line.map(|l| l + shift), ..e.clone() })
                .collect();
            // A deterministic shuffle: functions moved around.
            let len = new.len();
            for i in (1..len).rev() {
                new.swap(i, (seed.wrapping_mul(i as u64 + 7) % (i as u64 + 1)) as usize);
            }
            let m = match_entries(&old, &new, Rewording::Matched, &mut |_| None);
            prop_assert!(m.matched.iter().all(|x| matches!(x, Some((_, Tier::Exact)))));
            prop_assert!(m.unmatched.is_empty());
        }

        #[test]
        fn each_added_copy_is_exactly_one_new(old in entries(), copies in 1usize..5) {
            prop_assume!(!old.is_empty());
            let mut new = old.clone();
            for _ in 0..copies {
                new.push(old[0].clone());
            }
            let m = match_entries(&old, &new, Rewording::Matched, &mut |_| None);
            prop_assert_eq!(m.matched.iter().filter(|x| x.is_none()).count(), copies);
            prop_assert!(m.unmatched.is_empty());
        }
    }
}
