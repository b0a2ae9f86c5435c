//! The notice line above the hint bar: one line of feedback, replaced by the next. Pure
//! helpers shared by `update` and the modules it calls (keys, submit, auto, cleanup), so
//! none of them imports `update` back.

use super::model::{Model, Notice, NoticeKind};

pub(super) fn info(model: &mut Model, text: String) {
    model.notice = Some(Notice {
        kind: NoticeKind::Info,
        text,
    });
}

/// An error about the link to the source: it goes when the link is back, unless
/// another notice took its place meanwhile (`update::link_cleared`).
pub(super) fn link_error(model: &mut Model, text: String) {
    model.link_notice = Some(text.clone());
    error(model, text);
}

pub(super) fn error(model: &mut Model, text: String) {
    model.notice = Some(Notice {
        kind: NoticeKind::Error,
        text,
    });
}
