//! Random ids: short enough to type, long enough not to collide (60 bits).

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

fn random_suffix(len: usize) -> String {
    let mut bytes = vec![0u8; len];
    // getrandom only fails when the OS has no entropy source at all; a fixed id would be
    // worse than stopping.
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    bytes
        .iter()
        .map(|b| ALPHABET[(b & 31) as usize] as char)
        .collect()
}

pub fn question_id() -> String {
    format!("q-{}", random_suffix(12))
}
pub fn decision_id() -> String {
    format!("d-{}", random_suffix(12))
}
pub fn event_id() -> String {
    format!("e-{}", random_suffix(16))
}
pub fn session_id() -> String {
    format!("s-{}", random_suffix(10))
}
pub fn story_id() -> String {
    format!("st-{}", random_suffix(8))
}
pub fn task_id() -> String {
    format!("t-{}", random_suffix(8))
}
/// 32 random bytes, hex: a bearer token.
pub fn token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the OS random source is unavailable");
    hex::encode(bytes)
}
