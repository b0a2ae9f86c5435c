//! kill -9 of the client at random moments across 200 answer submissions against a real
//! `oq serve` (and again with the server killed and restarted mid-way), then
//! `oq outbox --deliver`: every answer is applied exactly once or still in the outbox,
//! none doubled, none lost. The moments come from a seeded RNG; nothing is timed.
#![allow(clippy::unwrap_used)]

mod serve_process;

use std::path::Path;
use std::process::{Child, Stdio};
use std::time::Duration;

use serve_process::{Serve, outbox_items};

/// xorshift64*: enough randomness for kill moments, the same on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Answers every question in parallel batches, SIGKILLing about half the clients after a
/// random delay; `between` runs after each batch (to kill or restart the server).
fn submit_all(
    s: &mut Serve,
    client: &Path,
    qs: &[String],
    rng: &mut Rng,
    mut between: impl FnMut(&mut Serve, usize),
) {
    for (b, batch) in qs.chunks(8).enumerate() {
        let mut children: Vec<(Child, Option<u64>)> = batch
            .iter()
            .map(|q| {
                let child = s
                    .oq(client)
                    .args(["answer", q, "--text", &format!("answer to {q}")])
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap();
                let kill_after = (rng.below(2) == 0).then(|| rng.below(60));
                (child, kill_after)
            })
            .collect();
        let mut waited = 0;
        for step in 0..=60u64 {
            for (child, kill_after) in children.iter_mut() {
                if *kill_after == Some(step) {
                    let _ = child.kill();
                }
            }
            std::thread::sleep(Duration::from_millis(1));
            waited += 1;
        }
        let _ = waited;
        for (mut child, _) in children.drain(..) {
            let _ = child.wait();
        }
        between(s, b);
    }
}

/// After delivery: each question answered at most once; answered exactly when the
/// outbox holds its entry, and every entry delivered.
fn check(s: &Serve, client: &Path, qs: &[String]) -> (usize, usize) {
    let out = s.run(client, &["outbox", "--deliver", "--json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let items = outbox_items(&out);
    let mut applied = 0;
    for q in qs {
        let (n, text) = s.answered(q);
        assert!(n <= 1, "{q} answered {n} times");
        let entries: Vec<_> = items.iter().filter(|e| e["questionId"] == **q).collect();
        assert!(entries.len() <= 1, "{q}: {entries:?}");
        match entries.first() {
            Some(e) => {
                assert_eq!(e["state"], "delivered", "{e}");
                assert_eq!(n, 1, "{q} is delivered in the outbox but not applied");
                assert_eq!(text.as_deref(), Some(format!("answer to {q}").as_str()));
                applied += 1;
            }
            // Killed before the entry was written: nothing was sent either.
            None => assert_eq!(n, 0, "{q} applied without an outbox entry"),
        }
    }
    (applied, items.len())
}

#[test]
fn kill_9_of_the_client_never_doubles_or_loses_an_answer() {
    let mut s = Serve::new();
    let qs = s.seed(200);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_0001);
    submit_all(&mut s, client.path(), &qs, &mut rng, |_, _| {});
    let (applied, _) = check(&s, client.path(), &qs);
    assert!(applied > 100, "only {applied} of 200 reached the outbox");
    s.kill();
}

#[test]
fn kill_9_of_the_client_and_of_the_server_never_doubles_or_loses_an_answer() {
    let mut s = Serve::new();
    let qs = s.seed(200);
    s.start();
    let client = tempfile::tempdir().unwrap();
    let mut rng = Rng(0x5eed_0002);
    // The server dies after batch 8 and comes back after batch 14, and dies again
    // (kill -9, mid-batch for the clients) after batch 20, back after 22.
    submit_all(&mut s, client.path(), &qs, &mut rng, |s, b| match b {
        8 | 20 => s.kill(),
        14 | 22 => s.start(),
        _ => {}
    });
    let (applied, _) = check(&s, client.path(), &qs);
    assert!(applied > 100, "only {applied} of 200 reached the outbox");
    s.kill();
}
