//! `oauth.clientRegistration: "cimd"`: KnightCode names itself by the address of a Client ID
//! Metadata Document on knightcode.dev (the `client_id` is that https address; the
//! authorization server fetches the document to learn the client's name and redirect
//! addresses) instead of registering dynamically. Used when the authorization server says
//! it accepts such documents (`client_id_metadata_document_supported`); otherwise the
//! sign-in registers dynamically, the next method in the MCP authorization order.

use base64::Engine as _;
use rmcp::transport::auth::AuthorizationMetadata;
use sha2::Digest as _;

/// Where KnightCode's metadata documents live.
const DOCUMENT_BASE: &str = "https://knightcode.dev/oauth";

/// The document to name and the callback path it lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ClientDocument {
    /// The `client_id`: the document's address.
    pub client_id: String,
    /// The path of the loopback redirect the document allows.
    pub callback_path: String,
}

fn flag(metadata: &AuthorizationMetadata, name: &str) -> bool {
    metadata
        .additional_fields
        .get(name)
        .and_then(serde_json::Value::as_bool)
        .unwrap_or(false)
}

/// The document to use with this authorization server, or `None` when it does not accept
/// metadata documents. One shared document serves servers that send the RFC 9207 `iss`
/// with their answer (a code from another authorization server is then recognised); for
/// the others each MCP server gets a document and callback path of its own, derived from
/// its address, so an answer meant for another authorization server cannot arrive on this
/// sign-in's callback (the mix-up attack of RFC 9700 §4.4).
pub(crate) fn document(
    metadata: &AuthorizationMetadata,
    server_url: &str,
) -> Option<ClientDocument> {
    if !flag(metadata, "client_id_metadata_document_supported") {
        return None;
    }
    if flag(metadata, "authorization_response_iss_parameter_supported") {
        return Some(ClientDocument {
            client_id: format!("{DOCUMENT_BASE}/client.json"),
            callback_path: "/callback".to_owned(),
        });
    }
    let id = server_id(server_url);
    Some(ClientDocument {
        client_id: format!("{DOCUMENT_BASE}/{id}/client.json"),
        callback_path: format!("/callback/{id}"),
    })
}

/// The first 9 bytes of the SHA-256 of the server's normalized address, base64url: 12
/// characters that are safe in a path.
pub(crate) fn server_id(server_url: &str) -> String {
    let digest = sha2::Sha256::digest(super::normalize_url(server_url).as_bytes());
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&digest[..9])
}
