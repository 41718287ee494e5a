//! Gemini through Vertex AI (`google-vertex`), through the real binary against the Gemini
//! mock (Vertex streams the same `GenerateContentResponse`s): with an API key the global
//! publisher path and `x-goog-api-key`; with application default credentials the
//! project's and location's path and an access token from the credentials file — a service
//! account's signed JWT exchanged at the OAuth stand-in, kept for the next request — and
//! clear messages when the project or the credentials are missing.

use crate::oneshot_common;

use knightcode_testkit::MockServer;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::oauth::OAuthServer;
use knightcode_testkit::oauth::TokenAnswer;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::json;

const MODEL: &str = "google-vertex/gemini-2.5-flash";

/// A sandbox whose `google-vertex` models go to the Gemini mock (a base URL without the
/// `{location}` template stands for a proxy, as the reference takes it).
fn setup(replies: Vec<ScriptedReply>) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(WireFormat::Google, replies).unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"google-vertex": {"baseUrl": format!("{}/vertex", server.root_url())}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    (server, sb)
}

fn run(sb: &oneshot_common::Sandbox, env: &[(&str, &str)], prompt: &str) -> (i32, String, String) {
    let output = oneshot_common::command(sb, &["-p", "--model", MODEL, prompt])
        .envs(env.iter().copied())
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn header<'a>(request: &'a knightcode_testkit::RecordedRequest, name: &str) -> Option<&'a str> {
    request.header(name)
}

#[test]
fn an_api_key_goes_to_the_publisher_path() {
    let (server, sb) = setup(vec![ScriptedReply::text("from vertex")]);
    let (code, stdout, stderr) = run(&sb, &[("GOOGLE_CLOUD_API_KEY", "vertex-key")], "hi");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "from vertex");
    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(
        request.path,
        "/vertex/v1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(request.query, "alt=sse");
    assert_eq!(header(request, "x-goog-api-key"), Some("vertex-key"));
    assert_eq!(header(request, "authorization"), None);
    // The Gemini API's request body, model in the path.
    assert_eq!(request.body["contents"][0]["parts"][0]["text"], "hi");
    assert!(request.body["generationConfig"]["maxOutputTokens"].is_u64());
    assert!(request.body.get("model").is_none());
}

/// A service account key file whose token endpoint is the stand-in.
fn service_account(sb: &oneshot_common::Sandbox, token_uri: &str) -> std::path::PathBuf {
    let path = sb.home.join("service-account.json");
    let file = json!({
        "type": "service_account",
        "project_id": "kc-test",
        "private_key_id": "key-1",
        "private_key": knightcode_testkit::oauth::SERVICE_ACCOUNT_KEY,
        "client_email": "agent@kc-test.iam.gserviceaccount.com",
        "token_uri": token_uri,
    });
    std::fs::write(&path, file.to_string()).unwrap();
    path
}

#[test]
fn default_credentials_sign_a_jwt_and_reuse_the_token() {
    // Two requests in one run (a tool call, then the answer): one token serves both.
    let (server, sb) = setup(vec![
        ScriptedReply::tool_call("call-1", "read", r#"{"path": "notes.txt"}"#),
        ScriptedReply::text("second"),
    ]);
    let tokens = OAuthServer::start(TokenAnswer::Tokens {
        access: "ya29.test-token".into(),
        refresh: String::new(),
        expires_in: 3600,
    })
    .unwrap();
    let credentials = service_account(&sb, &tokens.google_token_url());
    let env = [
        (
            "GOOGLE_APPLICATION_CREDENTIALS",
            credentials.to_str().unwrap(),
        ),
        ("GOOGLE_CLOUD_PROJECT", "kc-test"),
        ("GOOGLE_CLOUD_LOCATION", "europe-west4"),
    ];
    let (code, stdout, stderr) = run(&sb, &env, "one");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "second");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    assert_eq!(
        header(&requests[1], "authorization"),
        Some("Bearer ya29.test-token")
    );
    let request = &requests[0];
    assert_eq!(
        request.path,
        "/vertex/v1/projects/kc-test/locations/europe-west4/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
    );
    assert_eq!(
        header(request, "authorization"),
        Some("Bearer ya29.test-token")
    );
    assert_eq!(header(request, "x-goog-api-key"), None);
    let grants = tokens.exchanges();
    assert_eq!(grants.len(), 1, "{grants:?}");
    let grant = &grants[0];
    assert_eq!(
        grant["grant_type"],
        "urn:ietf:params:oauth:grant-type:jwt-bearer"
    );
    assert_eq!(
        grant["claims"]["iss"],
        "agent@kc-test.iam.gserviceaccount.com"
    );
    assert_eq!(grant["claims"]["aud"], tokens.google_token_url());
    assert_eq!(
        grant["claims"]["scope"],
        "https://www.googleapis.com/auth/cloud-platform"
    );
}

#[test]
fn a_refused_grant_and_missing_settings_say_what_to_do() {
    let (server, sb) = setup(vec![ScriptedReply::text("unused")]);
    let tokens = OAuthServer::start(TokenAnswer::Refuse {
        status: 400,
        body: json!({"error": "invalid_grant", "error_description": "Invalid JWT Signature."})
            .to_string(),
    })
    .unwrap();
    let credentials = service_account(&sb, &tokens.google_token_url());
    let credentials = credentials.to_str().unwrap();
    let (code, _, stderr) = run(
        &sb,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", credentials),
            ("GOOGLE_CLOUD_PROJECT", "kc-test"),
            ("GOOGLE_CLOUD_LOCATION", "global"),
        ],
        "hi",
    );
    assert_ne!(code, 0);
    assert!(
        stderr.contains("Could not get a Google access token"),
        "{stderr}"
    );
    assert!(stderr.contains("Invalid JWT Signature."), "{stderr}");
    assert!(
        stderr.contains("gcloud auth application-default login"),
        "{stderr}"
    );

    // Without a location nothing is sent and the message names the variable.
    let (code, _, stderr) = run(
        &sb,
        &[
            ("GOOGLE_APPLICATION_CREDENTIALS", credentials),
            ("GOOGLE_CLOUD_PROJECT", "kc-test"),
        ],
        "hi",
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("GOOGLE_CLOUD_LOCATION"), "{stderr}");
    assert!(server.requests().is_empty());
}

#[test]
fn a_gcloud_user_login_spends_its_refresh_token() {
    let (server, sb) = setup(vec![ScriptedReply::text("as the user")]);
    let tokens = OAuthServer::start(TokenAnswer::Tokens {
        access: "ya29.user-token".into(),
        refresh: String::new(),
        expires_in: 3600,
    })
    .unwrap();
    // Where `gcloud auth application-default login` writes it (no variable names it).
    let dir = sb.home.join(".config/gcloud");
    std::fs::create_dir_all(&dir).unwrap();
    let login = json!({
        "type": "authorized_user",
        "client_id": "client-1.apps.googleusercontent.com",
        "client_secret": "secret-1",
        "refresh_token": "1//refresh",
        "token_uri": tokens.google_token_url(),
    });
    std::fs::write(
        dir.join("application_default_credentials.json"),
        login.to_string(),
    )
    .unwrap();
    let (code, stdout, stderr) = run(
        &sb,
        &[
            ("GOOGLE_CLOUD_PROJECT", "kc-test"),
            ("GOOGLE_CLOUD_LOCATION", "us-central1"),
        ],
        "hi",
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "as the user");
    assert_eq!(
        header(&server.requests()[0], "authorization"),
        Some("Bearer ya29.user-token")
    );
    let grants = tokens.exchanges();
    assert_eq!(grants[0]["grant_type"], "refresh_token");
    assert_eq!(grants[0]["refresh_token"], "1//refresh");
    assert_eq!(
        grants[0]["client_id"],
        "client-1.apps.googleusercontent.com"
    );
}

/// On a Google Cloud machine (the metadata server is the stand-in `GCE_METADATA_HOST` names,
/// which also makes Vertex count as configured): no credentials file, no project set; the
/// service account's token and the project come from the metadata server.
#[test]
fn the_metadata_server_of_a_google_cloud_machine() {
    let (server, sb) = setup(vec![
        ScriptedReply::tool_call("call-1", "read", r#"{"path": "notes.txt"}"#),
        ScriptedReply::text("from the machine"),
    ]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let metadata = runtime
        .block_on(knightcode_testkit::GceMetadata::start(
            "ya29.machine",
            3600,
            Some("kc-gce"),
        ))
        .unwrap();
    let host = metadata.host();
    let env = [
        ("METADATA_SERVER_DETECTION", "assume-present"),
        ("GCE_METADATA_HOST", host.as_str()),
        ("GOOGLE_CLOUD_LOCATION", "us-central1"),
    ];
    let (code, stdout, stderr) = run(&sb, &env, "hi");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout.trim(), "from the machine");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(
            request.path,
            "/vertex/v1/projects/kc-gce/locations/us-central1/publishers/google/models/gemini-2.5-flash:streamGenerateContent"
        );
        assert_eq!(
            header(request, "authorization"),
            Some("Bearer ya29.machine")
        );
    }
    // One token and one project for the whole run.
    assert_eq!(metadata.token_fetches(), 1);
    assert_eq!(metadata.requests().len(), 2);

    // Switched off, the machine's account is neither counted nor asked.
    let (code, _, stderr) = run(
        &sb,
        &[
            ("METADATA_SERVER_DETECTION", "none"),
            ("GCE_METADATA_HOST", host.as_str()),
            ("GOOGLE_CLOUD_LOCATION", "us-central1"),
        ],
        "hi",
    );
    assert_ne!(code, 0);
    assert!(stderr.contains("GOOGLE_CLOUD_PROJECT"), "{stderr}");
    assert_eq!(metadata.requests().len(), 2);
}
