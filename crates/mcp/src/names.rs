//! The names MCP tools get in the model's tool list.

/// `mcp__<server>`: the namespace a server's tools share (its name as [`tool_name`] writes it).
pub fn namespace_name(server: &str) -> String {
    tool_name(server, "").trim_end_matches('_').to_owned()
}

/// `mcp__<server>__<tool>`, every character outside `[A-Za-z0-9_]` turned into `_`. Names
/// longer than the 64 characters providers accept keep 55 and add `_` and 8 hex digits of a
/// hash of server and tool, so two long names stay apart.
pub fn tool_name(server: &str, tool: &str) -> String {
    let name: String = format!("mcp__{server}__{tool}")
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.len() <= 64 {
        return name;
    }
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in server.bytes().chain([0]).chain(tool.bytes()) {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
    }
    format!("{}_{:08x}", &name[..55], hash & 0xffff_ffff)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitised_and_capped() {
        assert_eq!(
            tool_name("my-server", "get.issue"),
            "mcp__my_server__get_issue"
        );
        let long = tool_name("s", &"x".repeat(80));
        assert_eq!(long.len(), 64);
        assert_ne!(long, tool_name("s", &"x".repeat(81)));
    }
}
