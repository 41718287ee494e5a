use crate::common;

use std::io;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::tool_with;
use knightcode_tools::{
    Access, BoxFuture, FileMutationQueue, FileOps, FileStat, GlobOutput, GlobRequest, LocalFileOps,
    ToolsConfig, ToolsError,
};
use serde_json::json;

/// Local files, counting how many read-modify-write cycles overlap: a cycle starts at a
/// read and ends at the write. Each read yields to the scheduler several times so that
/// unserialised cycles would interleave.
#[derive(Default)]
struct OverlapCounter {
    in_flight: AtomicUsize,
    max_in_flight: AtomicUsize,
}

impl FileOps for OverlapCounter {
    fn read_file<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<u8>>> {
        Box::pin(async move {
            let now = self.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
            self.max_in_flight.fetch_max(now, Ordering::SeqCst);
            for _ in 0..20 {
                tokio::task::yield_now().await;
            }
            LocalFileOps.read_file(path).await
        })
    }

    fn write_file<'a>(&'a self, path: &'a Path, data: &'a [u8]) -> BoxFuture<'a, io::Result<()>> {
        Box::pin(async move {
            let result = LocalFileOps.write_file(path, data).await;
            self.in_flight.fetch_sub(1, Ordering::SeqCst);
            result
        })
    }

    fn access<'a>(&'a self, path: &'a Path, access: Access) -> BoxFuture<'a, io::Result<()>> {
        LocalFileOps.access(path, access)
    }

    fn stat<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<FileStat>> {
        LocalFileOps.stat(path)
    }

    fn create_dir_all<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<()>> {
        LocalFileOps.create_dir_all(path)
    }

    fn read_dir<'a>(&'a self, path: &'a Path) -> BoxFuture<'a, io::Result<Vec<String>>> {
        LocalFileOps.read_dir(path)
    }

    fn glob<'a>(&'a self, request: GlobRequest) -> BoxFuture<'a, Result<GlobOutput, ToolsError>> {
        LocalFileOps.glob(request)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_edits_of_one_file_are_serialised() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("f.txt");
    let slots: Vec<String> = (0..16).map(|i| format!("slot{i:02}")).collect();
    std::fs::write(&path, slots.join("\n")).unwrap();

    let counter = Arc::new(OverlapCounter::default());
    let config = ToolsConfig {
        file_ops: counter.clone(),
        ..ToolsConfig::default()
    };
    let edit = tool_with("edit", config);
    let mut calls = Vec::new();
    for i in 0..16 {
        let edit = edit.clone();
        let cwd = dir.path().to_path_buf();
        calls.push(tokio::spawn(async move {
            let arguments = json!({"path": "f.txt", "edits": [
                {"oldText": format!("slot{i:02}"), "newText": format!("done{i:02}")}
            ]});
            edit.execute(arguments, common::context(&cwd)).await
        }));
    }
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let expected: Vec<String> = (0..16).map(|i| format!("done{i:02}")).collect();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), expected.join("\n"));
    assert_eq!(counter.max_in_flight.load(Ordering::SeqCst), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_queue_orders_one_file_and_frees_others() {
    let dir = tempfile::tempdir().unwrap();
    let a = dir.path().join("a");
    let b = dir.path().join("b");
    let queue = FileMutationQueue::new();
    let (log_tx, mut log) = tokio::sync::mpsc::unbounded_channel::<&'static str>();
    let (release_tx, release_rx) = tokio::sync::oneshot::channel::<()>();
    let (entered_tx, entered_rx) = tokio::sync::oneshot::channel::<()>();

    let first = {
        let (queue, a, log_tx) = (queue.clone(), a.clone(), log_tx.clone());
        tokio::spawn(async move {
            queue
                .run(&a, async {
                    log_tx.send("first start").unwrap();
                    entered_tx.send(()).unwrap();
                    release_rx.await.unwrap();
                    log_tx.send("first end").unwrap();
                })
                .await;
        })
    };
    entered_rx.await.unwrap();
    let second = {
        let (queue, a, log_tx) = (queue.clone(), a.clone(), log_tx.clone());
        tokio::spawn(async move {
            queue
                .run(&a, async { log_tx.send("second").unwrap() })
                .await;
        })
    };
    // Another file is not held up by the busy one.
    queue
        .run(&b, async { log_tx.send("other file").unwrap() })
        .await;
    release_tx.send(()).unwrap();
    first.await.unwrap();
    second.await.unwrap();
    drop(log_tx);
    let mut events = Vec::new();
    while let Some(event) = log.recv().await {
        events.push(event);
    }
    assert_eq!(events, ["first start", "other file", "first end", "second"]);
    assert_eq!(queue.busy_files(), 0);
}
