//! The configuration's refusals and defaults, read from TOML text.
use super::*;

const HASH: &str = "0000000000000000000000000000000000000000000000000000000000000000";

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(Path::new("/etc/oq/serve.toml"), text)
}

#[test]
fn a_good_file_loads_with_defaults() {
    let c = parse(&format!(
        "data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{HASH}\"\n[[projects]]\nid = \"p\"\nmembers = [\"a\"]\n"
    ))
    .expect("valid");
    assert_eq!(c.listen.to_string(), DEFAULT_LISTEN);
    assert_eq!(c.data_dir, PathBuf::from("/etc/oq/data"));
    assert_eq!(c.projects[0].members, vec!["a".to_string()]);
}

fn with_person() -> String {
    format!(
        "data_dir = \"data\"\n[[users]]\nid = \"a\"\nkind = \"person\"\ntoken_sha256 = \"{HASH}\"\n[[projects]]\nid = \"p\"\nmembers = [\"a\"]\n"
    )
}

#[test]
fn an_opencode_upstream_loads_with_defaults_and_hides_its_password() {
    let c = parse(&format!(
        "{}[[opencode]]\nname = \"oc\"\nurl = \"http://127.0.0.1:4096/\"\ndirectories = [\"/w\"]\nproject = \"p\"\nanswerer = \"a\"\npassword = \"s3cret\"\n",
        with_person()
    ))
    .expect("valid");
    let o = &c.opencode[0];
    assert_eq!(o.url, "http://127.0.0.1:4096");
    assert!(o.auto_delegate);
    assert_eq!(o.window_ms, 30_000);
    assert!(!format!("{o:?}").contains("s3cret"));
}

#[test]
fn opencode_errors_name_the_line() {
    let base = with_person();
    let lines = base.lines().count();
    for (extra, line, what) in [
        (
            "project = \"nope\"\nanswerer = \"a\"\n",
            5,
            "not a configured project",
        ),
        ("project = \"p\"\nanswerer = \"zz\"\n", 6, "not a person"),
    ] {
        let e = parse(&format!(
            "{base}[[opencode]]\nname = \"oc\"\nurl = \"http://h:1\"\ndirectories = [\"/w\"]\n{extra}"
        ))
        .expect_err(what);
        assert_eq!(e.line, Some(lines + line), "{e}");
        assert!(e.to_string().contains(what), "{e}");
    }
    let e = parse(&format!(
        "{base}[[opencode]]\nname = \"oc\"\nurl = \"http://h:1\"\ndirectories = [\"rel\"]\nproject = \"p\"\nanswerer = \"a\"\n"
    ))
    .expect_err("relative");
    assert_eq!(e.line, Some(lines + 4), "{e}");
}

#[test]
fn errors_name_file_and_line() {
    let e = parse(
        "data_dir = \"d\"\n\n[[users]]\nid = \"a\"\nkind = \"robot\"\ntoken_sha256 = \"x\"\n",
    )
    .expect_err("bad kind");
    assert_eq!(e.line, Some(5), "{e}");
    assert!(e.to_string().starts_with("/etc/oq/serve.toml:5: "), "{e}");
    let e = parse("data_dir = \"d\"\nlisten = = 3\n").expect_err("syntax");
    assert_eq!(e.line, Some(2), "{e}");
}

#[test]
fn limits_default_and_refuse_zero_naming_the_line() {
    let c = parse(&with_person()).expect("valid");
    assert_eq!(c.limits, Limits::default());
    let c = parse(&format!(
        "{}[limits]\nidle_seconds = 5\nmax_connections = 3\n",
        with_person()
    ))
    .expect("valid");
    assert_eq!(c.limits.idle, std::time::Duration::from_secs(5));
    assert_eq!(c.limits.max_connections, 3);
    let lines = with_person().lines().count();
    let e = parse(&format!("{}[limits]\nwrite_seconds = 0\n", with_person())).expect_err("zero");
    assert_eq!(e.line, Some(lines + 2), "{e}");
    assert!(
        e.to_string().contains("limits.write_seconds must be 1 to"),
        "{e}"
    );
    assert!(parse(&format!("{}[limits]\nheader_read = 5\n", with_person())).is_err());
}

#[test]
fn notify_targets_load_hide_their_key_and_refuse_a_url_that_is_not_http() {
    let hook = "[[notify]]\nproject = \"p\"\nkind = \"webhook\"\nurl = \"https://hooks.example/oq\"\nsecret = \"0123456789abcdef-key\"\n";
    let ntfy = "[[notify]]\nproject = \"p\"\nkind = \"ntfy\"\nurl = \"https://ntfy.sh/oq-team\"\ninclude_text = false\n";
    let c = parse(&format!("{}{hook}{ntfy}", with_person())).expect("valid");
    assert_eq!(c.notify.len(), 2);
    assert!(c.notify[0].include_text);
    assert!(!c.notify[1].include_text);
    assert_eq!(c.notify[0].max_attempts, notify::DEFAULT_MAX_ATTEMPTS);
    assert!(!format!("{c:?}").contains("0123456789abcdef-key"));
    for (table, named) in [
        (
            hook.replace("https://hooks.example/oq", "ftp://hooks.example/oq"),
            "is not an http:// or https:// URL",
        ),
        (
            hook.replace("https://hooks.example/oq", "hooks.example"),
            "is not an http:// or https:// URL",
        ),
        (
            hook.replace("secret = \"0123456789abcdef-key\"\n", ""),
            "needs secret or secret_env",
        ),
        (
            hook.replace("0123456789abcdef-key", "short"),
            "at least 16 bytes",
        ),
        (hook.replace("webhook", "email"), "neither webhook nor ntfy"),
        (
            hook.replace("project = \"p\"", "project = \"q\""),
            "not a configured project",
        ),
        (
            format!("{ntfy}secret = \"0123456789abcdef-key\"\n"),
            "takes no secret",
        ),
        (format!("{ntfy}max_attempts = 0\n"), "at least 1"),
    ] {
        let e = parse(&format!("{}{table}", with_person())).expect_err(named);
        assert!(e.to_string().contains(named), "{e}");
        assert!(e.line.is_some(), "{e}");
    }
}

#[test]
fn a_top_key_written_under_a_table_says_where_it_belongs() {
    let e = parse(&format!(
        "{}store = \"postgres://oq@db/oq\"\n",
        with_person()
    ))
    .expect_err("refused");
    assert_eq!(e.line, Some(9), "{e}");
    assert!(e.message.contains("unknown field `store`"), "{e}");
    assert!(
        e.message.contains("`store` is a key of the file's top"),
        "{e}"
    );
    // A key that belongs nowhere gets no such hint.
    let e = parse(&format!("{}colour = 1\n", with_person())).expect_err("refused");
    assert!(e.message.contains("unknown field `colour`"), "{e}");
    assert!(!e.message.contains("top"), "{e}");
}
