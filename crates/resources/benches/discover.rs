#![allow(clippy::print_stdout, clippy::unwrap_used, clippy::expect_used)]
//! What start-up spends on skills and prompt templates: `cargo bench -p knightcode-resources
//! --bench discover`. 200 skills (folders with a `SKILL.md`, some grouped, a `.gitignore`)
//! and 200 templates in the discovered folders, loaded the way a session starts (every
//! location, collisions checked, the skills section built). Prints medians; these machines
//! are noisy.

use std::hint::black_box;
use std::time::Duration;
use std::time::Instant;

use knightcode_resources::ResourceConfig;
use knightcode_resources::Resources;
use knightcode_resources::SkillReadTool;
use knightcode_resources::skills::format_for_prompt;

const SKILLS: usize = 200;
const TEMPLATES: usize = 200;
const RUNS: usize = 200;

fn write(path: &std::path::Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

/// Nanoseconds the process (all its threads) has run on a CPU, user and system, from
/// Linux's `/proc/self/stat` (clock ticks of 10 ms, fine over hundreds of loads), so that
/// time spent waiting for a core on a loaded machine is left out; `None` elsewhere.
fn cpu_ns() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/self/stat").ok()?;
    let after_name = &text[text.rfind(')')? + 2..];
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn main() {
    let root = tempfile::tempdir().unwrap();
    let home = root.path().join("home");
    let agent = home.join(".knightcode").join("agent");
    let project = root.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    let body = "Follow these steps.\n\n1. Read the code.\n2. Check the tests.\n".repeat(20);
    for i in 0..SKILLS {
        // A quarter of them one level down, as grouped skill collections are.
        let folder = if i % 4 == 0 {
            agent
                .join("skills")
                .join(format!("group-{}", i % 8))
                .join(format!("skill-{i}"))
        } else {
            agent.join("skills").join(format!("skill-{i}"))
        };
        write(
            &folder.join("SKILL.md"),
            &format!(
                "---\nname: skill-{i}\ndescription: Does task number {i} when the user asks for it, with care.\nlicense: MIT\n---\n{body}"
            ),
        );
        write(&folder.join("reference.md"), "More detail.\n");
    }
    write(&agent.join("skills").join(".gitignore"), "scratch/\n");
    for i in 0..TEMPLATES {
        write(
            &agent.join("prompts").join(format!("template-{i}.md")),
            &format!(
                "---\ndescription: Template {i}\nargument-hint: <file> [focus]\n---\nReview $1 focusing on ${{@:2}}.\n{body}"
            ),
        );
    }
    let config = ResourceConfig {
        cwd: project,
        agent_dir: agent,
        home: Some(home),
        trusted: true,
        ..ResourceConfig::default()
    };
    let empty = tempfile::tempdir().unwrap();
    let nothing = ResourceConfig {
        cwd: empty.path().to_path_buf(),
        agent_dir: empty.path().join("agent"),
        home: Some(empty.path().to_path_buf()),
        trusted: true,
        ..ResourceConfig::default()
    };

    let loaded = Resources::load(&config);
    assert_eq!(loaded.skills.len(), SKILLS);
    assert_eq!(loaded.templates.len(), TEMPLATES);

    let mut with = Vec::with_capacity(RUNS);
    let mut without = Vec::with_capacity(RUNS);
    let cpu_start = cpu_ns();
    for _ in 0..RUNS {
        let start = Instant::now();
        let resources = Resources::load(black_box(&config));
        black_box(format_for_prompt(&resources.skills, SkillReadTool::Read));
        with.push(start.elapsed());
    }
    let cpu_per_load = cpu_ns()
        .zip(cpu_start)
        .map(|(end, start)| (end - start) as f64 / RUNS as f64 / 1e6);
    for _ in 0..RUNS {
        let start = Instant::now();
        let resources = Resources::load(black_box(&nothing));
        black_box(format_for_prompt(&resources.skills, SkillReadTool::Read));
        without.push(start.elapsed());
    }
    let expand_start = Instant::now();
    for i in 0..RUNS {
        black_box(loaded.expand(&format!("/template-{} a.rs \"error paths\"", i % TEMPLATES)));
    }
    let per_expand = expand_start.elapsed() / RUNS as u32;
    let (with, without) = (median(with), median(without));
    let cpu = cpu_per_load.map_or_else(|| "n/a".to_owned(), |ms| format!("{ms:.2} ms"));
    println!(
        "{SKILLS} skills + {TEMPLATES} templates: load + skills section median {:.2} ms \
         (CPU time per load {cpu}); nothing to load {:.3} ms; added {:.2} ms (target <= 5 ms); \
         one template expansion {:.1} µs",
        with.as_secs_f64() * 1e3,
        without.as_secs_f64() * 1e3,
        with.saturating_sub(without).as_secs_f64() * 1e3,
        per_expand.as_secs_f64() * 1e6,
    );
}
