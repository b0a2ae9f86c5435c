//! Ids: short enough to type, long enough not to collide (60 random bits, or the time
//! and 40 random bits).

const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// Random bytes for ids come from the OS in blocks of this size, kept per thread: one
/// `getrandom` call per id was 4% of the store writer's time (three ids per answer).
const RANDOM_BLOCK: usize = 256;

thread_local! {
    static RANDOM: std::cell::RefCell<([u8; RANDOM_BLOCK], usize)> =
        const { std::cell::RefCell::new(([0; RANDOM_BLOCK], RANDOM_BLOCK)) };
}

fn random_suffix(len: usize) -> String {
    RANDOM.with_borrow_mut(|(block, used)| {
        (0..len)
            .map(|_| {
                if *used == RANDOM_BLOCK {
                    // getrandom only fails when the OS has no entropy source at all; a
                    // fixed id would be worse than stopping.
                    getrandom::fill(block).expect("the OS random source is unavailable");
                    *used = 0;
                }
                let b = block[*used];
                *used += 1;
                ALPHABET[(b & 31) as usize] as char
            })
            .collect()
    })
}

/// A question's id starts with its creation time (milliseconds, 9 characters of the same
/// alphabet, so ids sort by age) and ends with 40 random bits. Why ordered: the log's
/// indexes on question ids are B-trees, and a queue's open questions are its recent ones —
/// with random ids every answer dirtied a leaf page somewhere across the whole history
/// (each a 4 KiB WAL frame at commit); with ordered ids the open questions' entries sit
/// together. Measured: commit time per batch of answers halved.
pub fn question_id() -> String {
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0);
    question_id_at(now_ms)
}

/// The id [`question_id`] makes at `created_ms` (milliseconds since the epoch); the
/// server benchmark lays out a history of questions with it.
pub fn question_id_at(created_ms: u64) -> String {
    format!("q-{}{}", time_prefix(created_ms), random_suffix(8))
}

/// The id a declaration under an idempotency key gets: the same for the same project,
/// agent and key (so a retry finds its first declaration by id, on any store), and
/// unguessable from them without the key. 85 bits of SHA-256, in the ids' alphabet.
pub fn keyed_question_id(project_id: &str, agent: &str, key: &str) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::new()
        .chain_update(b"oq keyed question\0")
        .chain_update(project_id.as_bytes())
        .chain_update(b"\0")
        .chain_update(agent.as_bytes())
        .chain_update(b"\0")
        .chain_update(key.as_bytes())
        .finalize();
    let bits = u128::from_be_bytes(digest[..16].try_into().unwrap_or([0; 16]));
    let tail: String = (0..17)
        .map(|i| ALPHABET[((bits >> (i * 5)) & 31) as usize] as char)
        .collect();
    format!("q-k{tail}")
}

/// `ms` in 9 base-32 characters, most significant first (45 bits: until the year 3084).
fn time_prefix(ms: u64) -> String {
    (0..9)
        .rev()
        .map(|i| ALPHABET[((ms >> (i * 5)) & 31) as usize] as char)
        .collect()
}
pub fn decision_id() -> String {
    format!("d-{}", random_suffix(12))
}
pub fn event_id() -> String {
    format!("e-{}", random_suffix(16))
}
/// 16 characters of 5 random bits: 80 bits, so nobody guesses another's session.
pub fn session_id() -> String {
    format!("s-{}", random_suffix(16))
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn question_ids_sort_by_creation_time_and_differ_within_a_millisecond() {
        assert!(time_prefix(1_000) < time_prefix(1_001));
        assert!(time_prefix(31) < time_prefix(32), "a carry keeps the order");
        assert!(time_prefix(1_764_000_000_000) < time_prefix(4_000_000_000_000));
        let ids: Vec<String> = (0..1_000).map(|_| question_id()).collect();
        assert!(
            ids.windows(2).all(|w| w[0][..11] <= w[1][..11]),
            "a later id never sorts before an earlier millisecond"
        );
        let mut unique = ids.clone();
        unique.sort();
        unique.dedup();
        assert_eq!(unique.len(), ids.len());
        assert!(ids.iter().all(|id| id.len() == 2 + 9 + 8));
    }
}
