//! AWS Signature Version 4 for one request, as the AWS SDK signs Bedrock's (service
//! `bedrock`): the headers it signs are the ones the request carries that AWS checks
//! (`content-type`, `host`, `x-amz-content-sha256`, `x-amz-date`, and
//! `x-amz-security-token` with temporary credentials). Written against the published
//! algorithm with `ring`'s HMAC and SHA-256 (already linked through rustls) rather than the
//! AWS SDK, which would pull a C crypto build.

use ring::digest;
use ring::hmac;

use super::credentials::AwsCredentials;
use crate::error::StreamFailure;
use crate::http::Headers;

const ALGORITHM: &str = "AWS4-HMAC-SHA256";

/// What a signature is made for besides the request itself.
pub(crate) struct SigningScope<'a> {
    pub(crate) region: &'a str,
    pub(crate) service: &'a str,
    /// Milliseconds since the Unix epoch.
    pub(crate) now_ms: i64,
}

/// Adds `x-amz-date`, `x-amz-content-sha256`, the session token and `authorization` to
/// `headers` for a POST of `body` to `url`. Fails only on a URL without a host.
pub(crate) fn sign(
    url: &str,
    headers: &mut Headers,
    body: &[u8],
    credentials: &AwsCredentials,
    scope: &SigningScope<'_>,
) -> Result<(), StreamFailure> {
    let unsigned = |why: String| {
        StreamFailure::other(format!(
            "Could not sign the Bedrock request: {why}. Check the baseUrl of amazon-bedrock in \
             models.json."
        ))
    };
    let parsed =
        reqwest::Url::parse(url).map_err(|e| unsigned(format!("invalid URL {url}: {e}")))?;
    let host = match (parsed.host_str(), parsed.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => return Err(unsigned(format!("the URL {url} has no host"))),
    };
    let (date_time, date) = amz_date(scope.now_ms);
    let payload_hash = hex(digest::digest(&digest::SHA256, body).as_ref());
    headers.set("x-amz-date", date_time.clone());
    headers.set("x-amz-content-sha256", payload_hash.clone());
    match &credentials.session_token {
        Some(token) => headers.set("x-amz-security-token", token.clone()),
        None => headers.remove("x-amz-security-token"),
    }
    let mut signed: Vec<(String, String)> = vec![("host".to_owned(), host)];
    for name in [
        "content-type",
        "x-amz-content-sha256",
        "x-amz-date",
        "x-amz-security-token",
    ] {
        if let Some(value) = headers.get(name) {
            signed.push((name.to_owned(), normalize_value(value)));
        }
    }
    signed.sort();
    let signed_names: Vec<&str> = signed.iter().map(|(n, _)| n.as_str()).collect();
    let signed_names = signed_names.join(";");
    let canonical_headers: String = signed.iter().map(|(n, v)| format!("{n}:{v}\n")).collect();
    let canonical_request = format!(
        "POST\n{}\n{}\n{canonical_headers}\n{signed_names}\n{payload_hash}",
        canonical_path(parsed.path()),
        canonical_query(&parsed),
    );
    let credential_scope = format!("{date}/{}/{}/aws4_request", scope.region, scope.service);
    let string_to_sign = format!(
        "{ALGORITHM}\n{date_time}\n{credential_scope}\n{}",
        hex(digest::digest(&digest::SHA256, canonical_request.as_bytes()).as_ref())
    );
    let mut key = hmac_sha256(
        format!("AWS4{}", credentials.secret_access_key).as_bytes(),
        date.as_bytes(),
    );
    for part in [scope.region, scope.service, "aws4_request"] {
        key = hmac_sha256(&key, part.as_bytes());
    }
    let signature = hex(&hmac_sha256(&key, string_to_sign.as_bytes()));
    headers.set(
        "authorization",
        format!(
            "{ALGORITHM} Credential={}/{credential_scope}, SignedHeaders={signed_names}, \
             Signature={signature}",
            credentials.access_key_id
        ),
    );
    Ok(())
}

fn hmac_sha256(key: &[u8], data: &[u8]) -> Vec<u8> {
    let key = hmac::Key::new(hmac::HMAC_SHA256, key);
    hmac::sign(&key, data).as_ref().to_vec()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Header values are trimmed and inner runs of spaces collapsed.
fn normalize_value(value: &str) -> String {
    value.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every segment of the (already encoded) path is encoded once more: services other than
/// S3 sign the double-encoded path, so a model id's `:` (sent as `%3A`) is signed as `%253A`.
fn canonical_path(path: &str) -> String {
    if path.is_empty() {
        return "/".to_owned();
    }
    path.split('/')
        .map(uri_encode)
        .collect::<Vec<_>>()
        .join("/")
}

fn canonical_query(url: &reqwest::Url) -> String {
    let mut pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| (uri_encode(&k), uri_encode(&v)))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

/// RFC 3986 encoding of everything but the unreserved characters.
pub(crate) fn uri_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// `YYYYMMDDTHHMMSSZ` and `YYYYMMDD` in UTC.
fn amz_date(now_ms: i64) -> (String, String) {
    let secs = now_ms.div_euclid(1000);
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let date = format!("{year:04}{month:02}{day:02}");
    let time = format!(
        "{date}T{:02}{:02}{:02}Z",
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60
    );
    (time, date)
}

/// Howard Hinnant's days-to-civil conversion (proleptic Gregorian calendar).
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn credentials(token: Option<&str>) -> AwsCredentials {
        AwsCredentials {
            access_key_id: "AKIDEXAMPLE".into(),
            secret_access_key: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY".into(),
            session_token: token.map(str::to_owned),
        }
    }

    #[test]
    fn dates_are_utc() {
        // 2015-08-30T12:36:00Z, the AWS test suite's date.
        assert_eq!(
            amz_date(1_440_938_160_000),
            ("20150830T123600Z".into(), "20150830".into())
        );
        assert_eq!(amz_date(0).0, "19700101T000000Z");
        assert_eq!(amz_date(951_782_400_000).1, "20000229");
    }

    #[test]
    fn the_path_is_encoded_twice() {
        assert_eq!(
            canonical_path("/model/anthropic.claude-3-7-sonnet-20250219-v1%3A0/converse-stream"),
            "/model/anthropic.claude-3-7-sonnet-20250219-v1%253A0/converse-stream"
        );
    }

    /// A signature the AWS SDK for JavaScript made (pi 0.73.1's `@smithy/signature-v4`, the
    /// same headers signed) for this request, at this time, with these keys.
    #[test]
    fn matches_the_sdk() {
        let mut headers = Headers::default();
        headers.set("content-type", "application/json");
        let body = br#"{"messages":[{"role":"user","content":[{"text":"hi"}]}]}"#;
        sign(
            "https://bedrock-runtime.us-east-1.amazonaws.com/model/m%3A0/converse-stream",
            &mut headers,
            body,
            &credentials(Some("token")),
            &SigningScope {
                region: "us-east-1",
                service: "bedrock",
                now_ms: 1_440_938_160_000,
            },
        )
        .unwrap();
        assert_eq!(headers.get("x-amz-date"), Some("20150830T123600Z"));
        assert_eq!(headers.get("x-amz-security-token"), Some("token"));
        assert_eq!(headers.get("authorization"), Some(SDK_SIGNATURE));
    }

    const SDK_SIGNATURE: &str = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/bedrock/aws4_request, SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token, Signature=75db078d8747fe72870b71bfb92ceac33b1d922e8fc7d62b28b11208bb1a6407";
}
