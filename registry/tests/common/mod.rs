//! What the golden tests against Java share: reading a golden file of one JSON line per case,
//! running the checks on every case, and failing once with every disagreement (and every known
//! difference that has started agreeing), as line diffs.

use std::fmt::Write as _;

/// A check that failed: its name (`avro_schema`, `hex`, ...) and what differs.
pub type Failure = (&'static str, String);

/// Runs `check` on every case of `tests/golden/registry/<file>` (at least `min_cases`) and fails
/// with every failure not in `known` (`(case, check, why)`), and every known difference that no
/// longer differs.
pub fn run_golden<C>(
    file: &str,
    min_cases: usize,
    parse: impl Fn(&str) -> C,
    name: impl Fn(&C) -> &str,
    check: impl Fn(&C) -> Vec<Failure>,
    known: &[(&str, &str, &str)],
) {
    let path = format!(
        "{}/../tests/golden/registry/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let cases: Vec<C> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(&parse)
        .collect();
    assert!(
        cases.len() >= min_cases,
        "only {} cases in {path}",
        cases.len()
    );

    let mut report = String::new();
    let mut failed = 0;
    for case in &cases {
        let case_name = name(case);
        let failures = check(case);
        for (check, detail) in &failures {
            if known.iter().any(|(c, k, _)| *c == case_name && k == check) {
                continue;
            }
            failed += 1;
            let _ = writeln!(report, "\n=== {case_name} / {check}\n{detail}");
        }
        for (c, k, why) in known {
            if *c == case_name && !failures.iter().any(|(check, _)| check == k) {
                failed += 1;
                let _ = writeln!(
                    report,
                    "\n=== {c} / {k}: listed as a known difference ({why}) but agrees with Java"
                );
            }
        }
    }
    for (c, k, _) in known {
        assert!(
            cases.iter().any(|case| name(case) == *c),
            "known difference {c} / {k} names no case"
        );
    }
    assert!(
        failed == 0,
        "{failed} check(s) of {} cases disagree with Java:\n{report}",
        cases.len()
    );
}

/// A line diff of two texts (longest common subsequence): `   ` same, ` - ` Java's only,
/// ` + ` ours only; `debug` prints each line quoted (to show whitespace).
pub fn diff(java: &str, ours: &str, debug: bool) -> String {
    let (a, b): (Vec<&str>, Vec<&str>) = (java.lines().collect(), ours.lines().collect());
    let mut lcs = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for i in (0..a.len()).rev() {
        for j in (0..b.len()).rev() {
            lcs[i][j] = if a[i] == b[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let line = |out: &mut String, mark: &str, l: &str| {
        let _ = if debug {
            writeln!(out, " {mark} {l:?}")
        } else {
            writeln!(out, " {mark} {l}")
        };
    };
    let (mut i, mut j, mut out) = (0, 0, String::new());
    while i < a.len() || j < b.len() {
        if i < a.len() && j < b.len() && a[i] == b[j] {
            line(&mut out, " ", a[i]);
            (i, j) = (i + 1, j + 1);
        } else if j < b.len() && (i == a.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            line(&mut out, "+", b[j]);
            j += 1;
        } else {
            line(&mut out, "-", a[i]);
            i += 1;
        }
    }
    out
}
