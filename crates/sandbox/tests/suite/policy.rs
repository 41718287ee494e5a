//! `SandboxPolicy::check_write`, the rule the file tools share with the kernel's.

use std::path::{Path, PathBuf};

use knightcode_sandbox::{SandboxError, SandboxMode, SandboxPolicy};

fn workspace(project: &Path) -> SandboxPolicy {
    SandboxPolicy {
        mode: SandboxMode::WorkspaceWrite,
        writable_roots: vec![project.canonicalize().unwrap()],
        network: false,
    }
}

#[test]
fn workspace_write_allows_the_project_and_refuses_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let policy = workspace(&project);

    assert!(policy.check_write(&project.join("a.txt")).is_ok());
    assert!(
        policy
            .check_write(&project.join("new/deeper/a.txt"))
            .is_ok()
    );
    for escape in [
        outside.join("a.txt"),
        project.join("../outside/a.txt"),
        project.join("new/../../outside/a.txt"),
        PathBuf::from("/etc/passwd"),
    ] {
        let refused = policy.check_write(&escape).unwrap_err();
        assert!(
            matches!(refused, SandboxError::WriteRefused { .. }),
            "{escape:?}"
        );
        let message = refused.to_string();
        assert!(
            message.starts_with("the workspace-write sandbox does not allow writing"),
            "{message}"
        );
        assert!(message.contains("sandbox.writableRoots"), "{message}");
    }
}

#[test]
fn a_link_out_of_the_project_is_no_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().join("project");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, project.join("door")).unwrap();
    std::os::unix::fs::symlink(outside.join("file"), project.join("file-link")).unwrap();
    let policy = workspace(&project);
    assert!(policy.check_write(&project.join("door/a.txt")).is_err());
    assert!(policy.check_write(&project.join("door/new/a.txt")).is_err());
    // A dangling link to a file outside: writing through it would create that file.
    assert!(policy.check_write(&project.join("file-link")).is_err());
}

#[test]
fn read_only_refuses_every_write_and_off_allows_every_one() {
    let read_only = SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        ..SandboxPolicy::default()
    };
    let message = read_only
        .check_write(Path::new("/tmp/x"))
        .unwrap_err()
        .to_string();
    assert!(
        message.starts_with("the read-only sandbox does not allow writing /tmp/x"),
        "{message}"
    );
    assert!(
        SandboxPolicy::off()
            .check_write(Path::new("/etc/x"))
            .is_ok()
    );
}

#[test]
fn modes_parse_by_their_setting_names() {
    for mode in [
        SandboxMode::Off,
        SandboxMode::ReadOnly,
        SandboxMode::WorkspaceWrite,
    ] {
        assert_eq!(mode.as_str().parse::<SandboxMode>().unwrap(), mode);
    }
    assert!("readonly".parse::<SandboxMode>().is_err());
}

#[test]
fn workspace_roots_cover_the_project_and_the_temp_folders_once() {
    let dir = tempfile::tempdir().unwrap();
    let policy = SandboxPolicy::for_project(
        SandboxMode::WorkspaceWrite,
        dir.path(),
        &[],
        &[dir.path().to_path_buf()],
        false,
    );
    let project = dir.path().canonicalize().unwrap();
    assert_eq!(policy.writable_roots[0], project);
    assert!(policy.writable_roots.contains(&PathBuf::from("/tmp")));
    let unique: std::collections::HashSet<_> = policy.writable_roots.iter().collect();
    assert_eq!(unique.len(), policy.writable_roots.len());
    assert!(!policy.network);
    // Off needs no roots and lets everything through, network included.
    let off = SandboxPolicy::for_project(SandboxMode::Off, dir.path(), &[], &[], false);
    assert!(off.writable_roots.is_empty() && off.network);
}
