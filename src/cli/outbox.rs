//! `oq outbox`: the answers kept for a source while it was unreachable, and their fate
//! (pending, uncertain, delivered, conflict, refused); `--deliver` sends the pending and
//! uncertain ones now and reports every entry this run settled (an attach's included).
//! Also the one line a remote door prints on stderr when it worked from the mirror.

use serde::Serialize;

use super::args::OutboxArgs;
use super::context::{Context, data_dir};
use crate::domain::OqError;
use crate::domain::error::exit;
use crate::engine::sqlite::now_ms;
use crate::source::outbox::{Delivery, Entry, Outbox, State};
use crate::source::{AnySource, Source};

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Report {
    items: Vec<Entry>,
    #[serde(skip_serializing_if = "Option::is_none")]
    delivery: Option<Delivery>,
}

pub async fn run(ctx: &Context, args: OutboxArgs) -> Result<i32, OqError> {
    let name = ctx.source.describe();
    let (outbox, delivery) = match &ctx.source {
        AnySource::Resilient(r) => {
            let d = if args.deliver {
                // What this run's attach flushed before counts as delivered by it too.
                r.flush().await?;
                Some(r.deliveries())
            } else {
                None
            };
            (r.outbox().clone(), d)
        }
        other => {
            let outbox = Outbox::open(&data_dir(&ctx.global)?)?;
            let d = if args.deliver {
                Some(outbox.deliver_all(other, &name).await?)
            } else {
                None
            };
            (outbox, d)
        }
    };
    let items = outbox.list()?;
    let still = items
        .iter()
        .filter(|e| e.source == name && matches!(e.state, State::Pending | State::Uncertain))
        .count();
    let report = Report { items, delivery };
    ctx.emit(&report, || human(&report));
    Ok(if args.deliver && still > 0 {
        exit::QUEUED
    } else {
        exit::OK
    })
}

fn human(r: &Report) -> String {
    let mut out = String::new();
    if let Some(d) = &r.delivery {
        out.push_str(&format!(
            "delivered {}, conflicts {}, refused {}, uncertain {}, still pending {}{}\n",
            d.delivered.len(),
            d.conflicts.len(),
            d.refused.len(),
            d.uncertain.len(),
            d.pending.len(),
            d.stopped
                .as_ref()
                .map(|s| format!("; stopped: {s}"))
                .unwrap_or_default()
        ));
    }
    if r.items.is_empty() {
        out.push_str("the outbox is empty\n");
    }
    for e in &r.items {
        let text = match (&e.body.resposta, e.body.aceitar_sugestao, &e.body.answers) {
            (Some(t), _, _) => t.replace('\n', " "),
            (_, Some(true), _) => "(accept the suggestion)".into(),
            (_, _, Some(a)) => format!("{a:?}"),
            _ => String::new(),
        };
        out.push_str(&format!(
            "{:<9} {} {} {:?}{}\n",
            e.state.as_str(),
            e.question_id,
            e.source,
            text,
            e.detail
                .as_ref()
                .map(|d| format!(" — {d}"))
                .unwrap_or_default()
        ));
    }
    out
}

/// After a door ran on a remote source from its mirror: say since when it is offline.
pub fn note_offline(ctx: &Context) {
    if let AnySource::Resilient(r) = &ctx.source
        && let Some(since) = r.offline_since()
    {
        let since = match (now_ms() - since).max(0) / 60_000 {
            0 => "under a minute".to_string(),
            1 => "1 minute".to_string(),
            mins => format!("{mins} minutes"),
        };
        eprintln!(
            "oq: {} is offline (for {since}): showing the last-known queue; answers you send are queued",
            r.describe()
        );
    }
}
