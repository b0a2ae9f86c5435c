//! `oq serve` over TLS, with certificates made here (rcgen): it serves https:// to a
//! client that trusts only the test's CA, not plain HTTP; the HTTP source speaks https://
//! with a pinned `ca` in its profile; SIGHUP swaps in a renewed certificate for new
//! connections, and a bad renewal keeps the one in use.
#![allow(clippy::unwrap_used)]

#[path = "serve_process/mod.rs"]
mod serve_process;

use std::path::Path;
use std::time::{Duration, Instant};

use serve_process::Serve;

/// A CA and a certificate for 127.0.0.1 it signed, as PEM: (ca, cert, key).
fn certificate(name: &str) -> (String, String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, format!("oq test CA {name}"));
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let leaf = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".into()])
        .unwrap()
        .signed_by(&key, &ca_cert, &ca_key)
        .unwrap();
    (ca_cert.pem(), leaf.pem(), key.serialize_pem())
}

fn install(dir: &Path, (ca, cert, key): &(String, String, String)) {
    std::fs::write(dir.join("ca.pem"), ca).unwrap();
    std::fs::write(dir.join("cert.pem"), cert).unwrap();
    std::fs::write(dir.join("key.pem"), key).unwrap();
}

fn trusting(ca_pem: &str) -> reqwest::Client {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .tls_certs_only([reqwest::Certificate::from_pem(ca_pem.as_bytes()).unwrap()])
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap()
}

async fn health(client: &reqwest::Client, url: &str) -> Result<u16, String> {
    client
        .get(format!("{url}/healthz"))
        .send()
        .await
        .map(|r| r.status().as_u16())
        .map_err(|e| format!("{e:?}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn https_with_a_certificate_made_here_the_source_pinned_and_a_reload_on_sighup() {
    let mut s = Serve::with_config("tls_cert = \"cert.pem\"\ntls_key = \"key.pem\"");
    let first = certificate("one");
    install(s.dir.path(), &first);
    s.start();
    let https = format!("https://127.0.0.1:{}", s.port);

    assert_eq!(health(&trusting(&first.0), &https).await, Ok(200));
    let plain = health(&trusting(&first.0), &s.base).await;
    assert!(
        plain.is_err(),
        "plain HTTP was served on the TLS port: {plain:?}"
    );
    let system_roots = reqwest::Client::builder().build().unwrap();
    assert!(
        health(&system_roots, &https).await.is_err(),
        "a certificate of the test's own CA passed the system's roots"
    );

    // The HTTP source, with the CA pinned in its profile.
    let config_dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        s.dir.path().join("ca.pem"),
        config_dir.path().join("team-ca.pem"),
    )
    .unwrap();
    std::fs::write(
        config_dir.path().join("config.toml"),
        format!(
            "[profiles.team]\nsource = \"{https}\"\ntoken = \"{}\"\nproject = \"loja\"\nca = \"team-ca.pem\"\n",
            s.token
        ),
    )
    .unwrap();
    let client_dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(serve_process::OQ)
        .env("OQ_CONFIG_DIR", config_dir.path())
        .env_remove("OQ_SOURCE")
        .env_remove("OQ_TOKEN")
        .arg("--data-dir")
        .arg(client_dir.path())
        .args(["--profile", "team", "--json", "session", "start"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "oq over https with a pinned CA: {}",
        String::from_utf8_lossy(&out.stderr)
    );

    // A renewal signed by another CA: new connections get it after SIGHUP.
    let second = certificate("two");
    install(s.dir.path(), &second);
    s.signal("HUP");
    let started = Instant::now();
    while health(&trusting(&second.0), &https).await != Ok(200) {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "SIGHUP did not reload"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        health(&trusting(&first.0), &https).await.is_err(),
        "the old certificate is still served"
    );

    // A broken renewal keeps the certificate in use.
    std::fs::write(s.dir.path().join("cert.pem"), "not a certificate").unwrap();
    s.signal("HUP");
    let started = Instant::now();
    while !s.stderr().contains("TLS reload failed") {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "{}",
            s.stderr()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(health(&trusting(&second.0), &https).await, Ok(200));
    assert!(
        s.stderr().contains("TLS certificate reloaded"),
        "{}",
        s.stderr()
    );
}
