//! Answers typed at a numbered terminal question: the number, the option's
//! text, or a letter — `y` (allow once, apply, yes), `n` (deny, reject,
//! skip, no), `a` (always allow, apply all), `s` (allow commands like this
//! for the session), `e` (tell Tandem what to do instead), `c` (apply with
//! a comment, or comment on a hunk), and at an edit's review `A` (allow edits for this session). An answer that fits nothing is told so, with what would fit,
//! instead of the question silently coming back.

/// The option a letter stands for: the first option whose text starts
/// with one of these words (lowercase). `A` is matched as typed, before
/// the others, which are matched in either case.
const LETTERS: [(&str, &[&str]); 7] = [
    ("y", &["allow once", "apply", "yes", "run them", "execute"]),
    ("n", &["deny", "reject", "skip", "no", "not now", "keep planning"]),
    ("a", &["always allow", "apply all"]),
    ("A", &["allow edits"]),
    ("s", &["allow commands like this"]),
    ("c", &["comment on this hunk", "apply, with a comment"]),
    ("e", &["tell tandem"]),
];

/// The index of the option `answer` picks, or what to tell the user.
pub fn parse(answer: &str, options: &[String]) -> Result<usize, String> {
    let answer = answer.trim();
    if let Ok(number) = answer.parse::<usize>() {
        if (1..=options.len()).contains(&number) {
            return Ok(number - 1);
        }
    }
    let lower = answer.to_lowercase();
    if let Some(index) = options.iter().position(|o| o.to_lowercase() == lower) {
        return Ok(index);
    }
    // `A` and `a` are two answers where both are offered.
    for (letter, starts) in LETTERS {
        if letter != letter.to_lowercase() && answer == letter {
            if let Some(index) = letter_option(options, starts) {
                return Ok(index);
            }
        }
    }
    let word = match lower.as_str() {
        "yes" => "y",
        "no" => "n",
        "always" => "a",
        other => other,
    };
    for (letter, starts) in LETTERS {
        if word == letter && letter == letter.to_lowercase() {
            if let Some(index) = letter_option(options, starts) {
                return Ok(index);
            }
        }
    }
    Err(format!("“{answer}” is not one of the answers: type {}", hint(options)))
}

fn letter_option(options: &[String], starts: &[&str]) -> Option<usize> {
    options.iter().position(|o| {
        let o = o.to_lowercase();
        starts.iter().any(|s| o.starts_with(s))
    })
}

/// "1-3, or y (Allow once), n (Deny), a (Always allow)".
pub fn hint(options: &[String]) -> String {
    let letters: Vec<String> = LETTERS
        .iter()
        .filter_map(|(letter, starts)| letter_option(options, starts).map(|i| format!("{letter} ({})", options[i])))
        .collect();
    let numbers = if options.len() == 1 { "1".to_string() } else { format!("1-{}", options.len()) };
    if letters.is_empty() { numbers } else { format!("{numbers}, or {}", letters.join(", ")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn numbers_letters_and_words_pick_options() {
        let asked = options(&["Allow once", "Always allow", "Always allow, saved in .tandem/settings.local.json", "Deny"]);
        assert_eq!(parse("1", &asked), Ok(0));
        assert_eq!(parse(" 4 ", &asked), Ok(3));
        assert_eq!(parse("y", &asked), Ok(0));
        assert_eq!(parse("Y", &asked), Ok(0));
        assert_eq!(parse("yes", &asked), Ok(0));
        assert_eq!(parse("n", &asked), Ok(3));
        assert_eq!(parse("a", &asked), Ok(1), "a is the thread's grant, the narrowest always");
        assert_eq!(parse("deny", &asked), Ok(3));
        let shaped = options(&["Allow once", "Allow commands like this for this session", "Always allow", "Deny"]);
        assert_eq!(parse("s", &shaped), Ok(1));
        assert_eq!(parse("a", &shaped), Ok(2));
        assert!(parse("s", &asked).is_err(), "s where the shapes are not offered");
        let review = options(&["Apply", "Reject"]);
        assert_eq!(parse("y", &review), Ok(0));
        assert_eq!(parse("n", &review), Ok(1));
    }

    #[test]
    fn a_hunk_review_takes_y_n_a_capital_a_and_e() {
        let hunk = options(&["Apply this hunk", "Skip this hunk", "Apply all the rest", "Allow edits for this session", "Tell Tandem what to do instead", "Comment on this hunk"]);
        let picked: Vec<Result<usize, String>> = ["y", "n", "a", "A", "e", "E"].iter().map(|a| parse(a, &hunk)).collect();
        assert_eq!(parse("c", &hunk), Ok(5));
        assert_eq!(parse("c", &options(&["Apply", "Reject", "Allow edits for this session", "Tell Tandem what to do instead", "Apply, with a comment"])), Ok(4));
        assert_eq!(picked, [Ok(0), Ok(1), Ok(2), Ok(3), Ok(4), Ok(4)]);
        assert_eq!(
            hint(&hunk),
            "1-6, or y (Apply this hunk), n (Skip this hunk), a (Apply all the rest), A (Allow edits for this session), c (Comment on this hunk), e (Tell Tandem what to do instead)"
        );
        // Where no option is for `a`, it is not `A`.
        let review = options(&["Apply", "Reject", "Allow edits for this session", "Tell Tandem what to do instead"]);
        assert!(parse("a", &review).is_err());
        assert_eq!(parse("A", &review), Ok(2));
        // And `A` is still "always allow" at a question with no edits to allow.
        let asked = options(&["Allow once", "Always allow", "Deny"]);
        assert_eq!(parse("A", &asked), Ok(1));
    }

    #[test]
    fn an_answer_that_fits_nothing_says_what_would() {
        let asked = options(&["Allow once", "Always allow", "Deny"]);
        assert_eq!(parse("5", &asked), Err("“5” is not one of the answers: type 1-3, or y (Allow once), n (Deny), a (Always allow)".into()));
        let review = options(&["Apply", "Reject"]);
        assert_eq!(parse("a", &review), Err("“a” is not one of the answers: type 1-2, or y (Apply), n (Reject)".into()));
        assert_eq!(parse("", &review), Err("“” is not one of the answers: type 1-2, or y (Apply), n (Reject)".into()));
    }
}
