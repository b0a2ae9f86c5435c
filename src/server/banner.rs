//! What `oq serve` says on standard error once it listens: where the store is, how many
//! users and projects, each OpenCode bridge and each notify target. Never a password, a
//! key or a topic URL (a topic's name may be its secret).

use super::config::{self, Config};

/// The lines after "listening on …".
pub(super) fn announce(config: &Config) {
    let store = match &config.store {
        config::StoreChoice::Sqlite => config.data_dir.display().to_string(),
        config::StoreChoice::Postgres(target) => target.shown().to_string(),
    };
    eprintln!(
        "oq serve: store in {store}, {} users, {} projects",
        config.users.len(),
        config.projects.len()
    );
    for oc in &config.opencode {
        eprintln!(
            "oq serve: opencode {} at {} ({} directories) feeds project {}, answered by {}",
            oc.name,
            oc.url,
            oc.directories.len(),
            oc.project,
            oc.answerer
        );
    }
    // Neither the URL (a topic's name may be its secret) nor the key is printed.
    for n in &config.notify {
        let kind = match n.kind {
            config::NotifyKind::Webhook(_) => "webhook",
            config::NotifyKind::Ntfy => "ntfy topic",
        };
        let text = if n.include_text { "with" } else { "without" };
        eprintln!(
            "oq serve: notify: a {kind} is told of each new question of {} ({text} its text)",
            n.project
        );
    }
}
