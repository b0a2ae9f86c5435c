//! `oq status`'s count (issue 17 part 5) on a real SQLite store: the open set's index
//! count gives what walking the open list gives (its definition, `counts::by_pages`),
//! for every viewer and scope, over a log with each case the list treats apart:
//! answered, withdrawn, snoozed now, a snooze that has run out, handed to Claude Code's
//! dialog, another person's session, another project.
#![allow(clippy::unwrap_used)]

use oq::domain::choices::{Prompt, PromptOption};
use oq::domain::claude_code::{ClaudeCall, ClaudeDeclare};
use oq::domain::snooze::SnoozeInput;
use oq::domain::{Actor, Afeta, AnswerInput, DeclareInput, Role, SessionKind};
use oq::engine::counts::{OpenCounts, by_pages};
use oq::engine::{EngineConfig, LocalEngine, SqliteStore, Store, StoreView};

const NOW: i64 = 1_800_000_000_000;

fn ask(e: &LocalEngine, project: &str, session: &str, text: &str) -> String {
    let input = DeclareInput {
        pergunta: text.into(),
        sugestao: None,
        afeta: Afeta::default(),
        session_id: session.into(),
        idempotency_key: None,
    };
    e.declare(&Actor::agent(Role::Po), project, &input)
        .unwrap()
        .question_id
}

fn claude_question(e: &LocalEngine, project: &str, session: &str) -> String {
    let option = |label: &str| PromptOption {
        label: label.into(),
        description: String::new(),
    };
    let d = ClaudeDeclare {
        session_id: session.into(),
        pergunta: "Which port?".into(),
        prompts: vec![Prompt {
            header: "Port".into(),
            question: "Which port?".into(),
            options: vec![option("8080"), option("9090")],
            multiple: false,
            custom: true,
        }],
        call: ClaudeCall {
            session_id: "cc-1".into(),
            tool_use_id: "toolu_1".into(),
            directory: "/w".into(),
        },
    };
    e.declare_claude_code(&Actor::agent(Role::DevLead), project, &d)
        .unwrap()
        .question_id
}

#[test]
fn the_index_count_is_the_list_walks_count_for_every_viewer_and_scope() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open_in(dir.path()).unwrap();
    let e = LocalEngine::new(store, EngineConfig::default());
    let (ana, bia) = (Actor::person("ana"), Actor::person("bia"));
    e.start_session(&ana, "loja", SessionKind::Conversation, Some("s-ana"))
        .unwrap();
    e.start_session(&bia, "loja", SessionKind::Conversation, Some("s-bia"))
        .unwrap();
    e.start_session(&ana, "blog", SessionKind::Conversation, Some("s-blog"))
        .unwrap();
    ask(&e, "loja", "s-ana", "Which database?");
    let answered = ask(&e, "loja", "s-ana", "Which queue?");
    let withdrawn = ask(&e, "loja", "s-ana", "Which cache?");
    let snoozed = ask(&e, "loja", "s-ana", "Which region?");
    let expired = ask(&e, "loja", "s-ana", "Which font?");
    ask(&e, "loja", "s-bia", "Bia's question?");
    ask(&e, "blog", "s-blog", "Which theme?");
    let handed = claude_question(&e, "loja", "s-ana");
    e.answer(&ana, Some("loja"), &answered, &AnswerInput::text("redis"))
        .unwrap();
    e.withdraw(
        &Actor::agent(Role::Po),
        "loja",
        &withdrawn,
        "no longer needed",
    )
    .unwrap();
    let hour = SnoozeInput::for_seconds(3600);
    e.snooze(&ana, Some("loja"), &snoozed, &hour, NOW).unwrap();
    e.snooze(&ana, Some("loja"), &expired, &hour, NOW - 7_200_000)
        .unwrap();
    e.hand_off_claude_code(&Actor::agent(Role::DevLead), "loja", &handed)
        .unwrap();

    let counts = |view: &dyn StoreView, project, viewer: &Actor| {
        let indexed = view.open_counts(project, viewer, NOW).unwrap();
        let walked = by_pages(view, project, viewer, NOW).unwrap();
        assert_eq!(indexed, walked, "{project:?} as {viewer:?}");
        indexed
    };
    let store = SqliteStore::open_in(dir.path()).unwrap();
    let seen = store
        .read(|v| {
            let po = Actor::agent(Role::Po);
            Ok([
                counts(v, None, &ana),
                counts(v, Some("loja"), &ana),
                counts(v, Some("blog"), &ana),
                counts(v, Some("loja"), &bia),
                counts(v, None, &po),
                counts(v, Some("nowhere"), &ana),
            ])
        })
        .unwrap();
    let c = |open, mine| OpenCounts { open, mine };
    // loja: database, font (its snooze ran out), Bia's, the handed-off one; the region
    // is snoozed now. Ana answers database and font; the handed-off one is Claude's.
    assert_eq!(seen, [c(5, 3), c(4, 2), c(1, 1), c(4, 1), c(5, 0), c(0, 0)]);
}
