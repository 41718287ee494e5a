//! TLS for provider requests: rustls with ring, certificates checked by the platform verifier.
//!
//! The platform verifier reads every root certificate of the system when it is created
//! (on Linux `/etc/ssl/certs`: ~150 files, ~300 certificates to decode), which was about half
//! of a one-shot prompt against a local `http://` model. [`LazyPlatformVerifier`] creates it
//! on the first certificate it has to check, that is on the first `https://` handshake, so a
//! process that only talks plain HTTP never loads the roots and the client stays one client
//! for both schemes.

use std::sync::Arc;
use std::sync::OnceLock;

use rustls::DigitallySignedStruct;
use rustls::SignatureScheme;
use rustls::client::danger::HandshakeSignatureValid;
use rustls::client::danger::ServerCertVerified;
use rustls::client::danger::ServerCertVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::CertificateDer;
use rustls::pki_types::ServerName;
use rustls::pki_types::UnixTime;
use rustls_platform_verifier::Verifier;

type Loader = dyn Fn(Arc<CryptoProvider>) -> Result<Verifier, rustls::Error> + Send + Sync;

/// The platform's certificate verifier, created on first use. A failure to create it (no
/// root certificates on the system) is kept and fails every later handshake the same way.
pub(crate) struct LazyPlatformVerifier {
    provider: Arc<CryptoProvider>,
    load: Box<Loader>,
    verifier: OnceLock<Result<Verifier, rustls::Error>>,
}

impl std::fmt::Debug for LazyPlatformVerifier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LazyPlatformVerifier")
            .field("loaded", &self.verifier.get().is_some())
            .finish_non_exhaustive()
    }
}

impl LazyPlatformVerifier {
    /// Verifies against the system's root certificates.
    pub(crate) fn new(provider: Arc<CryptoProvider>) -> Self {
        Self::with_loader(provider, Box::new(Verifier::new))
    }

    fn with_loader(provider: Arc<CryptoProvider>, load: Box<Loader>) -> Self {
        Self {
            provider,
            load,
            verifier: OnceLock::new(),
        }
    }

    fn verifier(&self) -> Result<&Verifier, rustls::Error> {
        self.verifier
            .get_or_init(|| {
                (self.load)(self.provider.clone()).map_err(|error| {
                    rustls::Error::General(format!(
                        "could not load the system's root certificates ({error}); install \
                         them (e.g. the ca-certificates package) or point SSL_CERT_FILE at a \
                         certificate bundle"
                    ))
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Whether the verifier (and with it the root certificates) has been loaded.
    #[cfg(test)]
    fn is_loaded(&self) -> bool {
        self.verifier.get().is_some()
    }
}

impl ServerCertVerifier for LazyPlatformVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        self.verifier()?.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        )
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verifier()?.verify_tls13_signature(message, cert, dss)
    }

    /// Asked for every ClientHello, before any certificate arrives: answered from the crypto
    /// provider, which is what the platform verifier answers too, without loading the roots.
    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

/// The rustls configuration of every provider request: ring, safe default protocol versions,
/// HTTP/2 or HTTP/1.1 by ALPN, and `verifier` for server certificates.
pub(crate) fn client_config(
    provider: Arc<CryptoProvider>,
    verifier: Arc<LazyPlatformVerifier>,
) -> Result<rustls::ClientConfig, rustls::Error> {
    let mut tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(tls)
}

#[cfg(test)]
mod tests {
    //! The certificates in `tests/data/tls` are throwaway test data (valid until 2126):
    //! `ca.der`, a P-256 CA "knightcode test CA", and `leaf.der` / `leaf.key.der` (PKCS#8),
    //! issued by it for IP 127.0.0.1 and `localhost`, made with `openssl req -x509` and
    //! `openssl x509 -req`.

    use std::io::Read;
    use std::io::Write;
    use std::net::TcpListener;

    use rustls::pki_types::PrivateKeyDer;
    use rustls::pki_types::PrivatePkcs8KeyDer;

    use super::*;
    use crate::error::StreamFailure;
    use crate::http::build_http_client_with;

    const CA: &[u8] = include_bytes!("../tests/data/tls/ca.der");
    const LEAF: &[u8] = include_bytes!("../tests/data/tls/leaf.der");
    const LEAF_KEY: &[u8] = include_bytes!("../tests/data/tls/leaf.key.der");

    fn provider() -> Arc<CryptoProvider> {
        Arc::new(rustls::crypto::ring::default_provider())
    }

    /// A server on 127.0.0.1 that answers one request with `200 ok`, over TLS with the test
    /// leaf certificate when `tls` is set. A failed handshake just ends the connection.
    fn one_shot_server(tls: bool) -> (u16, std::thread::JoinHandle<()>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let handle = std::thread::spawn(move || {
            let Ok((stream, _)) = listener.accept() else {
                return;
            };
            if tls {
                let mut config = rustls::ServerConfig::builder_with_provider(provider())
                    .with_safe_default_protocol_versions()
                    .expect("protocol versions")
                    .with_no_client_auth()
                    .with_single_cert(
                        vec![CertificateDer::from(LEAF.to_vec())],
                        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(LEAF_KEY.to_vec())),
                    )
                    .expect("test certificate");
                config.alpn_protocols = vec![b"http/1.1".to_vec()];
                let connection = rustls::ServerConnection::new(Arc::new(config)).expect("tls");
                answer(rustls::StreamOwned::new(connection, stream));
            } else {
                answer(stream);
            }
        });
        (port, handle)
    }

    fn answer(mut stream: impl Read + Write) {
        let mut head = Vec::new();
        let mut buffer = [0u8; 1024];
        while !head.windows(4).any(|w| w == b"\r\n\r\n") {
            match stream.read(&mut buffer) {
                Ok(0) | Err(_) => return,
                Ok(n) => head.extend_from_slice(&buffer[..n]),
            }
        }
        let _ = stream
            .write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok");
        let _ = stream.flush();
    }

    async fn get(client: &reqwest::Client, url: &str) -> Result<String, StreamFailure> {
        let response = client
            .get(url)
            .send()
            .await
            .map_err(|e| crate::http::transport_failure(&e))?;
        response
            .text()
            .await
            .map_err(|e| crate::http::transport_failure(&e))
    }

    #[tokio::test]
    async fn plain_http_never_loads_the_root_certificates() {
        let verifier = Arc::new(LazyPlatformVerifier::with_loader(
            provider(),
            Box::new(|_| panic!("the roots were loaded for a plain http request")),
        ));
        let client = build_http_client_with(provider(), verifier.clone()).expect("client");
        let (port, server) = one_shot_server(false);
        let body = get(&client, &format!("http://127.0.0.1:{port}/v1")).await;
        server.join().expect("server");
        assert_eq!(body.as_deref(), Ok("ok"));
        assert!(!verifier.is_loaded());
    }

    #[tokio::test]
    async fn https_checks_the_server_against_the_system_roots() {
        let verifier = Arc::new(LazyPlatformVerifier::new(provider()));
        let client = build_http_client_with(provider(), verifier.clone()).expect("client");
        let (port, server) = one_shot_server(true);
        let error = get(&client, &format!("https://127.0.0.1:{port}/v1"))
            .await
            .expect_err("the test CA is not a system root");
        server.join().expect("server");
        assert!(verifier.is_loaded());
        // UnknownIssuer, or the load failure on a system without any roots.
        assert!(
            error.message.contains("UnknownIssuer") || error.message.contains("root certificates"),
            "{error}"
        );
    }

    #[tokio::test]
    async fn https_succeeds_with_a_trusted_root() {
        let verifier = Arc::new(LazyPlatformVerifier::with_loader(
            provider(),
            Box::new(|provider| {
                Verifier::new_with_extra_roots([CertificateDer::from(CA.to_vec())], provider)
            }),
        ));
        assert!(!verifier.is_loaded(), "building loads nothing");
        let client = build_http_client_with(provider(), verifier.clone()).expect("client");
        assert!(!verifier.is_loaded(), "building the client loads nothing");
        let (port, server) = one_shot_server(true);
        let body = get(&client, &format!("https://127.0.0.1:{port}/v1")).await;
        server.join().expect("server");
        assert_eq!(body.as_deref(), Ok("ok"));
        assert!(verifier.is_loaded());
    }
}
