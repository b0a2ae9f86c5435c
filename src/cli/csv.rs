//! A CSV writer of RFC 4180's shape, small enough to own: a field with a comma, a quote,
//! a CR or LF (or a leading or trailing space, which some readers trim) is quoted, its
//! quotes doubled; records end in CRLF. The decision history's `--csv` export.

/// One field as CSV writes it.
pub fn field(text: &str) -> String {
    let needs =
        text.contains([',', '"', '\r', '\n']) || text.starts_with(' ') || text.ends_with(' ');
    if needs {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_string()
    }
}

/// One record, CRLF-terminated.
pub fn record<S: AsRef<str>>(fields: &[S]) -> String {
    let mut out = fields
        .iter()
        .map(|f| field(f.as_ref()))
        .collect::<Vec<_>>()
        .join(",");
    out.push_str("\r\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader of what `record` writes, to check the round trip (RFC 4180's grammar).
    fn parse(text: &str) -> Vec<Vec<String>> {
        let (mut rows, mut row, mut cur) = (Vec::new(), Vec::new(), String::new());
        let (mut quoted, mut chars) = (false, text.chars().peekable());
        while let Some(c) = chars.next() {
            match (quoted, c) {
                (true, '"') if chars.peek() == Some(&'"') => {
                    chars.next();
                    cur.push('"');
                }
                (true, '"') => quoted = false,
                (true, c) => cur.push(c),
                (false, '"') => quoted = true,
                (false, ',') => row.push(std::mem::take(&mut cur)),
                (false, '\r') if chars.peek() == Some(&'\n') => {
                    chars.next();
                    row.push(std::mem::take(&mut cur));
                    rows.push(std::mem::take(&mut row));
                }
                (false, c) => cur.push(c),
            }
        }
        rows
    }

    #[test]
    fn awkward_fields_survive_the_round_trip() {
        let fields = [
            "plain",
            "a, b",
            "she said \"no\"",
            "two\nlines",
            "cr\r\nlf",
            " padded ",
            "",
            "«ünïcode»",
        ];
        let text = record(&fields) + &record(&["x", "y"]);
        assert_eq!(
            parse(&text),
            vec![
                fields.map(String::from).to_vec(),
                vec!["x".into(), "y".into()]
            ]
        );
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a\"b"), "\"a\"\"b\"");
    }
}
