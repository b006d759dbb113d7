pub fn shout(s: &str) -> String {
    s.to_uppercase()
}
