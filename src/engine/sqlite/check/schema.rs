//! The schema a store of this version must have, object by object: its tables, indexes
//! and triggers as the migrations wrote them. A store whose `sqlite_schema` differs had
//! its guards dropped or altered by hand (or is damaged): oq refuses to write into it.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use rusqlite::Connection;

use super::super::schema::{self as migrations, APPLICATION_ID, LATEST_VERSION};

/// `name → (type, sql)` of every object, SQLite's own internal ones left out.
pub type Objects = BTreeMap<String, (String, String)>;

pub fn objects(conn: &Connection) -> rusqlite::Result<Objects> {
    let mut stmt = conn.prepare(
        "SELECT name, type, coalesce(sql, '') FROM sqlite_schema
          WHERE name NOT LIKE 'sqlite_%' ORDER BY name",
    )?;
    let rows = stmt.query_map([], |r| {
        let sql: String = r.get(2)?;
        Ok((r.get(0)?, (r.get(1)?, normal(&sql))))
    })?;
    rows.collect()
}

/// SQL text as compared: without quoting and with single spaces, so the same object
/// written by another SQLite version (which may quote a renamed table) compares equal.
fn normal(sql: &str) -> String {
    sql.replace(['"', '`', '[', ']'], "")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

/// The objects every migration, run from an empty store, leaves: what every store of
/// [`LATEST_VERSION`] holds, however old it was when it was migrated (each step's SQL is
/// the same text either way).
pub fn expected() -> &'static Result<Objects, String> {
    static EXPECTED: OnceLock<Result<Objects, String>> = OnceLock::new();
    EXPECTED.get_or_init(|| {
        let build = || -> rusqlite::Result<Objects> {
            let conn = Connection::open_in_memory()?;
            migrations::migrate(&conn, 0)?;
            conn.pragma_update(None, "application_id", APPLICATION_ID)?;
            conn.pragma_update(None, "user_version", LATEST_VERSION)?;
            objects(&conn)
        };
        build().map_err(|e| format!("the expected schema cannot be built: {e}"))
    })
}

/// The SHA-256 of [`expected`]'s objects, as [`digest`] hashes them. Every open of a
/// store compares its objects against this one value; building the expected schema (every
/// migration run in memory, a few milliseconds) is left to a store that differs, to name
/// what differs. `the_expected_digest_is_what_the_migrations_write` holds it true: a new
/// migration changes it, and that test prints the new value.
const EXPECTED_DIGEST: &str = "de9350178526271d7d589d4a5089a9d0bc945f84ad8569dfaad87a71aabf9907";

/// A digest of the objects, names, types and normalised SQL, in name order.
fn digest(objects: &Objects) -> String {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    for (name, (kind, sql)) in objects {
        for part in [name, kind, sql] {
            h.update(part.as_bytes());
            h.update([0]);
        }
    }
    hex::encode(h.finalize())
}

/// What differs between the store's objects and the expected ones, one line each.
pub fn differences(conn: &Connection) -> rusqlite::Result<Vec<String>> {
    let found = objects(conn)?;
    if digest(&found) == EXPECTED_DIGEST {
        return Ok(Vec::new());
    }
    let expected = match expected() {
        Ok(e) => e,
        Err(e) => return Ok(vec![e.clone()]),
    };
    let mut out = Vec::new();
    for (name, (kind, sql)) in expected {
        match found.get(name) {
            None => out.push(format!("{kind} {name} is missing")),
            Some((k, s)) if k != kind || s != sql => {
                out.push(format!("{kind} {name} differs from what oq wrote"))
            }
            Some(_) => {}
        }
    }
    for (name, (kind, _)) in &found {
        if !expected.contains_key(name) {
            out.push(format!("{kind} {name} is not oq's"));
        }
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_expected_digest_is_what_the_migrations_write() {
        let expected = expected().as_ref().unwrap();
        assert_eq!(
            digest(expected),
            EXPECTED_DIGEST,
            "the migrations changed the schema: set EXPECTED_DIGEST to the left value"
        );
    }

    #[test]
    fn an_object_changed_by_hand_misses_the_digest_and_is_named() {
        let conn = Connection::open_in_memory().unwrap();
        migrations::migrate(&conn, 0).unwrap();
        assert_eq!(differences(&conn).unwrap(), Vec::<String>::new());
        conn.execute_batch("DROP TRIGGER events_refuse_update")
            .unwrap();
        let found = differences(&conn).unwrap();
        assert_eq!(
            found,
            ["trigger events_refuse_update is missing"],
            "{found:?}"
        );
    }
}
