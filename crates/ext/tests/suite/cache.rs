//! The load cache: a warm load runs from stored bytecode (nothing is written again), and
//! every damaged entry (truncated, corrupt, another file's) is compiled again and replaced,
//! never crashes.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;
use std::path::PathBuf;
use std::sync::Arc;

use knightcode_agent::ToolContext;
use knightcode_ext::ExtensionHost;
use knightcode_ext::HostConfig;
use serde_json::json;
use tokio_util::sync::CancellationToken;

const EXTENSION: &str = r#"
import { Type } from "@knightcode/ai";
import { shout } from "./lib/shout.cjs";

enum Mood { Glad = "glad" }

export default function (pi) {
  pi.registerTool({
    name: "greet", label: "Greet", description: "Greets",
    parameters: Type.Object({ name: Type.String() }),
    async execute(_id: string, params: { name: string }) {
      if (params.name === "fail") {
        throw new Error("failed on purpose");
      }
      return { content: [{ type: "text", text: `${shout(params.name)} ${Mood.Glad}` }], details: {} };
    },
  });
}
"#;

const CJS: &str = "exports.shout = function (s) { return s.toUpperCase() + '!'; };\n";

async fn load(dir: &Path, cache: &Path) -> Arc<ExtensionHost> {
    ExtensionHost::load_with_cache(
        HostConfig {
            paths: vec![dir.join("greet.ts")],
            cwd: dir.to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        },
        Some(cache.to_path_buf()),
    )
    .await
    .expect("the extension loads")
}

async fn greet(host: &ExtensionHost, dir: &Path, name: &str) -> Result<String, String> {
    let tool = host.tools().into_iter().next().unwrap();
    let context = ToolContext::new("call_1", dir, CancellationToken::new());
    tool.execute(json!({ "name": name }), context)
        .await
        .map(|output| {
            output
                .content
                .iter()
                .map(|c| {
                    serde_json::to_value(c).unwrap()["text"]
                        .as_str()
                        .unwrap_or("")
                        .to_owned()
                })
                .collect()
        })
        .map_err(|e| e.to_string())
}

/// Every entry of the cache, by name: (inode, size).
fn entries(cache: &Path) -> BTreeMap<PathBuf, (u64, u64)> {
    std::fs::read_dir(cache)
        .unwrap()
        .map(|e| e.unwrap())
        .map(|e| {
            let meta = e.metadata().unwrap();
            (e.path(), (meta.ino(), meta.len()))
        })
        .collect()
}

async fn check_runs(dir: &Path, cache: &Path) {
    let host = load(dir, cache).await;
    assert_eq!(greet(&host, dir, "ada").await.unwrap(), "ADA! glad");
    let failure = greet(&host, dir, "fail").await.unwrap_err();
    assert!(failure.contains("failed on purpose"), "{failure}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_load_uses_the_cache_and_damaged_entries_are_compiled_again() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("greet.ts"), EXTENSION).unwrap();
    std::fs::write(dir.path().join("lib/shout.cjs"), CJS).unwrap();
    let cache = dir.path().join("cache");

    check_runs(dir.path(), &cache).await;
    let cold = entries(&cache);
    // Our bootstrap scripts, the extension and its CommonJS dependency.
    assert!(cold.len() >= 3, "{cold:?}");
    assert!(
        !cold.keys().any(|p| p.to_string_lossy().contains(".tmp-")),
        "no temporary file is left: {cold:?}"
    );

    check_runs(dir.path(), &cache).await;
    assert_eq!(entries(&cache), cold, "a warm load writes nothing");

    type Damage = fn(&[u8], &[u8]) -> Vec<u8>;
    let damages: [(&str, Damage); 5] = [
        ("truncated", |bytes, _| bytes[..bytes.len() / 2].to_vec()),
        ("empty", |_, _| Vec::new()),
        ("corrupt", |bytes, _| {
            let mut bytes = bytes.to_vec();
            let at = bytes.len() * 2 / 3;
            bytes[at] ^= 0x5a;
            bytes
        }),
        ("last byte corrupt", |bytes, _| {
            let mut bytes = bytes.to_vec();
            *bytes.last_mut().unwrap() ^= 1;
            bytes
        }),
        ("another entry's", |_, other| other.to_vec()),
    ];
    for (what, damage) in damages {
        let files: Vec<PathBuf> = entries(&cache).into_keys().collect();
        let contents: Vec<Vec<u8>> = files.iter().map(|f| std::fs::read(f).unwrap()).collect();
        for (i, file) in files.iter().enumerate() {
            let other = &contents[(i + 1) % contents.len()];
            std::fs::write(file, damage(&contents[i], other)).unwrap();
        }
        check_runs(dir.path(), &cache).await;
        let repaired = entries(&cache);
        let sizes: BTreeMap<_, _> = repaired.iter().map(|(p, (_, size))| (p, size)).collect();
        let expected: BTreeMap<_, _> = cold.iter().map(|(p, (_, size))| (p, size)).collect();
        assert_eq!(sizes, expected, "{what} entries are written again");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_cache_nothing_is_written() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("lib")).unwrap();
    std::fs::write(dir.path().join("greet.ts"), EXTENSION).unwrap();
    std::fs::write(dir.path().join("lib/shout.cjs"), CJS).unwrap();
    let host = ExtensionHost::load_with_cache(
        HostConfig {
            paths: vec![dir.path().join("greet.ts")],
            cwd: dir.path().to_path_buf(),
            mode: "print".to_owned(),
            flags: serde_json::Map::new(),
            memory_limit: None,
        },
        None,
    )
    .await
    .unwrap();
    assert_eq!(greet(&host, dir.path(), "bo").await.unwrap(), "BO! glad");
    let listed: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn positions_in_errors_survive_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.ts");
    std::fs::write(
        &path,
        "type T = { a: string };\nconst x: T = { a: \"1\" };\n\nexport default function (pi: unknown): void {\n  throw new Error(`bad ${x.a}`);\n}\n",
    )
    .unwrap();
    let cache = dir.path().join("cache");
    for run in ["cold", "warm"] {
        let failure = ExtensionHost::load_with_cache(
            HostConfig {
                paths: vec![path.clone()],
                cwd: dir.path().to_path_buf(),
                mode: "print".to_owned(),
                flags: serde_json::Map::new(),
                memory_limit: None,
            },
            Some(cache.clone()),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(failure.contains("bad 1"), "{run}: {failure}");
        assert!(failure.contains("bad.ts:5:"), "{run}: {failure}");
    }
}
