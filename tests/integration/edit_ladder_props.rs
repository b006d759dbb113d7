//! The edit ladder never edits a place the model did not mean.
//!
//! For random files and random spans, `old_string` is the span's text
//! perturbed by the folds the ladder forgives (line endings, quotes, dashes,
//! ellipses, spaces, NFC/NFD; and for whole-line spans trailing whitespace,
//! a final newline, `read_file`'s line-number prefixes, tabs for spaces, an
//! indentation offset). Whatever comes out:
//!
//! - it is refused, or it lands exactly on the span, or it lands elsewhere
//!   on a rung strictly stricter than the perturbation needs (the model's
//!   text really is there, more exactly: the ladder's first rung decides);
//! - every match is what its rung accepts, by an independent, slow
//!   statement of each rung (`tests/common/edit_cases.rs`) (some cases are also damaged in a
//!   way no rung forgives, so over-eager rungs show);
//! - nothing outside the matched range changes;
//! - writing `old_string` back as `new_string` gives the file back byte for
//!   byte (the replacement is restyled to the file's own bytes).
//!
//! Files come from a small vocabulary full of the characters the folds
//! touch, and repeat lines on purpose, so ambiguity after folding is common.

#![allow(clippy::unwrap_used)]

use crate::common::edit_cases;

use edit_cases::{justified, random_case, Case};
use proptest::prelude::*;
use tandem::tools::support::edit_match::{apply, find, plan, MatchRung};

fn check(case: &Case) -> Result<(), TestCaseError> {
    let Ok(found) = find(&case.file, &case.old, false) else { return Ok(()) };
    prop_assert_eq!(found.ranges.len(), 1, "one range without replace_all: {:?}", case);
    let landed = found.ranges[0].clone();
    prop_assert!(
        justified(&case.file, landed.clone(), &case.old, found.rung),
        "the match at {:?} is not what {:?} accepts: {:?}",
        landed,
        found.rung,
        case
    );
    if landed != case.span && !case.damaged {
        // Only a stricter rung than the perturbation needs may land
        // elsewhere: there the model's text really is, more exactly.
        prop_assert!(
            found.rung < case.rung,
            "landed on {:?} ({:?}) instead of the span {:?} (perturbation needs {:?}): {:?}",
            landed,
            found.rung,
            case.span,
            case.rung,
            case
        );
    }
    // Editing with a marker changes only the matched range.
    let marker = "\u{1F9EA}MARK";
    let replacements = plan(&case.file, &found, &case.old, marker);
    let edited = apply(&case.file, &replacements);
    prop_assert!(edited.starts_with(&case.file[..landed.start]), "bytes before the match changed: {:?}", case);
    prop_assert!(edited.ends_with(&case.file[landed.end..]), "bytes after the match changed: {:?}", case);
    // old_string written back as new_string is the file's own text.
    let replacements = plan(&case.file, &found, &case.old, &case.old);
    let round_trip = apply(&case.file, &replacements);
    prop_assert!(round_trip == case.file, "writing old_string back changed the file to {:?}: {:?}", round_trip, case);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn a_perturbed_old_string_lands_on_its_span_or_is_refused(seed in any::<u64>()) {
        if let Some(case) = random_case(seed) {
            check(&case)?;
        }
    }
}

/// The generator really produces the cases the property is about: spans
/// that land on each rung, and refusals.
#[test]
fn the_generator_reaches_every_rung_and_refusals() {
    let mut landed = std::collections::BTreeMap::new();
    let mut refused = 0;
    for seed in 0..4000 {
        let Some(case) = random_case(seed) else { continue };
        match find(&case.file, &case.old, false) {
            Ok(found) if found.ranges[0] == case.span => *landed.entry(format!("{:?}", found.rung)).or_insert(0) += 1,
            Ok(_) => {}
            Err(_) => refused += 1,
        }
    }
    for rung in MatchRung::LADDER {
        assert!(landed.get(&format!("{rung:?}")).copied().unwrap_or(0) > 0, "no case landed on {rung:?}: {landed:?}");
    }
    assert!(refused > 100, "only {refused} refusals: {landed:?}");
}
