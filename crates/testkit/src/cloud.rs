//! Stand-ins for the cloud services credential chains ask on loopback: the EC2 instance
//! metadata service (IMDSv2, [`Ec2Metadata`]), the Google Compute Engine metadata server
//! ([`GceMetadata`]) and any fixed-answer endpoint with a check per request
//! ([`StandIn`], for STS or the container credentials endpoint). Each records its requests.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering;

use tokio::io::BufReader;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

use crate::error::TestkitError;
use crate::http::read_request;
use crate::http::write_sized;
use crate::web::WebRequest;
use crate::web::WebResponse;

type Handler = dyn Fn(&WebRequest) -> WebResponse + Send + Sync;

/// A loopback server that answers each request with what `handler` returns.
pub struct StandIn {
    requests: Arc<Mutex<Vec<WebRequest>>>,
    addr: SocketAddr,
    task: JoinHandle<()>,
}

impl Drop for StandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl StandIn {
    /// Starts serving on `127.0.0.1` on the current runtime.
    pub async fn start(
        handler: impl Fn(&WebRequest) -> WebResponse + Send + Sync + 'static,
    ) -> Result<Self, TestkitError> {
        let addr: SocketAddr = ([127, 0, 0, 1], 0).into();
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let addr = listener
            .local_addr()
            .map_err(|source| TestkitError::Bind { addr, source })?;
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let task = tokio::spawn(serve(listener, Arc::clone(&requests), handler));
        Ok(Self {
            requests,
            addr,
            task,
        })
    }

    /// `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<WebRequest> {
        self.requests
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

async fn serve(
    listener: TcpListener,
    requests: Arc<Mutex<Vec<WebRequest>>>,
    handler: Arc<Handler>,
) {
    while let Ok((stream, _)) = listener.accept().await {
        let requests = Arc::clone(&requests);
        let handler = Arc::clone(&handler);
        tokio::spawn(async move {
            let mut stream = BufReader::new(stream);
            while let Ok(Some(request)) = read_request(&mut stream).await {
                let seen = WebRequest {
                    path: request.path.clone(),
                    query: request.query.clone(),
                    headers: request.headers.clone(),
                    method: request.method.clone(),
                    body: request.body.clone(),
                };
                let response = handler(&seen);
                requests
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(seen);
                if response.stall {
                    std::future::pending::<()>().await;
                }
                let sent = write_sized(
                    stream.get_mut(),
                    response.status,
                    response.headers,
                    &response.body,
                )
                .await;
                if sent.is_err() || request.wants_close() {
                    return;
                }
            }
        });
    }
}

/// The role an [`Ec2Metadata`] instance has, and the keys it hands out.
#[derive(Debug, Clone)]
pub struct Ec2Role {
    pub name: String,
    pub access_key_id: String,
    pub secret_access_key: String,
    pub token: String,
    /// ISO 8601, as IMDS writes it.
    pub expiration: String,
}

/// The EC2 instance metadata service, IMDSv2 only: `PUT /latest/api/token` (which must carry
/// `x-aws-ec2-metadata-token-ttl-seconds`) hands out a token that every `GET` must carry in
/// `x-aws-ec2-metadata-token` (else `401`). An instance without a role answers `404` for
/// the role list.
pub struct Ec2Metadata {
    server: StandIn,
    credential_fetches: Arc<AtomicUsize>,
}

const IMDS_TOKEN: &str = "imds-session-token";

impl Ec2Metadata {
    pub async fn start(role: Option<Ec2Role>, region: &str) -> Result<Self, TestkitError> {
        let region = region.to_owned();
        let credential_fetches = Arc::new(AtomicUsize::new(0));
        let fetches = Arc::clone(&credential_fetches);
        let server = StandIn::start(move |request| {
            if request.path == "/latest/api/token" {
                return match (
                    request.method.as_str(),
                    request.header("x-aws-ec2-metadata-token-ttl-seconds"),
                ) {
                    ("PUT", Some(_)) => WebResponse::ok("text/plain", IMDS_TOKEN),
                    ("PUT", None) => WebResponse::status(400, "missing ttl"),
                    _ => WebResponse::status(405, "method not allowed"),
                };
            }
            if request.method != "GET"
                || request.header("x-aws-ec2-metadata-token") != Some(IMDS_TOKEN)
            {
                return WebResponse::status(401, "unauthorized");
            }
            const CREDENTIALS: &str = "/latest/meta-data/iam/security-credentials/";
            match (request.path.as_str(), &role) {
                ("/latest/meta-data/placement/region", _) => {
                    WebResponse::ok("text/plain", region.clone())
                }
                (CREDENTIALS, Some(role)) => WebResponse::ok("text/plain", role.name.clone()),
                (path, Some(role)) if path.strip_prefix(CREDENTIALS) == Some(&role.name) => {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let body = serde_json::json!({
                        "Code": "Success",
                        "LastUpdated": "2026-01-01T00:00:00Z",
                        "Type": "AWS-HMAC",
                        "AccessKeyId": role.access_key_id,
                        "SecretAccessKey": role.secret_access_key,
                        "Token": role.token,
                        "Expiration": role.expiration,
                    });
                    WebResponse::ok("text/plain", body.to_string())
                }
                _ => WebResponse::status(404, "not found"),
            }
        })
        .await?;
        Ok(Self {
            server,
            credential_fetches,
        })
    }

    /// `http://127.0.0.1:<port>`, for `AWS_EC2_METADATA_SERVICE_ENDPOINT`.
    pub fn url(&self) -> String {
        self.server.url()
    }

    pub fn requests(&self) -> Vec<WebRequest> {
        self.server.requests()
    }

    /// How many times the role's keys were handed out.
    pub fn credential_fetches(&self) -> usize {
        self.credential_fetches.load(Ordering::SeqCst)
    }
}

/// The Google Compute Engine metadata server: every request must carry
/// `Metadata-Flavor: Google` (else `403`); it answers the default service account's token
/// and the project id.
pub struct GceMetadata {
    server: StandIn,
    token_fetches: Arc<AtomicUsize>,
}

impl GceMetadata {
    pub async fn start(
        access_token: &str,
        expires_in: u64,
        project: Option<&str>,
    ) -> Result<Self, TestkitError> {
        let access_token = access_token.to_owned();
        let project = project.map(str::to_owned);
        let token_fetches = Arc::new(AtomicUsize::new(0));
        let fetches = Arc::clone(&token_fetches);
        let server = StandIn::start(move |request| {
            if request.header("metadata-flavor") != Some("Google") {
                return WebResponse::status(403, "Missing Metadata-Flavor:Google header.");
            }
            match (request.path.as_str(), &project) {
                ("/computeMetadata/v1/instance/service-accounts/default/token", _) => {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    let body = serde_json::json!({
                        "access_token": access_token,
                        "expires_in": expires_in,
                        "token_type": "Bearer",
                    });
                    WebResponse::ok("application/json", body.to_string())
                }
                ("/computeMetadata/v1/project/project-id", Some(project)) => {
                    WebResponse::ok("application/text", project.clone())
                }
                _ => WebResponse::status(404, "not found"),
            }
        })
        .await?;
        Ok(Self {
            server,
            token_fetches,
        })
    }

    /// `127.0.0.1:<port>`, for `GCE_METADATA_HOST` (a host, not a URL).
    pub fn host(&self) -> String {
        self.server.addr.to_string()
    }

    pub fn requests(&self) -> Vec<WebRequest> {
        self.server.requests()
    }

    /// How many access tokens were handed out.
    pub fn token_fetches(&self) -> usize {
        self.token_fetches.load(Ordering::SeqCst)
    }
}
