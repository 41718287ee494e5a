//! Amazon Bedrock's Converse API (`bedrock-converse-stream`) through the real binary against
//! the Bedrock mock, which speaks AWS event-stream frames and refuses requests that are not
//! signed as the AWS SDK signs them (or carry no bearer token): a signed answer with
//! reasoning and cache usage, a tool call and its result, a bearer token, keys from a shared
//! credentials profile, IAM Identity Center, a `credential_process`, a web identity token
//! (STS stand-in), the container endpoint and EC2 instance metadata (IMDS stand-in),
//! missing credentials, an exception in the stream and an error response.
//!
//! Compared with pi 0.73.1 (its AWS SDK client) against the same mock
//! (`scripts/pi/record-bedrock.sh` into `fixtures/pi/bedrock/requests.json`): the same path,
//! SigV4 scope and signed headers (pi's SDK also signs its own `amz-sdk-*`, `content-length`
//! and `x-amz-user-agent` headers, which we do not send), session token, body keys in order,
//! `inferenceConfig`, thinking fields, cache points, tool specs and messages of both turns.

use crate::oneshot_common;

use knightcode_testkit::Fault;
use knightcode_testkit::MockErrorKind;
use knightcode_testkit::MockServer;
use knightcode_testkit::MockUsage;
use knightcode_testkit::RecordedRequest;
use knightcode_testkit::ScriptedReply;
use knightcode_testkit::WireFormat;
use knightcode_testkit::process::OutputWithin;
use knightcode_testkit::process::PROCESS_LIMIT;
use serde_json::Value;
use serde_json::json;

const MODEL: &str = "amazon-bedrock/eu.anthropic.claude-opus-4-6-v1";

/// A sandbox whose `amazon-bedrock` models go to the Bedrock mock.
fn setup(replies: Vec<ScriptedReply>) -> (MockServer, oneshot_common::Sandbox) {
    let server = MockServer::start_blocking(WireFormat::Bedrock, replies).unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    std::fs::write(sb.project.join("notes.txt"), "hello from the fixture\n").unwrap();
    (server, sb)
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

const KEYS: [(&str, &str); 4] = [
    ("AWS_ACCESS_KEY_ID", "AKIDFIXTURE"),
    ("AWS_SECRET_ACCESS_KEY", "fixture-secret"),
    ("AWS_SESSION_TOKEN", "fixture-token"),
    ("AWS_REGION", "eu-west-1"),
];

fn run(sb: &oneshot_common::Sandbox, env: &[(&str, &str)], args: &[&str]) -> Run {
    let output = oneshot_common::command(sb, args)
        .envs(env.iter().copied())
        .output_within(PROCESS_LIMIT, "knightcode")
        .unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// The assistant messages of a `--mode json` run, as `message_end` reports them.
fn assistant_messages(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|event| event["type"] == "message_end" && event["message"]["role"] == "assistant")
        .map(|event| event["message"].clone())
        .collect()
}

/// What `scripts/pi/bedrock_shape.py` keeps of a request (see there).
fn shape(request: &RecordedRequest) -> Value {
    const NEEDED: [&str; 5] = [
        "content-type",
        "host",
        "x-amz-content-sha256",
        "x-amz-date",
        "x-amz-security-token",
    ];
    let authorization = request.header("authorization").map(|value| {
        let Some(rest) = value.strip_prefix("AWS4-HMAC-SHA256 ") else {
            return value.to_owned();
        };
        let field = |name: &str| {
            rest.split(", ")
                .find_map(|part| part.strip_prefix(&format!("{name}=")))
                .unwrap_or("")
                .to_owned()
        };
        let credential = field("Credential");
        let scope: Vec<&str> = credential.split('/').collect();
        let signed = field("SignedHeaders");
        let signed: Vec<&str> = signed.split(';').filter(|h| NEEDED.contains(h)).collect();
        format!(
            "AWS4-HMAC-SHA256 Credential={}/<date>/{}/{}/{}, SignedHeaders={}",
            scope[0],
            scope[2],
            scope[3],
            scope[4],
            signed.join(";")
        )
    });
    let body = &request.body;
    let mut tools: Vec<&str> = body["toolConfig"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["toolSpec"]["name"].as_str())
                .collect()
        })
        .unwrap_or_default();
    tools.sort_unstable();
    let keys = |value: &Value| -> Vec<String> {
        value
            .as_object()
            .map(|o| o.keys().cloned().collect())
            .unwrap_or_default()
    };
    let mut system_blocks: Vec<Vec<String>> = Vec::new();
    for block in body["system"].as_array().into_iter().flatten() {
        let mut names = keys(block);
        names.sort();
        system_blocks.push(names);
    }
    json!({
        "path": request.path,
        "authorization": authorization,
        "content-type": request.header("content-type"),
        "x-amz-security-token": request.header("x-amz-security-token"),
        "x-amz-content-sha256": request.header("x-amz-content-sha256").is_some(),
        "keys": keys(body),
        "inferenceConfig": body.get("inferenceConfig"),
        "additionalModelRequestFields": body.get("additionalModelRequestFields"),
        "system": system_blocks,
        "tools": tools,
        "toolSpecKeys": [keys(&body["toolConfig"]["tools"][0]["toolSpec"])],
        "messages": body["messages"],
    })
}

fn tool_turns() -> Vec<ScriptedReply> {
    vec![
        ScriptedReply::default()
            .with_thinking("I should read it.", Some("sig-fixture"))
            .with_text("Reading.")
            .with_tool_call("tooluse_fixture1", "read", r#"{"path":"notes.txt"}"#),
        ScriptedReply::text("The file says hello."),
    ]
}

/// The same conversation as the reference's recording, compared request by request.
#[test]
fn the_requests_match_the_references() {
    let (server, sb) = setup(tool_turns());
    let run = run(
        &sb,
        &KEYS,
        &[
            "--mode",
            "json",
            "--thinking",
            "high",
            "--model",
            MODEL,
            "What does notes.txt say?",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    let ours: Vec<Value> = server.requests().iter().map(shape).collect();
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fixtures/pi/bedrock/requests.json");
    let theirs: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    assert_eq!(Value::Array(ours), theirs);
    // The signature itself changes with the time; its form is the mock's to check, and it
    // let both requests through.
    assert_eq!(server.requests().len(), 2);
}

#[test]
fn a_signed_answer_with_reasoning_and_cache_usage() {
    let (server, sb) = setup(vec![
        ScriptedReply::default()
            .with_thinking("Thinking it over.", Some("sig-1"))
            .with_text("Hello from Bedrock.")
            .with_usage(MockUsage {
                input: 12,
                output: 5,
                cache_read: 100,
                cache_write: 7,
                ..MockUsage::default()
            }),
    ]);
    let run = run(&sb, &KEYS, &["--mode", "json", "--model", MODEL, "hi"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    let message = &messages[0];
    assert_eq!(message["api"], "bedrock-converse-stream");
    assert_eq!(
        message["content"],
        json!([{"type": "thinking", "thinking": "Thinking it over.", "thinkingSignature": "sig-1"},
               {"type": "text", "text": "Hello from Bedrock."}])
    );
    assert_eq!(message["stopReason"], "stop");
    let usage = &message["usage"];
    assert_eq!(
        (
            &usage["input"],
            &usage["output"],
            &usage["cacheRead"],
            &usage["cacheWrite"]
        ),
        (&json!(12), &json!(5), &json!(100), &json!(7))
    );
    assert_eq!(usage["totalTokens"], 124);
    let request = &server.requests()[0];
    assert!(
        request
            .header("authorization")
            .unwrap()
            .starts_with("AWS4-HMAC-SHA256 Credential=AKIDFIXTURE/")
    );
    assert!(request.header("x-amz-date").is_some());
}

#[test]
fn a_bearer_token_and_a_shared_credentials_profile() {
    let (server, sb) = setup(vec![ScriptedReply::text("one"), ScriptedReply::text("two")]);
    let bearer = run(
        &sb,
        &[("AWS_BEARER_TOKEN_BEDROCK", "bedrock-api-key")],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(bearer.code, 0, "{}", bearer.stderr);
    assert_eq!(bearer.stdout.trim(), "one");
    let aws = sb.home.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("credentials"),
        "[work]\naws_access_key_id = AKIDPROFILE\naws_secret_access_key = profile-secret\n",
    )
    .unwrap();
    std::fs::write(aws.join("config"), "[profile work]\nregion = ap-south-1\n").unwrap();
    let profile = run(
        &sb,
        &[("AWS_PROFILE", "work")],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(profile.code, 0, "{}", profile.stderr);
    assert_eq!(profile.stdout.trim(), "two");
    let requests = server.requests();
    assert_eq!(
        requests[0].header("authorization"),
        Some("Bearer bedrock-api-key")
    );
    assert!(requests[0].header("x-amz-date").is_none());
    let signed = requests[1].header("authorization").unwrap();
    assert!(
        signed.contains("Credential=AKIDPROFILE/") && signed.contains("/ap-south-1/bedrock/"),
        "{signed}"
    );
    assert!(requests[1].header("x-amz-security-token").is_none());
}

#[test]
fn missing_or_unsupported_credentials_say_what_to_set() {
    let (server, sb) = setup(vec![]);
    let none = run(&sb, &[], &["-p", "--model", MODEL, "hi"]);
    assert_ne!(none.code, 0);
    assert!(
        none.stderr.contains("AWS_ACCESS_KEY_ID")
            && none.stderr.contains("AWS_BEARER_TOKEN_BEDROCK"),
        "{}",
        none.stderr
    );
    let aws = sb.home.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile corp]\nsso_session = corp\nsso_account_id = 1\nregion = us-east-1\n",
    )
    .unwrap();
    let sso = run(
        &sb,
        &[("AWS_PROFILE", "corp")],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_ne!(sso.code, 0);
    assert!(
        sso.stderr
            .contains("aws configure export-credentials --profile corp"),
        "{}",
        sso.stderr
    );
    assert!(server.requests().is_empty());
}

#[test]
fn an_exception_in_the_stream_ends_the_answer_with_its_message() {
    let (server, sb) = setup(vec![ScriptedReply::text("Partial answer").with_fault(
        Fault::MidStreamError {
            after_events: 2,
            message: "Malformed input request".into(),
            kind: MockErrorKind::InvalidRequest,
        },
    )]);
    let run = run(&sb, &KEYS, &["--mode", "json", "--model", MODEL, "hi"]);
    let messages = assistant_messages(&run.stdout);
    assert_eq!(messages.len(), 1, "{}", run.stdout);
    let message = &messages[0];
    assert_eq!(message["stopReason"], "error");
    assert_eq!(
        message["errorMessage"],
        "Validation error: Malformed input request"
    );
    // What streamed before the exception stays.
    assert_eq!(message["content"][0]["text"], "Part");
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_error_response_names_the_aws_error() {
    let (server, sb) = setup(vec![ScriptedReply::http_error(400)]);
    let run = run(&sb, &KEYS, &["-p", "--model", MODEL, "hi"]);
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains("Validation error: Invalid request"),
        "{}",
        run.stderr
    );
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn keys_from_the_container_credentials_endpoint() {
    let server = MockServer::builder(WireFormat::Bedrock)
        .document(
            "/v1/credentials",
            json!({"AccessKeyId": "ASIACONTAINER", "SecretAccessKey": "container-secret",
                   "Token": "container-token", "Expiration": "2099-01-01T00:00:00Z"}),
        )
        .replies(vec![ScriptedReply::text("from the task role")])
        .start_blocking()
        .unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let endpoint = format!("{}/v1/credentials", server.root_url());
    let run = run(
        &sb,
        &[
            ("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.as_str()),
            ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "pod-token"),
        ],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "from the task role");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].header("authorization"), Some("pod-token"));
    let signed = requests[1].header("authorization").unwrap();
    assert!(signed.contains("Credential=ASIACONTAINER/"), "{signed}");
    assert_eq!(
        requests[1].header("x-amz-security-token"),
        Some("container-token")
    );
}

#[test]
fn a_container_endpoint_without_credentials_says_so() {
    let (server, sb) = setup(vec![ScriptedReply::text("unused")]);
    let endpoint = format!("{}/v1/nothing-here", server.root_url());
    let run = run(
        &sb,
        &[("AWS_CONTAINER_CREDENTIALS_FULL_URI", endpoint.as_str())],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_ne!(run.code, 0);
    assert!(
        run.stderr.contains(&format!(
            "Could not get AWS credentials from the container credentials endpoint {endpoint}: 404"
        )),
        "{}",
        run.stderr
    );
    // Only the credentials were asked for; nothing unsigned went to Bedrock.
    assert_eq!(server.requests().len(), 1);
    assert_eq!(server.remaining_replies(), 1);
}

/// A profile that signs in with IAM Identity Center: the token `aws sso login` cached is
/// exchanged at the portal (`AWS_ENDPOINT_URL_SSO`, the mock here) for the role's keys.
#[test]
fn a_role_from_iam_identity_center() {
    let server = MockServer::builder(WireFormat::Bedrock)
        .document(
            "/federation/credentials",
            json!({"roleCredentials": {"accessKeyId": "ASIASSO", "secretAccessKey": "sso-secret",
                   "sessionToken": "sso-session-token", "expiration": 4_102_444_800_000_i64}}),
        )
        .replies(vec![ScriptedReply::text("from the SSO role")])
        .start_blocking()
        .unwrap();
    let sb = oneshot_common::sandbox(&server);
    let models = json!({"providers": {"amazon-bedrock": {"baseUrl": server.base_url()}}});
    std::fs::write(sb.agent.join("models.json"), models.to_string()).unwrap();
    let aws = sb.home.join(".aws");
    std::fs::create_dir_all(aws.join("sso/cache")).unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile dev]\nsso_session = corp\nsso_account_id = 111122223333\nsso_role_name = Dev\n\
         region = eu-central-1\n\n[sso-session corp]\nsso_start_url = https://corp.awsapps.com/start\n\
         sso_region = us-east-1\n",
    )
    .unwrap();
    // The SDK's cache file name: the SHA-1 of the session name.
    std::fs::write(
        aws.join("sso/cache/ee0bfd2552fbd840c02cc48b6e823320543c450f.json"),
        r#"{"accessToken": "cached-sso-token", "expiresAt": "2099-01-01T00:00:00Z"}"#,
    )
    .unwrap();
    let portal = server.root_url();
    let run = run(
        &sb,
        &[
            ("AWS_PROFILE", "dev"),
            ("AWS_ENDPOINT_URL_SSO", portal.as_str()),
        ],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "from the SSO role");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{requests:?}");
    assert_eq!(requests[0].method, "GET");
    assert_eq!(requests[0].query, "account_id=111122223333&role_name=Dev");
    assert_eq!(
        requests[0].header("x-amz-sso_bearer_token"),
        Some("cached-sso-token")
    );
    let signed = requests[1].header("authorization").unwrap();
    assert!(
        signed.contains("Credential=ASIASSO/") && signed.contains("/eu-central-1/bedrock/"),
        "{signed}"
    );
    assert_eq!(
        requests[1].header("x-amz-security-token"),
        Some("sso-session-token")
    );
    // Without the cached login: what to run.
    std::fs::remove_dir_all(aws.join("sso")).unwrap();
    let again = run_again(&sb, &portal);
    assert!(
        again.contains("aws sso login --profile dev") && again.contains("no cached login"),
        "{again}"
    );
}

fn run_again(sb: &oneshot_common::Sandbox, portal: &str) -> String {
    run(
        sb,
        &[("AWS_PROFILE", "dev"), ("AWS_ENDPOINT_URL_SSO", portal)],
        &["-p", "--model", MODEL, "hi"],
    )
    .stderr
}

/// On an EC2 instance (the metadata service is the stand-in, named by
/// `AWS_EC2_METADATA_SERVICE_ENDPOINT`, which also makes Bedrock count as configured): the
/// role's keys sign the request, after an IMDSv2 session token.
#[test]
fn keys_from_ec2_instance_metadata() {
    let (server, sb) = setup(vec![ScriptedReply::text("from the instance role")]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let role = knightcode_testkit::Ec2Role {
        name: "bedrock-role".into(),
        access_key_id: "ASIAINSTANCE".into(),
        secret_access_key: "instance-secret".into(),
        token: "instance-token".into(),
        expiration: "2099-01-01T00:00:00Z".into(),
    };
    let imds = runtime
        .block_on(knightcode_testkit::Ec2Metadata::start(
            Some(role),
            "eu-west-3",
        ))
        .unwrap();
    let endpoint = imds.url();
    let run = run(
        &sb,
        &[
            ("AWS_EC2_METADATA_DISABLED", "false"),
            ("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint.as_str()),
            ("AWS_REGION", "eu-west-1"),
        ],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "from the instance role");
    assert_eq!(imds.credential_fetches(), 1);
    assert_eq!(imds.requests()[0].method, "PUT");
    let requests = server.requests();
    assert_eq!(requests.len(), 1, "{requests:?}");
    let signed = requests[0].header("authorization").unwrap();
    assert!(
        signed.contains("Credential=ASIAINSTANCE/") && signed.contains("/eu-west-1/bedrock/"),
        "{signed}"
    );
    assert_eq!(
        requests[0].header("x-amz-security-token"),
        Some("instance-token")
    );
    // Switched off, the instance is neither counted nor asked.
    let off = run_with(
        &sb,
        &[
            ("AWS_EC2_METADATA_DISABLED", "true"),
            ("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint.as_str()),
        ],
    );
    assert!(off.contains("AWS_ACCESS_KEY_ID"), "{off}");
    assert_eq!(imds.credential_fetches(), 1);
}

fn run_with(sb: &oneshot_common::Sandbox, env: &[(&str, &str)]) -> String {
    let run = run(sb, env, &["-p", "--model", MODEL, "hi"]);
    assert_ne!(run.code, 0);
    run.stderr
}

/// A web identity token (as EKS mounts it) traded at STS (the stand-in,
/// `AWS_ENDPOINT_URL_STS`) for the role's keys, which sign the request.
#[test]
fn keys_for_a_web_identity_token() {
    let (server, sb) = setup(vec![ScriptedReply::text("from the service account")]);
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let sts = runtime
        .block_on(knightcode_testkit::StandIn::start(|request| {
            let body = String::from_utf8_lossy(&request.body).into_owned();
            if !body.contains("Action=AssumeRoleWithWebIdentity")
                || !body.contains("WebIdentityToken=eks-token")
            {
                return knightcode_testkit::WebResponse::status(400, "bad request");
            }
            knightcode_testkit::WebResponse::ok(
                "text/xml",
                "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult>\
                 <Credentials><AccessKeyId>ASIAIRSA</AccessKeyId>\
                 <SecretAccessKey>irsa-secret</SecretAccessKey>\
                 <SessionToken>irsa-token</SessionToken>\
                 <Expiration>2099-01-01T00:00:00Z</Expiration></Credentials>\
                 </AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
            )
        }))
        .unwrap();
    let token_file = sb.home.join("eks-token");
    std::fs::write(&token_file, "eks-token").unwrap();
    let sts_url = sts.url();
    let run = run(
        &sb,
        &[
            ("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap()),
            ("AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/agent"),
            ("AWS_ENDPOINT_URL_STS", sts_url.as_str()),
            ("AWS_REGION", "eu-west-1"),
        ],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.trim(), "from the service account");
    assert_eq!(sts.requests().len(), 1);
    let requests = server.requests();
    let signed = requests[0].header("authorization").unwrap();
    assert!(signed.contains("Credential=ASIAIRSA/"), "{signed}");
    assert_eq!(
        requests[0].header("x-amz-security-token"),
        Some("irsa-token")
    );
}

/// A profile's `credential_process` runs and its keys sign the request; a failing one says
/// which profile and command.
#[cfg(unix)]
#[test]
fn keys_from_a_credential_process() {
    let (server, sb) = setup(vec![ScriptedReply::text("from the helper")]);
    let aws = sb.home.join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("config"),
        "[profile helper]\nregion = eu-west-1\ncredential_process = printf \
         '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\", \"SecretAccessKey\": \"s\"}'\n\
         [profile broken]\nregion = eu-west-1\ncredential_process = sh -c 'echo no session >&2; exit 2'\n",
    )
    .unwrap();
    let ok = run(
        &sb,
        &[("AWS_PROFILE", "helper")],
        &["-p", "--model", MODEL, "hi"],
    );
    assert_eq!(ok.code, 0, "{}", ok.stderr);
    assert_eq!(ok.stdout.trim(), "from the helper");
    let signed = server.requests()[0]
        .header("authorization")
        .unwrap()
        .to_owned();
    assert!(
        signed.contains("Credential=ASIAPROC/") && signed.contains("/eu-west-1/bedrock/"),
        "{signed}"
    );
    let broken = run_with(&sb, &[("AWS_PROFILE", "broken")]);
    assert!(
        broken.contains("credential_process of the AWS profile \"broken\"")
            && broken.contains("exited with status 2: no session"),
        "{broken}"
    );
    assert_eq!(server.requests().len(), 1);
}
