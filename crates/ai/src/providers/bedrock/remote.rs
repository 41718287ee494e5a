//! Credentials that are fetched rather than read: from IAM Identity Center ([`super::sso`]),
//! STS for a web identity token ([`super::web_identity`]), a profile's `credential_process`
//! ([`super::process`]), the container endpoint ([`super::container`]) or EC2 instance
//! metadata ([`super::imds`]). A client keeps what each source handed out in its
//! [`CredentialCache`] until [`REFRESH_MARGIN_MS`] before the keys' `Expiration`, so one
//! fetch serves many requests; keys without an expiry are kept for the client's life.

use std::collections::HashMap;

use super::credentials::AwsCredentials;
use super::credentials::CredentialError;

/// How long before their expiry fetched keys are replaced (the AWS SDKs refresh about five
/// minutes early, so a request never goes out with keys about to lapse).
pub(crate) const REFRESH_MARGIN_MS: i64 = 5 * 60_000;

/// Keys a source handed out, and until when they hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Fetched {
    pub(crate) credentials: AwsCredentials,
    /// Milliseconds since the epoch; `None`: they do not expire.
    pub(crate) expires_at_ms: Option<i64>,
}

/// A source that is asked over the network (or a helper process) for keys.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RemoteSource {
    Sso(super::sso::SsoRole),
    WebIdentity(super::web_identity::WebIdentity),
    Process(super::process::CredentialProcess),
    Container(super::container::ContainerEndpoint),
    Imds(super::imds::Imds),
}

impl RemoteSource {
    /// What the cache files this source's keys under: the source and what it asks for.
    fn cache_key(&self) -> String {
        format!("{self:?}")
    }

    async fn fetch(&self, http: &reqwest::Client, now_ms: i64) -> Result<Fetched, CredentialError> {
        match self {
            Self::Sso(role) => role.fetch(http).await,
            Self::WebIdentity(identity) => identity.fetch(http, now_ms).await,
            Self::Process(process) => process.fetch().await,
            Self::Container(endpoint) => endpoint.fetch(http).await,
            Self::Imds(imds) => imds.fetch(http).await,
        }
    }
}

/// The keys and instance regions a client fetched, shared by its requests.
#[derive(Default)]
pub(crate) struct CredentialCache {
    keys: tokio::sync::Mutex<HashMap<String, Fetched>>,
    regions: tokio::sync::Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for CredentialCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CredentialCache").finish_non_exhaustive()
    }
}

impl CredentialCache {
    /// The source's keys: the cached ones while they hold, else fetched (one fetch at a
    /// time, so concurrent requests do not each ask).
    pub(crate) async fn credentials(
        &self,
        source: &RemoteSource,
        http: &reqwest::Client,
        now_ms: i64,
    ) -> Result<AwsCredentials, CredentialError> {
        let key = source.cache_key();
        let mut keys = self.keys.lock().await;
        if let Some(fetched) = keys.get(&key)
            && fetched
                .expires_at_ms
                .is_none_or(|at| at - REFRESH_MARGIN_MS > now_ms)
        {
            return Ok(fetched.credentials.clone());
        }
        let fetched = source.fetch(http, now_ms).await?;
        let credentials = fetched.credentials.clone();
        keys.insert(key, fetched);
        Ok(credentials)
    }

    /// The region of the instance `imds` describes, asked once per client.
    pub(crate) async fn instance_region(
        &self,
        imds: &super::imds::Imds,
        http: &reqwest::Client,
    ) -> Result<String, CredentialError> {
        let key = format!("{imds:?}");
        let mut regions = self.regions.lock().await;
        if let Some(region) = regions.get(&key) {
            return Ok(region.clone());
        }
        let region = imds.region(http).await?;
        regions.insert(key, region.clone());
        Ok(region)
    }
}

/// An ISO 8601 UTC time as AWS writes `Expiration` (`2026-12-05T18:00:00Z`, optionally with
/// fractional seconds or a `+00:00` offset), in milliseconds since the epoch.
pub(crate) fn parse_expiration(text: &str) -> Option<i64> {
    let text = text.trim();
    let (date, time) = text.split_once(['T', 't', ' '])?;
    let mut date_parts = date.splitn(3, '-');
    let year: i64 = date_parts.next()?.parse().ok()?;
    let month: i64 = date_parts.next()?.parse().ok()?;
    let day: i64 = date_parts.next()?.parse().ok()?;
    // The offset: `Z`, or `±HH:MM`.
    let (clock, offset_minutes) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else if let Some(at) = time.rfind(['+', '-']) {
        let (clock, offset) = time.split_at(at);
        let sign = if offset.starts_with('-') { -1 } else { 1 };
        let digits = &offset[1..];
        let (hours, minutes) = digits
            .split_once(':')
            .unwrap_or_else(|| digits.split_at(digits.len().min(2)));
        let minutes = if minutes.is_empty() {
            0
        } else {
            minutes.parse::<i64>().ok()?
        };
        let minutes = hours.parse::<i64>().ok()? * 60 + minutes;
        (clock, sign * minutes)
    } else {
        (time, 0)
    };
    let mut clock_parts = clock.splitn(3, ':');
    let hour: i64 = clock_parts.next()?.parse().ok()?;
    let minute: i64 = clock_parts.next()?.parse().ok()?;
    let seconds = clock_parts.next().unwrap_or("0");
    let (whole, fraction) = seconds.split_once('.').unwrap_or((seconds, ""));
    let second: i64 = whole.parse().ok()?;
    let millis: i64 = format!("{fraction:0<3}")
        .get(..3)
        .and_then(|ms| ms.parse().ok())
        .unwrap_or(0);
    let valid = (1..=12).contains(&month)
        && (1..=31).contains(&day)
        && (0..24).contains(&hour)
        && (0..60).contains(&minute)
        && (0..=60).contains(&second);
    if !valid {
        return None;
    }
    let days = days_from_civil(year, month, day);
    let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offset_minutes * 60;
    Some(seconds * 1000 + millis)
}

/// Howard Hinnant's civil-to-days conversion (proleptic Gregorian calendar).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let yoe = year.rem_euclid(400);
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The text of the first `<tag>…</tag>` in `xml` (after the first `<within>` when given),
/// with XML's predefined entities and character references decoded: enough for the small,
/// fixed answers of the AWS query APIs (STS), which carry no attributes on these elements.
pub(crate) fn xml_text(xml: &str, within: Option<&str>, tag: &str) -> Option<String> {
    let scope = match within {
        Some(outer) => &xml[xml.find(&format!("<{outer}>"))?..],
        None => xml,
    };
    let open = format!("<{tag}>");
    let start = scope.find(&open)? + open.len();
    let end = start + scope[start..].find(&format!("</{tag}>"))?;
    Some(xml_unescape(scope[start..end].trim()))
}

fn xml_unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('&') {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        let Some(end) = rest.find(';') else { break };
        let entity = &rest[1..end];
        let decoded = match entity {
            "amp" => Some('&'),
            "lt" => Some('<'),
            "gt" => Some('>'),
            "quot" => Some('"'),
            "apos" => Some('\''),
            _ => entity
                .strip_prefix("#x")
                .or_else(|| entity.strip_prefix("#X"))
                .and_then(|hex| u32::from_str_radix(hex, 16).ok())
                .or_else(|| entity.strip_prefix('#').and_then(|dec| dec.parse().ok()))
                .and_then(char::from_u32),
        };
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[end + 1..];
            }
            None => {
                out.push('&');
                rest = &rest[1..];
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expirations_parse() {
        assert_eq!(parse_expiration("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(
            parse_expiration("2015-08-30T12:36:00Z"),
            Some(1_440_938_160_000)
        );
        assert_eq!(
            parse_expiration("2015-08-30T12:36:00.250Z"),
            Some(1_440_938_160_250)
        );
        assert_eq!(
            parse_expiration("2015-08-30T14:36:00+02:00"),
            Some(1_440_938_160_000)
        );
        assert_eq!(
            parse_expiration("2015-08-30T07:06:00-0530"),
            Some(1_440_938_160_000)
        );
        assert_eq!(
            parse_expiration("2000-02-29T00:00:00Z"),
            Some(951_782_400_000)
        );
        for bad in [
            "",
            "tomorrow",
            "2015-13-01T00:00:00Z",
            "2015-08-30",
            "2015-08-30T25:00:00Z",
        ] {
            assert_eq!(parse_expiration(bad), None, "{bad}");
        }
    }

    #[test]
    fn xml_texts_are_found_and_decoded() {
        let xml = "<R><Error><Code>X</Code></Error><Credentials>\n <Code>a&amp;b&lt;&#65;&#x42;&bogus;</Code>\n\
                   </Credentials></R>";
        assert_eq!(xml_text(xml, None, "Code").as_deref(), Some("X"));
        assert_eq!(
            xml_text(xml, Some("Credentials"), "Code").as_deref(),
            Some("a&b<AB&bogus;")
        );
        assert_eq!(xml_text(xml, Some("Nope"), "Code"), None);
        assert_eq!(xml_text("<Code>unclosed", None, "Code"), None);
    }
}
