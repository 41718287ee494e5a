use super::*;

fn git(source: &str) -> GitSource {
    match parse(source) {
        Source::Git(git) => git,
        other => panic!("{source} parsed as {other:?}"),
    }
}

#[test]
fn npm_specs_with_scopes_and_versions() {
    let cases = [
        ("npm:pkg", "pkg", "pkg", false),
        ("npm:pkg@1.2.3", "pkg@1.2.3", "pkg", true),
        ("npm:@scope/pkg", "@scope/pkg", "@scope/pkg", false),
        ("npm:@scope/pkg@^2", "@scope/pkg@^2", "@scope/pkg", true),
    ];
    for (source, spec, name, pinned) in cases {
        assert_eq!(
            parse(source),
            Source::Npm(NpmSource {
                spec: spec.into(),
                name: name.into(),
                pinned
            }),
            "{source}"
        );
    }
}

#[test]
fn git_shorthands_and_urls_with_refs() {
    let g = git("git:github.com/user/repo@v1");
    assert_eq!(g.repo, "https://github.com/user/repo");
    assert_eq!(
        (g.host.as_str(), g.path.as_str()),
        ("github.com", "user/repo")
    );
    assert_eq!(g.git_ref.as_deref(), Some("v1"));

    let g = git("git:git@github.com:user/repo.git@main");
    assert_eq!(g.repo, "git@github.com:user/repo.git");
    assert_eq!(g.path, "user/repo");
    assert_eq!(g.git_ref.as_deref(), Some("main"));

    let g = git("https://gitlab.com/group/sub/repo.git@abc123");
    assert_eq!(g.repo, "https://gitlab.com/group/sub/repo.git");
    assert_eq!(
        (g.host.as_str(), g.path.as_str()),
        ("gitlab.com", "group/sub/repo")
    );
    assert_eq!(g.git_ref.as_deref(), Some("abc123"));

    let g = git("ssh://git@example.com:2222/user/repo");
    assert_eq!(
        (g.host.as_str(), g.path.as_str()),
        ("example.com", "user/repo")
    );
    assert_eq!(g.git_ref, None);

    let g = git("git://example.org/user/repo");
    assert_eq!(g.host, "example.org");

    let g = git("git:user/repo");
    assert_eq!(g.repo, "https://github.com/user/repo");
}

#[test]
fn local_paths_and_unprefixed_shorthands() {
    for source in [
        "./pkg",
        "../x",
        "/abs/pkg",
        "~/pkg",
        "github.com/user/repo",
        "pkg",
    ] {
        assert_eq!(parse(source), Source::Local(source.into()), "{source}");
    }
    // A `git:` source without a repository path is not git.
    assert!(matches!(parse("git:nothing"), Source::Local(_)));
}

#[test]
fn identity_ignores_refs_versions_and_url_spelling() {
    let base = Path::new("/base");
    let id = |s| identity(s, base, Some(Path::new("/home/me")));
    assert_eq!(id("npm:@a/b@1"), id("npm:@a/b"));
    assert_eq!(id("git:github.com/u/r@v1"), id("git:git@github.com:u/r"));
    assert_eq!(id("https://github.com/u/r.git"), "git:github.com/u/r");
    assert_eq!(id("./pkg/../pkg"), "local:/base/pkg");
    assert_eq!(id("~/x"), "local:/home/me/x");
}
