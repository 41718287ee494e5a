#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
//! The second compatibility corpus: extension packages published on npm (issue 28), pinned in
//! `ext_examples/npm.rs` and installed with their dependencies at test time. Each package is
//! loaded whole (`-e <package folder>`, which reads its `pi` manifest) and judged by the
//! probes in `tests/suite/ext_npm/probes/<package>.json` (`/` written `+`), with the harness
//! of the examples corpus (`ext_examples`): the same probe format, checks, known failures,
//! `KC_EXAMPLES_REFERENCE`, `KC_EXAMPLES_ONLY` and `KC_WRITE_COMPAT` (which writes the npm
//! section of `docs/extensions-compat.md`). npm is required; without it the test fails.

use super::ext_examples;
use super::ext_examples::Column;
use super::ext_examples::doc;
use super::ext_examples::npm;

#[test]
fn npm_packages_behave_as_in_the_reference() {
    let modules = npm::node_modules();
    let names: Vec<String> = npm::PACKAGES.iter().map(|(n, _)| (*n).to_owned()).collect();
    let (mut packages, missing) =
        ext_examples::load_examples(&ext_examples::probes_dir("ext_npm"), &names);
    // Our extension cache (transpiled code and bytecode) is shared by the runs, as a user's
    // is after the first start: pi-mermaid imports all of mermaid, which cold takes most of a
    // probe's time. pi has no such cache and ignores the variable.
    let shared_cache = modules.with_file_name("ext-cache");
    for package in &mut packages {
        for probe in package.spec["probes"].as_array_mut().into_iter().flatten() {
            probe["env"]["KNIGHTCODE_EXT_CACHE_DIR"] = shared_cache.to_string_lossy().into();
        }
    }
    assert!(
        missing.is_empty(),
        "packages without a probe file in tests/suite/ext_npm/probes: {missing:?}"
    );
    for (package, (name, version)) in packages.iter().zip(npm::PACKAGES) {
        assert_eq!(
            package.spec["version"].as_str(),
            Some(version),
            "{name}: the probe file names another version than the pinned one"
        );
    }
    let only = ext_examples::only();
    let reference = ext_examples::reference();
    let (agent, columns) = ext_examples::agent(reference.as_ref(), &[Column::Original]);
    // A package the reference cannot run (`"unconfirmed"`: why) is left out of a reference
    // run unless `KC_EXAMPLES_ONLY` names it.
    let unconfirmed: Vec<String> = packages
        .iter()
        .filter(|p| p.spec["unconfirmed"].is_string())
        .map(|p| p.name.clone())
        .collect();
    let selected = match (&reference, only) {
        (Some(_), None) => Some(
            names
                .iter()
                .filter(|n| !unconfirmed.contains(n))
                .cloned()
                .collect(),
        ),
        (_, only) => only,
    };
    let outcomes = ext_examples::run_probes(
        &agent,
        &packages,
        &columns,
        selected.as_deref(),
        &|package, _| modules.join(&package.name),
    );
    if reference.is_none() && selected.is_none() && std::env::var_os("KC_WRITE_COMPAT").is_some() {
        doc::write(doc::Section::Npm, &doc::render_npm(&packages, &outcomes));
    }
    let problems = ext_examples::problems(&packages, &outcomes, reference.is_some());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
