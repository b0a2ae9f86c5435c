//! Shared fixtures for the TUI tests: questions in the wire shape, a model with them
//! loaded, keys, and the screen as text.
#![allow(dead_code, clippy::unwrap_used)]

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyEventState, KeyModifiers};
use oq::domain::Afeta;
use oq::tui::effect::{Effect, Msg};
use oq::tui::keymap::Keymap;
use oq::tui::model::{Connection, Model};
use oq::tui::theme::Theme;
use oq::tui::update::update;
use oq::tui::view;
use oq::wire::{
    AnswerItem, GateItem, OptionItem, PromptItem, QuestionItem, QuestionList, TaskItem, WaitingItem,
};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::style::Modifier;

/// A fixed clock: 2026-01-01T12:00:00Z.
pub const NOW: i64 = 1_767_268_800_000;
pub const MIN: i64 = 60_000;

pub fn question(
    id: &str,
    author: &str,
    me: &str,
    pergunta: &str,
    sugestao: Option<&str>,
    age_min: i64,
) -> QuestionItem {
    let can = author == me;
    QuestionItem {
        question_id: id.into(),
        project_id: "loja".into(),
        session_id: format!("loja-conv-{author}"),
        session_author: author.into(),
        pergunta: pergunta.into(),
        sugestao: sugestao.map(Into::into),
        afeta: Afeta {
            regras: vec!["RN-858".into()],
            historias: vec!["S-3".into()],
            tarefas: vec![],
        },
        autor: "po".into(),
        source: "local".into(),
        status: "open".into(),
        created_at: NOW - age_min * MIN,
        answer: None,
        prompts: vec![],
        upstream: None,
        closed: None,
        orphaned: false,
        handed_off: false,
        snooze: None,
        can_answer: can,
        reason: (!can)
            .then(|| format!("only the person who started this session, {author}, can answer")),
        similar_answer: None,
    }
}

pub fn answered(
    mut q: QuestionItem,
    by: &str,
    accepted: bool,
    text: &str,
    age_min: i64,
) -> QuestionItem {
    q.status = "answered".into();
    q.can_answer = false;
    q.reason = Some(format!("already answered by {by}"));
    q.answer = Some(AnswerItem {
        resposta: text.into(),
        aceitou_sugestao: accepted,
        decision_event_id: "ev-1".into(),
        respondida_por: by.into(),
        answered_at: NOW - age_min * MIN,
        answers: vec![],
        decision_source: Some(oq::domain::DecisionSource::for_answer(accepted)),
    });
    q
}

pub fn with_prompts(mut q: QuestionItem) -> QuestionItem {
    q.autor = "build".into();
    q.source = "opencode".into();
    q.prompts = vec![
        PromptItem {
            header: "Targets".into(),
            question: "Which platforms should the release build?".into(),
            options: vec![
                OptionItem {
                    label: "linux".into(),
                    description: "x86_64 and arm64".into(),
                },
                OptionItem {
                    label: "macos".into(),
                    description: String::new(),
                },
                OptionItem {
                    label: "windows".into(),
                    description: String::new(),
                },
            ],
            multiple: true,
            custom: true,
        },
        PromptItem {
            header: "Channel".into(),
            question: "Which channel?".into(),
            options: vec![
                OptionItem {
                    label: "stable".into(),
                    description: String::new(),
                },
                OptionItem {
                    label: "beta".into(),
                    description: String::new(),
                },
            ],
            multiple: false,
            custom: false,
        },
    ];
    q
}

/// dev-a's OpenCode question with two prompts (`with_prompts`), asked a minute ago.
pub fn release() -> QuestionItem {
    with_prompts(question(
        "q-0",
        "dev-a",
        "dev-a",
        "Release build settings",
        None,
        1,
    ))
}

pub fn sample(me: &str) -> Vec<QuestionItem> {
    vec![
        question(
            "q-1",
            me,
            me,
            "Which payment provider should checkout offer first?",
            Some("Pix through the current gateway; cards in the next release"),
            90,
        ),
        question(
            "q-2",
            me,
            me,
            "Should guest checkout be supported, or is an account required to buy?",
            None,
            45,
        ),
        question(
            "q-3",
            "ana",
            me,
            "Should prices be shown with taxes included on the product page?",
            Some("Yes, taxes included, with the breakdown at checkout"),
            20,
        ),
        {
            let mut q = question(
                "q-4",
                me,
                me,
                "Is the product code case-sensitive in GET /:codigo? The story's DoR says \"not confirmed by the user\".",
                Some("No — normalise to upper case before the lookup"),
                2,
            );
            q.autor = "qa-agent".into();
            q.afeta = Afeta {
                regras: vec![],
                historias: vec!["S-3".into()],
                tarefas: vec!["T-7".into()],
            };
            q.session_id = "loja-exec-12".into();
            q
        },
    ]
}

pub fn waiting() -> Vec<WaitingItem> {
    vec![WaitingItem {
        task: TaskItem {
            task_id: "T-7".into(),
            project_id: "loja".into(),
            story_id: "S-3".into(),
            session_id: "loja-exec-12".into(),
            title: "GET /:codigo returns the product".into(),
            state: "in_review".into(),
            gate: GateItem {
                state: "parked".into(),
                corrections: 0,
                ceiling: 3,
                parked_on: Some("q-4".into()),
            },
        },
        question_id: "q-4".into(),
        parked_at: NOW - 2 * MIN,
    }]
}

/// A model as after start-up: the first page, the counts and one revision applied.
pub fn loaded(me: &str, items: Vec<QuestionItem>) -> Model {
    let mut m = Model::new(me, "local", None, NOW, Keymap::default());
    let fx = oq::tui::update::init(&mut m);
    assert!(!fx.is_empty());
    let total = items.iter().filter(|q| q.status == "open").count() as u64;
    let n = items.len() as u64;
    let id = m.queue.generation;
    update(
        &mut m,
        Msg::Loaded {
            id,
            append: false,
            page: Ok(QuestionList {
                items,
                total: n,
                total_is_lower_bound: false,
                snoozed: 0,
                snoozed_next_return: None,
                cursor: None,
            }),
        },
    );
    let id = m.counts_generation;
    update(
        &mut m,
        Msg::Counts {
            id,
            open: Ok(total),
            waiting: Ok(vec![]),
            newest: vec![],
        },
    );
    m.connection = Connection::Live {
        since: NOW - 5 * MIN,
    };
    m.revision = Some(1);
    // The watcher is attached (issue 6: the first revision's attach).
    m.attached = true;
    m
}

/// The list as the source sends it now, under the generation in flight: a reload that
/// finds `items` (the poll's new revision first, when `poll`).
pub fn reloaded(m: &mut Model, items: Vec<QuestionItem>, poll: bool) -> Vec<Effect> {
    let mut fx = Vec::new();
    if poll {
        let revision = Ok(m.revision.unwrap_or(0) + 1);
        fx = update(
            m,
            Msg::Revision {
                now: m.now,
                revision,
            },
        );
    }
    let (id, total) = (m.queue.generation, items.len() as u64);
    let page = Ok(QuestionList {
        items,
        total,
        total_is_lower_bound: false,
        snoozed: 0,
        snoozed_next_return: None,
        cursor: None,
    });
    fx.extend(update(
        m,
        Msg::Loaded {
            id,
            append: false,
            page,
        },
    ));
    fx
}

/// The reply to a look-up of `q`.
pub fn looked_up(m: &mut Model, q: QuestionItem) {
    let question_id = q.question_id.clone();
    let result = Ok(Box::new(q));
    update(
        m,
        Msg::LookedUp {
            question_id,
            result,
        },
    );
}

pub fn key(code: KeyCode) -> Msg {
    Msg::Key(KeyEvent {
        code,
        modifiers: KeyModifiers::NONE,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

pub fn ch(c: char) -> Msg {
    key(KeyCode::Char(c))
}

pub fn ctrl(c: char) -> Msg {
    Msg::Key(KeyEvent {
        code: KeyCode::Char(c),
        modifiers: KeyModifiers::CONTROL,
        kind: KeyEventKind::Press,
        state: KeyEventState::NONE,
    })
}

pub fn typed(m: &mut Model, s: &str) {
    for c in s.chars() {
        update(m, ch(c));
    }
}

pub fn render(model: &Model, theme: &Theme, w: u16, h: u16) -> Buffer {
    let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
    t.draw(|f| view::draw(f, model, theme)).unwrap();
    t.backend().buffer().clone()
}

/// The buffer's text, one line per row, trailing spaces kept (snapshots show the frame).
pub fn text(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        let mut skip = 0;
        for x in 0..b.area.width {
            if skip > 0 {
                skip -= 1;
                continue;
            }
            let s = b[(x, y)].symbol();
            out.push_str(s);
            skip = unicode_width(s).saturating_sub(1);
        }
        out.push('\n');
    }
    out
}

fn unicode_width(s: &str) -> usize {
    ratatui::text::Span::raw(s).width()
}

/// Per cell: R reversed, B bold, D dim, U underlined, . plain (for the monochrome theme).
pub fn styles(b: &Buffer) -> String {
    let mut out = String::new();
    for y in 0..b.area.height {
        for x in 0..b.area.width {
            let m = b[(x, y)].modifier;
            out.push(if m.contains(Modifier::REVERSED) {
                'R'
            } else if m.contains(Modifier::BOLD) {
                'B'
            } else if m.contains(Modifier::DIM) {
                'D'
            } else if m.contains(Modifier::UNDERLINED) {
                'U'
            } else {
                '.'
            });
        }
        out.push('\n');
    }
    out
}
