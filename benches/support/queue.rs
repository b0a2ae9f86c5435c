//! What the queue benchmarks share (`benches/list.rs`, `benches/decisions.rs`): a large
//! store written straight through `Store::transact` (no engine checks, 5,000 events a
//! transaction), and the p50/p99 line each query prints.
//!
//! Question `n` asks about a payment method and a region (words most questions hold);
//! question 77,777 alone names a zeppelin (a word one question holds); every
//! `answer_every`-th question is answered with a text naming a review (a word only
//! answers hold).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use oq::domain::{Afeta, Event};
use oq::engine::{NewEvent, SqliteStore, Store};

const BATCH: usize = 5000;

/// The clock as the store stamps events (Unix milliseconds).
pub fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// `questions` questions in project `loja` of `session`, each `answer_every`-th answered
/// by `answerer`. Returns the time at which the last tenth began to be written (a
/// `since` that keeps about a tenth of the decisions).
pub fn fill(
    store: &SqliteStore,
    session: &str,
    answerer: &str,
    questions: usize,
    answer_every: usize,
) -> i64 {
    let mut last_tenth = None;
    for chunk in 0..questions.div_ceil(BATCH) {
        if last_tenth.is_none() && chunk * BATCH >= questions * 9 / 10 {
            last_tenth = Some(now_ms());
        }
        let mut batch = Vec::new();
        for n in chunk * BATCH..((chunk + 1) * BATCH).min(questions) {
            let id = format!("q-list{n:07}");
            let pergunta = if n == 77_777 {
                format!("Question {n}: where does the zeppelin hangar go?")
            } else {
                format!(
                    "Question {n}: should the checkout accept payment method {} in region {}?",
                    n % 17,
                    n % 5
                )
            };
            batch.push(NewEvent {
                project_id: "loja".into(),
                actor: "po-bot".into(),
                event: Event::OpenQuestion {
                    question_id: id.clone(),
                    pergunta,
                    sugestao: Some("Yes, behind a flag".into()),
                    afeta: Afeta::default(),
                    autor: ["po", "arquiteto", "criativo"][n % 3].into(),
                    session_id: session.into(),
                    source: "oq".into(),
                    prompts: Vec::new(),
                    upstream: None,
                },
            });
            if n % answer_every == 0 {
                batch.push(NewEvent {
                    project_id: "loja".into(),
                    actor: answerer.into(),
                    event: Event::QuestionAnswered {
                        question_id: id,
                        resposta: format!("Decided in review {n}: the flag stays off"),
                        aceitou_sugestao: false,
                        decision_event_id: format!("d-list{n:07}"),
                        respondida_por: answerer.into(),
                        answers: Vec::new(),
                        idempotency_key: None,
                        decision_source: None,
                    },
                });
            }
        }
        store.transact(|_| Ok((batch, ()))).expect("questions");
    }
    last_tenth.unwrap_or_else(now_ms)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// One query's line: p50, p99, max of `times`, and the total it found; then
/// `OQBENCH <prefix>_<label>_<name>_p50 <value> ms`.
pub fn report(prefix: &str, label: &str, name: &str, total: u64, mut times: Vec<Duration>) {
    times.sort();
    let p = |q: f64| times[((times.len() as f64 * q) as usize).min(times.len() - 1)];
    println!(
        "{label:>5} {name:<14} total {total:>7}  p50 {:>8.2} ms  p99 {:>8.2} ms  max {:>8.2} ms",
        ms(p(0.5)),
        ms(p(0.99)),
        ms(times[times.len() - 1])
    );
    println!("OQBENCH {prefix}_{label}_{name}_p50 {:.3} ms", ms(p(0.5)));
    println!("OQBENCH {prefix}_{label}_{name}_p99 {:.3} ms", ms(p(0.99)));
}
