//! Answers typed at a numbered terminal question: the number, the option's
//! text, or a letter — `y` (allow once, apply, yes), `n` (deny, reject,
//! no) and `a` (always allow). An answer that fits nothing is told so, with
//! what would fit, instead of the question silently coming back.

/// The option a letter stands for: the first option whose text starts
/// with one of these words (lowercase).
const LETTERS: [(&str, &[&str]); 3] = [
    ("y", &["allow once", "apply", "yes", "run them", "execute"]),
    ("n", &["deny", "reject", "no", "not now", "keep planning"]),
    ("a", &["always allow"]),
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
    let word = match lower.as_str() {
        "yes" => "y",
        "no" => "n",
        "always" => "a",
        other => other,
    };
    for (letter, starts) in LETTERS {
        if word == letter {
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
        let review = options(&["Apply", "Reject"]);
        assert_eq!(parse("y", &review), Ok(0));
        assert_eq!(parse("n", &review), Ok(1));
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
