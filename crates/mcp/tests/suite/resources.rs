//! Resource lists of a server that announces changes: kept after the first listing, listed
//! again after `notifications/resources/list_changed`.

use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::common;

fn uris(items: &[Value], key: &str) -> Vec<String> {
    items
        .iter()
        .map(|item| item[key].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_changed_resource_list_is_listed_again() {
    let dir = tempfile::tempdir().unwrap();
    let mut server = common::fixture_server(dir.path(), "fixture", Duration::from_secs(30));
    if let knightcode_mcp::Transport::Stdio { env, .. } = &mut server.transport {
        env.push(("FIXTURE_RESOURCES".into(), "1".into()));
    }
    let manager = common::started(vec![server], dir.path()).await;
    let cancel = CancellationToken::new();
    let resources = manager.list_resources("fixture", &cancel).await.unwrap();
    assert_eq!(
        uris(&resources, "uri"),
        ["fixture://notes", "fixture://data.bin"]
    );
    let templates = manager
        .list_resource_templates("fixture", &cancel)
        .await
        .unwrap();
    assert_eq!(uris(&templates, "uriTemplate"), ["fixture://item/{id}"]);

    // Added without a notice: the kept lists stand.
    let mut changes = manager.changes();
    manager
        .read_resource("fixture", "fixture://add/extra", &cancel)
        .await
        .unwrap();
    let resources = manager.list_resources("fixture", &cancel).await.unwrap();
    assert_eq!(resources.len(), 2, "{resources:?}");

    // The notice empties them; the next listing asks the server again.
    changes.borrow_and_update();
    manager
        .read_resource("fixture", "fixture://announce", &cancel)
        .await
        .unwrap();
    let listed_again = async {
        loop {
            let resources = manager.list_resources("fixture", &cancel).await.unwrap();
            if resources.len() == 3 {
                return resources;
            }
            changes.changed().await.unwrap();
        }
    };
    let resources = tokio::time::timeout(Duration::from_secs(30), listed_again)
        .await
        .expect("the changed resource list was not listed again within 30 s");
    assert_eq!(uris(&resources, "uri")[2], "fixture://extra");
    let templates = manager
        .list_resource_templates("fixture", &cancel)
        .await
        .unwrap();
    assert_eq!(
        uris(&templates, "uriTemplate"),
        ["fixture://item/{id}", "fixture://extra/{id}"]
    );
    manager.stop().await;
}
