//! The PostgreSQL store's schema and its migrations, one SQL step per version.
//!
//! Everything lives in the schema `oq`. `oq.meta` holds the application mark and the
//! version; steps only ever add; a database newer than this binary is refused before
//! anything is written. Migrations run as the schema's owner (`oq store migrate`), which
//! then grants the role that serves exactly what serving needs: reading, and INSERT on
//! the log — no UPDATE, DELETE or TRUNCATE, no ownership (see [`grants`]).
//!
//! The same rules as the SQLite store hold inside the database: triggers refuse UPDATE,
//! DELETE and TRUNCATE on `events`; the open set and the links are derived by a trigger in
//! the same transaction as the append (SECURITY DEFINER: the serving role cannot write
//! them itself), and guarded so that even their owner cannot make them disagree with the
//! log; one declaration and one settlement per question are unique indexes.

/// "oq" followed by a format mark, as the SQLite store's `application_id`.
pub const APPLICATION_ID: i32 = 0x6F71_0214;

/// `MIGRATIONS[n]` takes a database from version `n` to `n + 1`.
pub const MIGRATIONS: &[&str] = &[
    V1_EVENT_LOG,
    V2_BRIDGE_COMMANDS,
    V3_CHAIN,
    V4_OPEN_BY_ASKER,
    V5_SNOOZES_BY_QUESTION,
];

pub const LATEST_VERSION: i32 = MIGRATIONS.len() as i32;

/// The advisory lock every write transaction takes first: writers of all servers on one
/// database decide in turn, as SQLite's `BEGIN IMMEDIATE` makes them, so a decision never
/// rests on a stale read and log positions are handed out in commit order.
pub const WRITE_LOCK: i64 = 0x6F71_0214_0001;
/// The advisory lock a migration holds: two migrators run one after the other.
pub const MIGRATE_LOCK: i64 = 0x6F71_0214_0002;

/// The channel a commit notifies, with the newest position as payload.
pub const CHANNEL: &str = "oq_events";

/// Version 1: the log, its guards, the derived open set and links, the bridges' leases.
pub const V1_EVENT_LOG: &str = r#"
CREATE TABLE oq.meta (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    application integer NOT NULL,
    version     integer NOT NULL
);

CREATE TABLE oq.events (
    seq         bigint PRIMARY KEY CHECK (seq > 0),
    project_seq bigint NOT NULL CHECK (project_seq > 0),
    event_id    text NOT NULL,
    type        text NOT NULL,
    project_id  text NOT NULL,
    session_id  text,
    question_id text,
    task_id     text,
    story_id    text,
    actor       text NOT NULL,
    at          bigint NOT NULL,
    payload     json NOT NULL
);

CREATE FUNCTION oq.refuse_history_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'oq: the event log is append-only; % is refused', TG_OP
        USING ERRCODE = 'OQ001';
END $$;

CREATE TRIGGER events_refuse_change BEFORE UPDATE OR DELETE ON oq.events
    FOR EACH ROW EXECUTE FUNCTION oq.refuse_history_change();
CREATE TRIGGER events_refuse_truncate BEFORE TRUNCATE ON oq.events
    FOR EACH STATEMENT EXECUTE FUNCTION oq.refuse_history_change();

CREATE UNIQUE INDEX events_one_event_id ON oq.events(event_id);
CREATE UNIQUE INDEX events_one_declaration ON oq.events(question_id) WHERE type = 'artifact.open_question';
CREATE UNIQUE INDEX events_one_settlement ON oq.events(question_id)
    WHERE type IN ('open_question.answered', 'open_question.closed');
CREATE UNIQUE INDEX events_one_session ON oq.events(session_id) WHERE type = 'session.started';
CREATE UNIQUE INDEX events_one_story ON oq.events(story_id) WHERE type = 'story.created';
CREATE UNIQUE INDEX events_one_task ON oq.events(task_id) WHERE type = 'task.created';

CREATE INDEX events_by_question ON oq.events(question_id) WHERE question_id IS NOT NULL;
CREATE INDEX events_by_task ON oq.events(task_id) WHERE task_id IS NOT NULL;
CREATE INDEX events_by_story ON oq.events(story_id) WHERE story_id IS NOT NULL;
CREATE UNIQUE INDEX events_project_seq ON oq.events(project_id, project_seq);
CREATE INDEX events_declared ON oq.events(seq) WHERE type = 'artifact.open_question';
CREATE INDEX events_declared_by_project ON oq.events(project_id, seq) WHERE type = 'artifact.open_question';
CREATE INDEX events_parked ON oq.events(seq) WHERE type = 'gate.rescue_parked';

CREATE TABLE oq.open_questions (
    question_id  text PRIMARY KEY,
    project_id   text NOT NULL,
    declared_seq bigint NOT NULL UNIQUE
);
CREATE INDEX open_questions_by_project ON oq.open_questions(project_id, declared_seq);

CREATE TABLE oq.question_links (
    kind        text NOT NULL,
    target      text NOT NULL,
    question_id text NOT NULL,
    PRIMARY KEY (kind, target, question_id)
);

-- Guards: a derived row exists only while the log says so.
CREATE FUNCTION oq.guard_open_questions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT 1 FROM oq.events WHERE type = 'artifact.open_question'
                        AND question_id = NEW.question_id AND seq = NEW.declared_seq)
           OR EXISTS (SELECT 1 FROM oq.events WHERE question_id = NEW.question_id
                       AND type IN ('open_question.answered', 'open_question.closed')) THEN
            RAISE EXCEPTION 'oq: open_questions is derived from the log; this row is not in it'
                USING ERRCODE = 'OQ002';
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM oq.events WHERE question_id = OLD.question_id
                        AND type IN ('open_question.answered', 'open_question.closed')) THEN
            RAISE EXCEPTION 'oq: open_questions is derived from the log; the question is still open'
                USING ERRCODE = 'OQ002';
        END IF;
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'oq: open_questions is derived from the log; % is refused', TG_OP
        USING ERRCODE = 'OQ002';
END $$;
CREATE TRIGGER open_questions_guard BEFORE INSERT OR UPDATE OR DELETE ON oq.open_questions
    FOR EACH ROW EXECUTE FUNCTION oq.guard_open_questions();

CREATE FUNCTION oq.guard_question_links() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' AND EXISTS (SELECT 1 FROM oq.events WHERE type = 'artifact.open_question'
                                     AND question_id = NEW.question_id) THEN
        RETURN NEW;
    END IF;
    RAISE EXCEPTION 'oq: question_links is derived from the log; % of this row is refused', TG_OP
        USING ERRCODE = 'OQ002';
END $$;
CREATE TRIGGER question_links_guard BEFORE INSERT OR UPDATE OR DELETE ON oq.question_links
    FOR EACH ROW EXECUTE FUNCTION oq.guard_question_links();
CREATE TRIGGER open_questions_refuse_truncate BEFORE TRUNCATE ON oq.open_questions
    FOR EACH STATEMENT EXECUTE FUNCTION oq.refuse_history_change();
CREATE TRIGGER question_links_refuse_truncate BEFORE TRUNCATE ON oq.question_links
    FOR EACH STATEMENT EXECUTE FUNCTION oq.refuse_history_change();

-- The elements of a JSON array as text; nothing for anything else.
CREATE FUNCTION oq.texts(j json) RETURNS SETOF text LANGUAGE sql IMMUTABLE AS $$
    SELECT json_array_elements_text(CASE WHEN json_typeof(j) = 'array' THEN j ELSE '[]'::json END)
$$;

-- Maintenance, in the same transaction as the append. SECURITY DEFINER: it writes the
-- derived tables with the owner's rights, which the serving role does not have.
CREATE FUNCTION oq.derive() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = oq, pg_catalog AS $$
BEGIN
    IF NEW.type = 'artifact.open_question' THEN
        -- Not when the settlement is already in (a copy inserts both in one statement,
        -- and AFTER triggers run when the statement's rows are all in).
        INSERT INTO oq.open_questions (question_id, project_id, declared_seq)
        SELECT NEW.question_id, NEW.project_id, NEW.seq
         WHERE NOT EXISTS (SELECT 1 FROM oq.events WHERE question_id = NEW.question_id
                            AND type IN ('open_question.answered', 'open_question.closed'));
        INSERT INTO oq.question_links (kind, target, question_id)
        SELECT 'rule', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'regras') t
        UNION SELECT 'story', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'historias') t
        UNION SELECT 'task', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'tarefas') t;
    ELSIF NEW.type IN ('open_question.answered', 'open_question.closed') THEN
        DELETE FROM oq.open_questions WHERE question_id = NEW.question_id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER events_derive AFTER INSERT ON oq.events
    FOR EACH ROW EXECUTE FUNCTION oq.derive();

-- Bridges: which server drives each [[opencode]] upstream (a lease renewed while it
-- lives; `lease.rs`). Operational state, not history: rows change. The single-flight
-- claim of a request is no row here but an event of the log (`open_question.submitted`),
-- decided under the writers' lock, so it holds across servers and a failover.
CREATE TABLE oq.bridge_leases (
    upstream   text PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);
"#;

/// Version 2: the commands a server that does not drive an upstream leaves for the one
/// that does (`commands.rs`), and an index to find an upstream's setting in the log.
///
/// Operational state, not history, like the leases: a row is taken, answered and then
/// removed by the server that asked. What a command does is noted in the log by the
/// driving server, exactly as when it was asked there.
pub const V2_BRIDGE_COMMANDS: &str = r#"
CREATE TABLE oq.bridge_commands (
    id           bigserial PRIMARY KEY,
    upstream     text NOT NULL,
    actor        text NOT NULL,
    command      json NOT NULL,
    state        text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'taken', 'done')),
    taken_by     text,
    outcome      json,
    requested_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX bridge_commands_pending ON oq.bridge_commands(upstream, id) WHERE state = 'pending';
-- The upstream's auto-delegate setting is the newest such note (`oq.events` is the truth
-- every server reads, not a file of one of them).
CREATE INDEX events_bridge_settings ON oq.events(project_id, seq) WHERE type = 'bridge.settings_changed';
"#;

/// Version 3: every event's link in its project's hash chain (`chain.rs`), written by
/// the event's own INSERT; the history before it is chained once by the migration
/// ([`CHAINED_FROM`]).
pub const V3_CHAIN: &str =
    "ALTER TABLE oq.events ADD COLUMN chain bytea CHECK (length(chain) = 32);";

/// Version 4: the open set carries each question's asker (`autor`), indexed with its
/// project and position in byte order (the list's `COLLATE "C"`), so the queue by
/// asker is an index walk that stops after a page, as SQLite's schema v10 makes it,
/// instead of a sort of every open question on a key read out of its declaration's JSON.
/// Existing rows take it from their declaration, with the guard (which refuses every
/// UPDATE) off for that one statement inside the migration's transaction; derive and
/// guard then write and check it.
pub const V4_OPEN_BY_ASKER: &str = r#"
ALTER TABLE oq.open_questions ADD COLUMN autor text NOT NULL DEFAULT '';
ALTER TABLE oq.open_questions DISABLE TRIGGER open_questions_guard;
UPDATE oq.open_questions o SET autor = coalesce(d.payload->>'autor', '')
  FROM oq.events d WHERE d.seq = o.declared_seq;
ALTER TABLE oq.open_questions ENABLE TRIGGER open_questions_guard;
CREATE INDEX open_questions_by_asker ON oq.open_questions(project_id, autor COLLATE "C", declared_seq);

CREATE OR REPLACE FUNCTION oq.guard_open_questions() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NOT EXISTS (SELECT 1 FROM oq.events WHERE type = 'artifact.open_question'
                        AND question_id = NEW.question_id AND seq = NEW.declared_seq
                        AND coalesce(payload->>'autor', '') = NEW.autor)
           OR EXISTS (SELECT 1 FROM oq.events WHERE question_id = NEW.question_id
                       AND type IN ('open_question.answered', 'open_question.closed')) THEN
            RAISE EXCEPTION 'oq: open_questions is derived from the log; this row is not in it'
                USING ERRCODE = 'OQ002';
        END IF;
        RETURN NEW;
    ELSIF TG_OP = 'DELETE' THEN
        IF NOT EXISTS (SELECT 1 FROM oq.events WHERE question_id = OLD.question_id
                        AND type IN ('open_question.answered', 'open_question.closed')) THEN
            RAISE EXCEPTION 'oq: open_questions is derived from the log; the question is still open'
                USING ERRCODE = 'OQ002';
        END IF;
        RETURN OLD;
    END IF;
    RAISE EXCEPTION 'oq: open_questions is derived from the log; % is refused', TG_OP
        USING ERRCODE = 'OQ002';
END $$;

CREATE OR REPLACE FUNCTION oq.derive() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = oq, pg_catalog AS $$
BEGIN
    IF NEW.type = 'artifact.open_question' THEN
        INSERT INTO oq.open_questions (question_id, project_id, declared_seq, autor)
        SELECT NEW.question_id, NEW.project_id, NEW.seq, coalesce(NEW.payload->>'autor', '')
         WHERE NOT EXISTS (SELECT 1 FROM oq.events WHERE question_id = NEW.question_id
                            AND type IN ('open_question.answered', 'open_question.closed'));
        INSERT INTO oq.question_links (kind, target, question_id)
        SELECT 'rule', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'regras') t
        UNION SELECT 'story', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'historias') t
        UNION SELECT 'task', t, NEW.question_id FROM oq.texts(NEW.payload -> 'afeta' -> 'tarefas') t;
    ELSIF NEW.type IN ('open_question.answered', 'open_question.closed') THEN
        DELETE FROM oq.open_questions WHERE question_id = NEW.question_id;
    END IF;
    RETURN NULL;
END $$;
"#;

/// Version 5: a question's snooze events indexed by question and position, so "its
/// newest snooze" (`snoozes.rs`, the writer's read-ahead) is one probe. Without it the
/// planner may answer `... ORDER BY seq DESC LIMIT 1` by walking the whole log backwards
/// from its newest event, filtering — for a question never snoozed, every event — inside
/// the write lock: batches of seconds, every server's writer waiting (seen in the bench
/// on a log of 250,000 events not yet analysed).
pub const V5_SNOOZES_BY_QUESTION: &str =
    "CREATE INDEX events_snoozes ON oq.events(question_id, seq)
    WHERE type IN ('open_question.snoozed', 'open_question.unsnoozed');";

/// The version whose migration chains the existing history.
pub const CHAINED_FROM: i32 = 3;

/// What the role that serves may do, granted by `oq store migrate --grant ROLE`: read
/// everything, append to the log, keep the bridges' leases and commands. Nothing else: it
/// cannot change or remove an event, nor write the derived tables itself.
pub fn grants(role: &str) -> String {
    let r = quote_ident(role);
    format!(
        "GRANT USAGE ON SCHEMA oq TO {r};
         GRANT SELECT ON oq.meta, oq.open_questions, oq.question_links TO {r};
         GRANT SELECT, INSERT ON oq.events TO {r};
         GRANT SELECT, INSERT, UPDATE, DELETE ON oq.bridge_leases TO {r};
         GRANT SELECT, INSERT, UPDATE, DELETE ON oq.bridge_commands TO {r};
         GRANT USAGE ON SEQUENCE oq.bridge_commands_id_seq TO {r};"
    )
}

/// A role name as an SQL identifier.
pub fn quote_ident(name: &str) -> String {
    format!("\"{}\"", name.replace('"', "\"\""))
}

/// `text` as an SQL string constant that means the same whatever the session's
/// `standard_conforming_strings` (an escape string: backslash and quote escaped).
pub fn quote_literal(text: &str) -> String {
    format!("E'{}'", text.replace('\\', "\\\\").replace('\'', "\\'"))
}
