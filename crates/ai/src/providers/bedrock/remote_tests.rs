//! The credential sources asked over the network, against the stand-ins of
//! `knightcode_testkit` on loopback: what is asked, how keys are cached, what failures say.

use std::sync::Arc;

use knightcode_testkit::Ec2Metadata;
use knightcode_testkit::Ec2Role;
use knightcode_testkit::StandIn;
use knightcode_testkit::WebResponse;

use super::*;
use crate::config_value::MapEnv;

/// 2015-08-30T12:36:00Z.
const NOW: i64 = 1_440_938_160_000;

fn model(base_url: &str) -> Model {
    Model::new(
        "amazon-bedrock",
        "us.anthropic.claude-sonnet-4-5-v1",
        Api::BedrockConverseStream,
        base_url,
    )
}

fn role(expiration: &str) -> Ec2Role {
    Ec2Role {
        name: "bedrock-role".into(),
        access_key_id: "AKIDIMDS".into(),
        secret_access_key: "imds-secret".into(),
        token: "imds-session".into(),
        expiration: expiration.into(),
    }
}

/// Builds and signs one request as the client would, with `cache` shared between calls.
async fn sign(
    model: &Model,
    env: &MapEnv,
    cache: &Arc<CredentialCache>,
    now_ms: i64,
) -> Result<HttpRequest, StreamFailure> {
    let options = StreamOptions::default();
    let mut request = build_request_in(model, &Context::default(), &options, "ua", env)?;
    let signer = signer_in(model, &options, cache, env)?.expect("keys sign");
    let http = crate::http::build_http_client().unwrap();
    signer.sign(&http, &mut request, now_ms).await?;
    Ok(request)
}

#[tokio::test]
async fn instance_metadata_keys_and_region() {
    let imds = Ec2Metadata::start(Some(role("2015-08-30T13:00:00Z")), "eu-west-3")
        .await
        .unwrap();
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url().as_str()),
    ]);
    let cache = Arc::default();
    let catalog = model("https://bedrock-runtime.us-east-1.amazonaws.com");
    let request = sign(&catalog, &env, &cache, NOW).await.unwrap();
    // No region configured: the instance's, for the host and the signature.
    assert_eq!(
        request.url,
        "https://bedrock-runtime.eu-west-3.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-v1/converse-stream"
    );
    let authorization = request.headers.get("authorization").unwrap();
    assert!(
        authorization.contains("Credential=AKIDIMDS/20150830/eu-west-3/bedrock/aws4_request"),
        "{authorization}"
    );
    assert_eq!(
        request.headers.get("x-amz-security-token"),
        Some("imds-session")
    );
    let requests = imds.requests();
    let token_calls: Vec<_> = requests
        .iter()
        .filter(|r| r.path == "/latest/api/token")
        .collect();
    assert!(!token_calls.is_empty());
    for call in &token_calls {
        assert_eq!(call.method, "PUT");
        assert!(
            call.header("x-aws-ec2-metadata-token-ttl-seconds")
                .is_some()
        );
    }
    assert!(
        requests
            .iter()
            .filter(|r| r.method == "GET")
            .all(|r| r.header("x-aws-ec2-metadata-token").is_some())
    );

    // The keys hold until five minutes before their expiry; the region is asked once.
    let again = sign(&model(""), &env, &cache, NOW + 60_000).await.unwrap();
    assert!(again.url.contains("eu-west-3"));
    assert_eq!(imds.credential_fetches(), 1);
    let regions = |imds: &Ec2Metadata| {
        imds.requests()
            .iter()
            .filter(|r| r.path.ends_with("/placement/region"))
            .count()
    };
    assert_eq!(regions(&imds), 1);
    sign(&model(""), &env, &cache, NOW + 20 * 60_000)
        .await
        .unwrap();
    assert_eq!(imds.credential_fetches(), 2);

    // A configured region wins; the instance's is not asked.
    let imds = Ec2Metadata::start(Some(role("2015-08-30T13:00:00Z")), "eu-west-3")
        .await
        .unwrap();
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_REGION", "us-west-2"),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url().as_str()),
    ]);
    let request = sign(&model(""), &env, &Arc::default(), NOW).await.unwrap();
    assert!(request.url.contains("us-west-2"), "{}", request.url);
    assert_eq!(regions(&imds), 0);
}

#[tokio::test]
async fn instance_metadata_failures_say_what_to_do() {
    // An instance without a role.
    let imds = Ec2Metadata::start(None, "eu-west-3").await.unwrap();
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url().as_str()),
    ]);
    let failure = sign(&model(""), &env, &Arc::default(), NOW)
        .await
        .unwrap_err();
    assert_eq!(failure.class, ErrorClass::Auth);
    assert!(
        failure.message.contains("no IAM role"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("AWS_ACCESS_KEY_ID"),
        "{}",
        failure.message
    );

    // No metadata service at all (a closed port), and one that never answers: both give up
    // within the short timeout and say how to skip the source.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let stalled = StandIn::start(|_| WebResponse::stall()).await.unwrap();
    for endpoint in [closed, stalled.url()] {
        let env = MapEnv::new([
            ("HOME", "/nonexistent"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_EC2_METADATA_SERVICE_ENDPOINT", endpoint.as_str()),
        ]);
        let failure = sign(&model(""), &env, &Arc::default(), NOW)
            .await
            .unwrap_err();
        assert!(
            failure
                .message
                .contains("no instance metadata service answered"),
            "{}",
            failure.message
        );
        assert!(
            failure.message.contains("AWS_EC2_METADATA_DISABLED=true"),
            "{}",
            failure.message
        );
    }
}

#[tokio::test]
async fn container_keys_are_cached_until_they_expire() {
    let server = StandIn::start(|request| {
        if request.header("authorization") != Some("container-secret") {
            return WebResponse::status(401, "no token");
        }
        WebResponse::ok(
            "application/json",
            r#"{"AccessKeyId":"AKIDECS","SecretAccessKey":"s","Token":"ecs-session",
                "Expiration":"2015-08-30T13:00:00Z"}"#,
        )
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "container-secret\n").unwrap();
    let url = format!("{}/v1/credentials", server.url());
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", url.as_str()),
        (
            "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE",
            token_file.to_str().unwrap(),
        ),
        // Never reached: the container endpoint comes first.
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9"),
    ]);
    let cache = Arc::default();
    let request = sign(&model(""), &env, &cache, NOW).await.unwrap();
    assert!(
        request
            .headers
            .get("authorization")
            .unwrap()
            .contains("Credential=AKIDECS/")
    );
    assert_eq!(
        request.headers.get("x-amz-security-token"),
        Some("ecs-session")
    );
    sign(&model(""), &env, &cache, NOW + 60_000).await.unwrap();
    assert_eq!(server.requests().len(), 1);
    sign(&model(""), &env, &cache, NOW + 30 * 60_000)
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 2);
    assert_eq!(server.requests()[0].path, "/v1/credentials");

    // A refused token names the endpoint and the variables to check.
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_CONTAINER_CREDENTIALS_FULL_URI", url.as_str()),
        ("AWS_CONTAINER_AUTHORIZATION_TOKEN", "wrong"),
    ]);
    let failure = sign(&model(""), &env, &Arc::default(), NOW)
        .await
        .unwrap_err();
    assert!(failure.message.contains(&url), "{}", failure.message);
    assert!(failure.message.contains("401"), "{}", failure.message);
    assert!(
        failure
            .message
            .contains("AWS_CONTAINER_AUTHORIZATION_TOKEN"),
        "{}",
        failure.message
    );
}

/// STS's answer for a good token, and its error document for another.
fn sts() -> impl Fn(&knightcode_testkit::WebRequest) -> WebResponse + Send + Sync + 'static {
    |request| {
        let body = String::from_utf8_lossy(&request.body).into_owned();
        let form_ok = request.method == "POST"
            && request.path == "/"
            && request.header("content-type") == Some("application/x-www-form-urlencoded")
            && body.contains("Action=AssumeRoleWithWebIdentity")
            && body.contains("Version=2011-06-15")
            && body.contains("RoleArn=arn%3Aaws%3Aiam%3A%3A111122223333%3Arole%2Fbedrock");
        if !form_ok {
            return WebResponse::status(400, "bad form");
        }
        if !body.contains("WebIdentityToken=oidc-token") {
            return WebResponse {
                status: 400,
                headers: vec![("content-type".into(), "text/xml".into())],
                body: b"<ErrorResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n\
                        <Error><Type>Sender</Type><Code>InvalidIdentityToken</Code>\n\
                        <Message>Token is expired</Message></Error>\n\
                        <RequestId>r</RequestId></ErrorResponse>"
                    .to_vec(),
                stall: false,
            };
        }
        WebResponse::ok(
            "text/xml",
            "<AssumeRoleWithWebIdentityResponse xmlns=\"https://sts.amazonaws.com/doc/2011-06-15/\">\n\
             <AssumeRoleWithWebIdentityResult>\n\
             <SubjectFromWebIdentityToken>system:serviceaccount:ns:sa</SubjectFromWebIdentityToken>\n\
             <Credentials>\n\
               <SessionToken>web&amp;session</SessionToken>\n\
               <SecretAccessKey>web-secret</SecretAccessKey>\n\
               <Expiration>2015-08-30T13:36:00Z</Expiration>\n\
               <AccessKeyId>ASIAWEB</AccessKeyId>\n\
             </Credentials>\n\
             </AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
        )
    }
}

#[tokio::test]
async fn web_identity_tokens_are_exchanged_at_sts() {
    let server = StandIn::start(sts()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "oidc-token\n").unwrap();
    let sts_url = server.url();
    let env = MapEnv::new([
        ("HOME", "/nonexistent"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_WEB_IDENTITY_TOKEN_FILE", token_file.to_str().unwrap()),
        ("AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/bedrock"),
        ("AWS_ROLE_SESSION_NAME", "pod-session"),
        ("AWS_ENDPOINT_URL_STS", sts_url.as_str()),
        // Never reached: the web identity comes first.
        ("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:9"),
    ]);
    let cache = Arc::default();
    let request = sign(&model(""), &env, &cache, NOW).await.unwrap();
    let authorization = request.headers.get("authorization").unwrap();
    assert!(
        authorization.contains("Credential=ASIAWEB/"),
        "{authorization}"
    );
    assert_eq!(
        request.headers.get("x-amz-security-token"),
        Some("web&session")
    );
    let body = String::from_utf8_lossy(&server.requests()[0].body).into_owned();
    assert!(body.contains("RoleSessionName=pod-session"), "{body}");
    sign(&model(""), &env, &cache, NOW + 30 * 60_000)
        .await
        .unwrap();
    assert_eq!(server.requests().len(), 1, "cached until 5 minutes before");

    // The same from a profile's settings, its session name kept.
    let aws = dir.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("config"),
        format!(
            "[profile irsa]\nweb_identity_token_file = {}\n\
             role_arn = arn:aws:iam::111122223333:role/bedrock\nrole_session_name = from-profile\n",
            token_file.display()
        ),
    )
    .unwrap();
    let home = dir.path().to_str().unwrap();
    let env = MapEnv::new([
        ("HOME", home),
        ("AWS_PROFILE", "irsa"),
        ("AWS_REGION", "us-east-1"),
        ("AWS_ENDPOINT_URL_STS", sts_url.as_str()),
    ]);
    sign(&model(""), &env, &Arc::default(), NOW).await.unwrap();
    let body = String::from_utf8_lossy(&server.requests()[1].body).into_owned();
    assert!(body.contains("RoleSessionName=from-profile"), "{body}");

    // A refused token: STS's code and message, and what to check.
    std::fs::write(&token_file, "stale-token").unwrap();
    let failure = sign(&model(""), &env, &Arc::default(), NOW)
        .await
        .unwrap_err();
    assert_eq!(failure.class, ErrorClass::Auth);
    for part in [
        "the AWS profile \"irsa\"",
        "400 InvalidIdentityToken: Token is expired",
        "web_identity_token_file",
    ] {
        assert!(
            failure.message.contains(part),
            "{part}: {}",
            failure.message
        );
    }
    // An unreadable token file.
    std::fs::remove_file(&token_file).unwrap();
    let failure = sign(&model(""), &env, &Arc::default(), NOW)
        .await
        .unwrap_err();
    assert!(
        failure.message.contains("cannot read the token file"),
        "{}",
        failure.message
    );
}

#[cfg(unix)]
#[tokio::test]
async fn a_profiles_credential_process() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("creds.sh");
    let runs = dir.path().join("runs");
    std::fs::write(
        &script,
        format!(
            "echo run >> '{}'\ncat <<'JSON'\n{{\"Version\": 1, \"AccessKeyId\": \"ASIAPROC\",\n\
             \"SecretAccessKey\": \"proc-secret\", \"SessionToken\": \"proc-session\",\n\
             \"Expiration\": \"2015-08-30T13:36:00Z\"}}\nJSON\n",
            runs.display()
        ),
    )
    .unwrap();
    let aws = dir.path().join(".aws");
    std::fs::create_dir_all(&aws).unwrap();
    std::fs::write(
        aws.join("config"),
        format!(
            "[profile tool]\ncredential_process = sh {}\n\
             [profile failing]\ncredential_process = echo 'token expired, log in' >&2; exit 3\n\
             [profile future]\ncredential_process = echo '{{\"Version\": 2}}'\n\
             [profile garbage]\ncredential_process = echo hello\n",
            script.display()
        ),
    )
    .unwrap();
    let home = dir.path().to_str().unwrap();
    let env = |profile: &str| {
        MapEnv::new([
            ("HOME", home),
            ("AWS_PROFILE", profile),
            ("AWS_REGION", "us-east-1"),
        ])
    };
    let cache = Arc::default();
    let request = sign(&model(""), &env("tool"), &cache, NOW).await.unwrap();
    let authorization = request.headers.get("authorization").unwrap();
    assert!(
        authorization.contains("Credential=ASIAPROC/"),
        "{authorization}"
    );
    assert_eq!(
        request.headers.get("x-amz-security-token"),
        Some("proc-session")
    );
    sign(&model(""), &env("tool"), &cache, NOW + 60_000)
        .await
        .unwrap();
    let count = || std::fs::read_to_string(&runs).unwrap().lines().count();
    assert_eq!(count(), 1);
    sign(&model(""), &env("tool"), &cache, NOW + 58 * 60_000)
        .await
        .unwrap();
    assert_eq!(count(), 2);

    for (profile, says) in [
        ("failing", "it exited with status 3: token expired, log in"),
        ("future", "\"Version\": 2 where 1 is expected"),
        ("garbage", "its output is not the JSON credentials"),
    ] {
        let failure = sign(&model(""), &env(profile), &Arc::default(), NOW)
            .await
            .unwrap_err();
        assert_eq!(failure.class, ErrorClass::Auth);
        assert!(
            failure.message.contains(says)
                && failure.message.contains(&format!(
                    "credential_process of the AWS profile \"{profile}\""
                )),
            "{}",
            failure.message
        );
    }
}
