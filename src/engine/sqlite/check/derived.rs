//! What the indexes claim, recomputed from the log alone: the log is read by table scan
//! (`NOT INDEXED`, never through an index a damaged page could have changed) into the
//! sets below, and compared with what the engine reads — the open set, the links, one
//! settlement and one declaration per question, sessions, per-project positions, and
//! the search index: exactly the log's declarations and answers up to
//! `search_indexed.upto`, which is one row not past the log's end.

use rusqlite::Connection;

/// The log's own answers, each from one scan of the events table.
const FROM_THE_LOG: &str = "
WITH decl AS MATERIALIZED (
    SELECT question_id, project_id, seq, session_id, payload FROM events NOT INDEXED
     WHERE type = 'artifact.open_question'),
settled AS MATERIALIZED (
    SELECT question_id FROM events NOT INDEXED
     WHERE type IN ('open_question.answered', 'open_question.closed')),
started AS MATERIALIZED (
    SELECT session_id, payload FROM events NOT INDEXED WHERE type = 'session.started'),
indexed AS (SELECT coalesce((SELECT upto FROM search_indexed WHERE id = 1), 0) AS upto),
searched AS MATERIALIZED (
    SELECT d.seq AS rowid, d.seq AS qseq,
           json_extract(d.payload, '$.pergunta') || char(10) || coalesce(json_extract(d.payload, '$.sugestao'), '') AS body
      FROM decl d WHERE d.seq <= (SELECT upto FROM indexed)
    UNION ALL
    SELECT a.seq, d.seq, json_extract(a.payload, '$.resposta')
      FROM events a NOT INDEXED JOIN decl d ON d.question_id = a.question_id
     WHERE a.type = 'open_question.answered' AND a.seq <= (SELECT upto FROM indexed)),
open AS (
    SELECT question_id, project_id, seq, coalesce(json_extract(payload, '$.autor'), '') AS autor FROM decl
     WHERE question_id NOT IN (SELECT question_id FROM settled)),
links AS (
    SELECT 'rule' AS kind, j.value AS target, d.question_id FROM decl d, json_each(d.payload, '$.afeta.regras') j
    UNION SELECT 'story', j.value, d.question_id FROM decl d, json_each(d.payload, '$.afeta.historias') j
    UNION SELECT 'task', j.value, d.question_id FROM decl d, json_each(d.payload, '$.afeta.tarefas') j)
";

/// One query per claim: the ids it returns are where index and log disagree.
const CLAIMS: &[(&str, &str)] = &[
    (
        "open set: open in the log, missing from open_questions",
        "SELECT question_id FROM open EXCEPT SELECT question_id FROM open_questions",
    ),
    (
        "open set: in open_questions, not open in the log (or its project, position or asker differs)",
        "SELECT question_id FROM (SELECT question_id, project_id, declared_seq, autor FROM open_questions
                                  EXCEPT SELECT question_id, project_id, seq, autor FROM open)",
    ),
    (
        "links: declared, missing from question_links",
        "SELECT DISTINCT question_id FROM (SELECT kind, target, question_id FROM links
                                           EXCEPT SELECT kind, target, question_id FROM question_links)",
    ),
    (
        "links: in question_links, not declared",
        "SELECT DISTINCT question_id FROM (SELECT kind, target, question_id FROM question_links
                                           EXCEPT SELECT kind, target, question_id FROM links)",
    ),
    (
        "settlements: a question answered or closed more than once",
        "SELECT question_id FROM settled GROUP BY question_id HAVING count(*) > 1",
    ),
    (
        "settlements: settled but never declared",
        "SELECT question_id FROM settled WHERE question_id NOT IN (SELECT question_id FROM decl)",
    ),
    (
        "declarations: a question declared more than once",
        "SELECT question_id FROM decl GROUP BY question_id HAVING count(*) > 1",
    ),
    (
        "sessions: a session started more than once",
        "SELECT session_id FROM started GROUP BY session_id HAVING count(*) > 1",
    ),
    (
        "sessions: a question in a session that never started",
        "SELECT question_id FROM decl WHERE session_id NOT IN (SELECT session_id FROM started)",
    ),
    (
        "sessions: started without an author",
        "SELECT session_id FROM started WHERE coalesce(json_extract(payload, '$.author'), '') = ''",
    ),
    (
        "search: indexed in the log, missing from question_search or altered (event seq)",
        "SELECT CAST(rowid AS TEXT) FROM (SELECT rowid, qseq, body FROM searched
                            EXCEPT SELECT rowid, qseq, body FROM question_search)",
    ),
    (
        "search: in question_search, not in the log up to search_indexed (event seq)",
        "SELECT CAST(rowid AS TEXT) FROM (SELECT rowid, qseq, body FROM question_search
                            EXCEPT SELECT rowid, qseq, body FROM searched)",
    ),
    (
        "search: search_indexed is not one row at or before the log's end",
        "SELECT 'upto ' || coalesce(group_concat(upto), 'missing') FROM search_indexed
          HAVING count(*) != 1
              OR max(upto) > (SELECT coalesce(max(seq), 0) FROM events NOT INDEXED)",
    ),
    (
        "positions: a project's positions are not 1, 2, 3… in log order",
        "SELECT DISTINCT project_id FROM (
             SELECT project_id, project_seq,
                    row_number() OVER (PARTITION BY project_id ORDER BY seq) AS n
               FROM events NOT INDEXED)
          WHERE project_seq != n",
    ),
];

/// Every disagreement between the indexes and the log, one line each (`claim: id, id,
/// …`); a claim that cannot even be recomputed (a damaged payload) is one too.
pub fn disagreements(conn: &Connection) -> Vec<String> {
    let mut out = Vec::new();
    for (claim, sql) in CLAIMS {
        let found = conn
            .prepare(&format!("{FROM_THE_LOG} {sql}"))
            .and_then(|mut stmt| {
                stmt.query_map([], |r| r.get::<_, Option<String>>(0))?
                    .map(|r| r.map(Option::unwrap_or_default))
                    .collect::<rusqlite::Result<Vec<String>>>()
            });
        match found {
            Ok(ids) if ids.is_empty() => {}
            Ok(ids) => {
                let shown: Vec<&str> = ids.iter().take(5).map(String::as_str).collect();
                let more = match ids.len() {
                    n if n > 5 => format!(" … ({n} in all)"),
                    _ => String::new(),
                };
                out.push(format!("{claim}: {}{more}", shown.join(", ")));
            }
            Err(e) => out.push(format!("{claim}: cannot be recomputed ({e})")),
        }
    }
    out
}
