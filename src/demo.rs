//! `oq demo`: a realistic sample in the local store, so a newcomer sees every part at once —
//! several projects, sessions by different authors, open and answered questions with and
//! without suggestions, and a task parked on a QA question that waits for you.
//!
//! Running it again adds nothing: the sample is recognised by its session ids.

use std::path::Path;

use serde::Serialize;

use crate::domain::{
    Actor, Afeta, AnswerInput, DeclareInput, OqError, Role, SessionKind, Verdict, WorkState,
};
use crate::engine::{Engine, ListQuery, StatusFilter, Store, VerdictInput};

#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DemoSummary {
    pub user: String,
    pub projects: Vec<String>,
    pub open: u64,
    pub answered: u64,
    pub waiting_for_you: usize,
    /// False when the sample was already there.
    pub created: bool,
}

struct Ask<'a> {
    role: Role,
    session: &'a str,
    pergunta: &'a str,
    sugestao: Option<&'a str>,
    afeta: Afeta,
}

fn afeta(regras: &[&str], historias: &[&str], tarefas: &[&str]) -> Afeta {
    let own = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    Afeta {
        regras: own(regras),
        historias: own(historias),
        tarefas: own(tarefas),
    }
}

fn ask<S: Store>(engine: &Engine<S>, project: &str, a: Ask<'_>) -> Result<String, OqError> {
    let input = DeclareInput {
        pergunta: a.pergunta.into(),
        sugestao: a.sugestao.map(Into::into),
        afeta: a.afeta,
        session_id: a.session.into(),
        idempotency_key: None,
    };
    Ok(engine
        .declare(&Actor::agent(a.role), project, &input)?
        .question_id)
}

pub fn fill<S: Store>(engine: &Engine<S>, user: &str) -> Result<DemoSummary, OqError> {
    let you = Actor::person(user);
    let created = engine.read(|v| v.session("loja-exec-12"))?.is_none();
    if created {
        fill_loja(engine, &you)?;
        fill_atlas(engine, &you)?;
    }
    let mut open = 0;
    let mut answered = 0;
    for p in ["loja", "atlas"] {
        open += engine
            .list(Some(p), &ListQuery::new(StatusFilter::Open).limit(1))?
            .total;
        answered += engine
            .list(Some(p), &ListQuery::new(StatusFilter::Answered).limit(1))?
            .total;
    }
    Ok(DemoSummary {
        user: user.into(),
        projects: vec!["loja".into(), "atlas".into()],
        open,
        answered,
        waiting_for_you: engine.waiting_for(None, user)?.len(),
        created,
    })
}

fn fill_loja<S: Store>(engine: &Engine<S>, you: &Actor) -> Result<(), OqError> {
    let p = "loja";
    let ana = Actor::person("ana");
    engine.start_session(you, p, SessionKind::Conversation, Some("loja-conv-7"))?;
    engine.start_session(you, p, SessionKind::Execution, Some("loja-exec-12"))?;
    engine.start_session(&ana, p, SessionKind::Conversation, Some("loja-conv-ana"))?;

    let po = Actor::agent(Role::Po);
    let story = engine.create_story(&po, p, "Product page reachable by its code")?;
    engine.move_story(&po, p, &story.story_id, WorkState::Ready)?;
    let dev = Actor::agent(Role::DevLead);
    let task = engine.create_task(
        &dev,
        p,
        &story.story_id,
        "loja-exec-12",
        "GET /:codigo returns the product",
    )?;
    engine.move_task(&dev, p, &task.task_id, WorkState::InReview)?;

    let shipping = ask(
        engine,
        p,
        Ask {
            role: Role::Po,
            session: "loja-conv-7",
            pergunta: "Above which order value is shipping free?",
            sugestao: Some("R$ 200, as in the current site"),
            afeta: afeta(&["RN-858"], &[&story.story_id], &[]),
        },
    )?;
    engine.answer(you, Some(p), &shipping, &AnswerInput::accept())?;

    ask(
        engine,
        p,
        Ask {
            role: Role::Criativo,
            session: "loja-conv-7",
            pergunta: "Which payment provider should checkout offer first?",
            sugestao: Some("Pix through the current gateway; cards in the next release"),
            afeta: afeta(&[], &[&story.story_id], &[]),
        },
    )?;
    ask(
        engine,
        p,
        Ask {
            role: Role::Po,
            session: "loja-conv-7",
            pergunta: "Should guest checkout be supported, or is an account required to buy?",
            sugestao: None,
            afeta: afeta(&["RN-859"], &[], &[]),
        },
    )?;
    ask(
        engine,
        p,
        Ask {
            role: Role::Arquiteto,
            session: "loja-conv-ana",
            pergunta: "Should prices be shown with taxes included on the product page?",
            sugestao: Some("Yes, taxes included, with the breakdown at checkout"),
            afeta: afeta(&[], &[&story.story_id], &[]),
        },
    )?;

    let qa = Actor::agent(Role::QaAgent);
    engine.verdict(&qa, p, &task.task_id, &VerdictInput {
        verdict: Some(Verdict::NeedsUserDecision),
        pergunta: Some(
            "Is the product code case-sensitive in GET /:codigo? The story's DoR says \"not confirmed by the user\".".into(),
        ),
        sugestao: Some("No — normalise to upper case before the lookup".into()),
        subspecialty: Some("api".into()),
        ..VerdictInput::default()
    })?;
    Ok(())
}

fn fill_atlas<S: Store>(engine: &Engine<S>, you: &Actor) -> Result<(), OqError> {
    let p = "atlas";
    let bruno = Actor::person("bruno");
    engine.start_session(you, p, SessionKind::Conversation, Some("atlas-conv-3"))?;
    engine.start_session(
        &bruno,
        p,
        SessionKind::Conversation,
        Some("atlas-conv-bruno"),
    )?;

    let tests_db = ask(
        engine,
        p,
        Ask {
            role: Role::DevLead,
            session: "atlas-conv-3",
            pergunta: "May the integration tests use SQLite instead of the production PostgreSQL?",
            sugestao: Some("Yes for unit tests, PostgreSQL for the integration suite"),
            afeta: afeta(&["RN-860"], &[], &[]),
        },
    )?;
    engine.answer(
        you,
        Some(p),
        &tests_db,
        &AnswerInput::text("PostgreSQL everywhere: the suite must catch dialect bugs."),
    )?;

    ask(
        engine,
        p,
        Ask {
            role: Role::Arquiteto,
            session: "atlas-conv-3",
            pergunta: "Keep a single deployable for v1, or split the billing service out now?",
            sugestao: Some("Single deployable for v1; split after launch"),
            afeta: afeta(&["RN-861"], &[], &[]),
        },
    )?;
    ask(
        engine,
        p,
        Ask {
            role: Role::Criativo,
            session: "atlas-conv-bruno",
            pergunta: "Is the onboarding tour skippable on the first login?",
            sugestao: None,
            afeta: Afeta::default(),
        },
    )?;
    Ok(())
}

/// What the sample holds and what to try; `oq` is how the reader invokes oq (with the
/// `--data-dir` they chose, so the hints work as printed).
pub fn describe(s: &DemoSummary, data_dir: &Path, oq: &str) -> String {
    let verb = if s.created { "filled" } else { "already holds" };
    let mut out = format!(
        "The demo store in {} {verb} a sample: projects {}; {} open and {} answered questions; {} task waiting for {}.\n\nTry:\n",
        data_dir.display(),
        s.projects.join(", "),
        s.open,
        s.answered,
        s.waiting_for_you,
        s.user,
    );
    for (args, what) in [
        ("list", "the open questions of every project"),
        (
            "list --status all --json",
            "the same with the answered ones, as JSON",
        ),
        ("task waiting", "tasks parked on a question you must answer"),
        ("readiness -p loja", "how many are still open in a project"),
        ("show ID", "one question in full"),
        (
            "answer ID --accept",
            "take the suggestion (only the session's author may)",
        ),
        ("answer ID --text \"…\"", "answer in your own words"),
        ("--as ana list", "the same queue as ana sees it"),
    ] {
        out.push_str(&format!("  {:<52} {what}\n", format!("{oq} {args}")));
    }
    out
}
