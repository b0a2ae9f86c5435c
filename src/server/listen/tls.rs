//! TLS for `oq serve`: rustls on ring (the provider the clients already build; no
//! OpenSSL, no cmake), HTTP/1.1 only. The certificate chain and key come from the
//! config's `tls_cert` / `tls_key` (PEM) and are read again on SIGHUP: a renewed
//! certificate is used by the next connection, the open ones keep theirs.
//!
//! Invariant: a reload that fails (a missing file, a key that does not match) keeps the
//! certificate in use, so a bad renewal never leaves the server without one.

use std::path::Path;
use std::sync::{Arc, RwLock};

use rustls::ServerConfig;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::server::config::TlsFiles;

/// The acceptor new connections use, swapped on reload.
pub struct Tls {
    files: TlsFiles,
    current: RwLock<TlsAcceptor>,
}

impl Tls {
    /// Reads `files`; the error names the file and what is wrong with it.
    pub fn load(files: &TlsFiles) -> Result<Tls, String> {
        Ok(Tls {
            files: files.clone(),
            current: RwLock::new(acceptor(files)?),
        })
    }

    /// Reads the files again; on failure the certificate in use stays.
    pub fn reload(&self) -> Result<(), String> {
        let fresh = acceptor(&self.files)?;
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = fresh;
        Ok(())
    }

    pub fn acceptor(&self) -> TlsAcceptor {
        self.current
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The warning for plain HTTP beyond loopback (`None` on loopback or with TLS): bearer
/// tokens and answers would cross the network in clear.
pub fn plain_beyond_loopback(addr: std::net::SocketAddr, tls: bool) -> Option<String> {
    (!tls && !addr.ip().is_loopback()).then(|| {
        format!(
            "listening on {addr}, beyond loopback, WITHOUT TLS: bearer tokens and answers cross the network in clear; set tls_cert and tls_key, or listen on 127.0.0.1 behind a TLS proxy"
        )
    })
}

fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, String> {
    let shown = |p: &Path| p.display().to_string();
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|it| it.collect::<Result<Vec<_>, _>>())
        .map_err(|e| format!("tls_cert {}: {e}", shown(&files.cert)))?;
    if certs.is_empty() {
        return Err(format!(
            "tls_cert {}: no certificate in it",
            shown(&files.cert)
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| format!("tls_key {}: {e}", shown(&files.key)))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS: {e}"))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            format!(
                "tls_cert {} / tls_key {}: {e}",
                shown(&files.cert),
                shown(&files.key)
            )
        })?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

/// SIGHUP reads the certificate and key again (a renewal); a bad pair keeps the old one.
#[cfg(unix)]
pub async fn reload_on_hangup(tls: Arc<Tls>, mut stopping: tokio::sync::watch::Receiver<bool>) {
    use tokio::signal::unix::{SignalKind, signal};
    let Ok(mut hup) = signal(SignalKind::hangup()) else {
        return;
    };
    loop {
        tokio::select! {
            _ = hup.recv() => {}
            _ = stopping.wait_for(|s| *s) => return,
        }
        match tls.reload() {
            Ok(()) => {
                tracing::info!("TLS certificate reloaded");
                eprintln!("oq serve: TLS certificate reloaded");
            }
            Err(e) => {
                tracing::warn!(error = %e, "TLS reload failed; the certificate in use stays");
                eprintln!("oq serve: TLS reload failed ({e}); the certificate in use stays");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_http_is_warned_about_beyond_loopback_only() {
        let at = |a: &str| a.parse::<std::net::SocketAddr>().expect("addr");
        let loud = plain_beyond_loopback(at("0.0.0.0:7878"), false).expect("warned");
        assert!(
            loud.contains("WITHOUT TLS") && loud.contains("0.0.0.0:7878"),
            "{loud}"
        );
        assert!(plain_beyond_loopback(at("192.168.1.5:7878"), false).is_some());
        assert!(plain_beyond_loopback(at("0.0.0.0:7878"), true).is_none());
        assert!(plain_beyond_loopback(at("127.0.0.1:7878"), false).is_none());
        assert!(plain_beyond_loopback(at("[::1]:7878"), false).is_none());
    }
}
