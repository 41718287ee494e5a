//! The directory walk shared by grep and find: ripgrep's own crates, `.gitignore`, `.ignore`
//! and git's exclude files honoured, hidden files included, `.git` skipped, symbolic links
//! listed but not followed (so link loops cannot trap the walk).
//!
//! Results come back in path order (a depth-first walk with every directory sorted by
//! name, as the single-threaded walk gave them). The walk starts sorted on the calling
//! thread, which is all a search that fills its limit in the first files needs; after a few
//! milliseconds it hands the rest to `ignore`'s parallel walker, whose threads find results
//! in any order: [`TopN`] keeps the `limit` smallest, and once it is full anything sorting
//! after its largest is pruned, directories before they are read, so a search with plenty
//! of hits stops early without scanning the rest.

use std::cmp::Ordering as CmpOrdering;
use std::collections::BinaryHeap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use globset::GlobBuilder;
use ignore::{DirEntry, WalkBuilder, WalkState};
use tokio_util::sync::CancellationToken;

use crate::error::ToolsError;
use crate::ops::{GlobOutput, GlobRequest};

/// Whether `dir` or an ancestor holds a `.git` entry.
fn inside_git_repo(dir: &Path) -> bool {
    dir.ancestors()
        .any(|ancestor| ancestor.join(".git").exists())
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panicking visitor cannot leave the heap half-updated (push and pop are whole), so
    // the data is still usable.
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A walk result ranked by its path (then by whatever else `Ord` compares).
pub(crate) trait Ranked: Ord + Send {
    fn path(&self) -> &Path;
}

/// The `limit` smallest results offered so far, from any number of threads.
pub(crate) struct TopN<T> {
    limit: usize,
    full: AtomicBool,
    /// A max-heap: the top is the result a better one evicts.
    heap: Mutex<BinaryHeap<T>>,
}

impl<T: Ranked> TopN<T> {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit: limit.max(1),
            full: AtomicBool::new(false),
            heap: Mutex::new(BinaryHeap::new()),
        }
    }

    /// Whether nothing at or under `path` can make the cut any more. Descendants sort after
    /// their directory, so a directory beyond the largest kept result is skipped whole.
    pub(crate) fn beyond(&self, path: &Path) -> bool {
        if !self.full.load(Ordering::Relaxed) {
            return false;
        }
        lock(&self.heap)
            .peek()
            .is_some_and(|worst| path > worst.path())
    }

    pub(crate) fn offer(&self, item: T) {
        let mut heap = lock(&self.heap);
        if heap.len() < self.limit {
            heap.push(item);
            if heap.len() == self.limit {
                self.full.store(true, Ordering::Relaxed);
            }
        } else if heap.peek().is_some_and(|worst| item < *worst) {
            heap.pop();
            heap.push(item);
        }
    }

    /// The kept results in order, and whether the limit was reached.
    pub(crate) fn take_sorted(&self) -> (Vec<T>, bool) {
        let heap = std::mem::take(&mut *lock(&self.heap));
        let full = heap.len() >= self.limit;
        (heap.into_sorted_vec(), full)
    }
}

/// How many samples of skipped paths are kept; the rest are only counted.
const SKIPPED_KEPT: usize = 1000;
/// How many skipped paths a note names.
const SKIPPED_SHOWN: usize = 3;
/// How much of a skipped path a note shows.
const SKIPPED_PATH_CHARS: usize = 200;

/// Paths the walk could not read (unreadable directories and files), for a note.
#[derive(Default)]
pub(crate) struct Skipped {
    overflow: AtomicUsize,
    paths: Mutex<Vec<(PathBuf, String)>>,
}

impl Skipped {
    pub(crate) fn record(&self, path: PathBuf, reason: String) {
        let mut paths = lock(&self.paths);
        if paths.len() < SKIPPED_KEPT {
            paths.push((path, reason));
        } else {
            self.overflow.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn record_walk_error(&self, error: &ignore::Error) {
        // Only I/O failures lose results; a malformed ignore file is ignored as rg does.
        if let Some(io_error) = error.io_error()
            && let Some(path) = error_path(error)
        {
            self.record(path.to_path_buf(), os_reason(io_error));
        }
    }

    /// "Skipped 2 unreadable paths: a: Permission denied (os error 13); b: …", paths shown
    /// relative to `root`; `relevant` drops paths that could not have changed the result
    /// (those pruned by the limit anyway).
    pub(crate) fn note(self, root: &Path, relevant: impl Fn(&Path) -> bool) -> Option<String> {
        let mut paths = self
            .paths
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner);
        paths.retain(|(path, _)| relevant(path));
        paths.sort();
        // The parallel phase may meet again a directory the in-order phase failed to read.
        paths.dedup_by(|a, b| a.0 == b.0);
        let count = paths.len() + self.overflow.into_inner();
        if count == 0 {
            return None;
        }
        let mut shown: Vec<String> = paths
            .iter()
            .take(SKIPPED_SHOWN)
            .map(|(path, reason)| {
                let relative = path.strip_prefix(root).unwrap_or(path);
                let name = if relative.as_os_str().is_empty() {
                    path.to_string_lossy()
                } else {
                    relative.to_string_lossy()
                };
                // Paths too long to open would otherwise fill the note.
                let name = match name.char_indices().nth(SKIPPED_PATH_CHARS) {
                    Some((cut, _)) => format!("{}…", &name[..cut]),
                    None => name.into_owned(),
                };
                format!("{name}: {reason}")
            })
            .collect();
        if count > shown.len() {
            shown.push(format!("{} more", count - shown.len()));
        }
        let noun = if count == 1 { "path" } else { "paths" };
        Some(format!(
            "Skipped {count} unreadable {noun}: {}",
            shown.join("; ")
        ))
    }
}

/// The OS's words for an error: the sorted walk wraps its errors with the path (which the
/// note already shows), the parallel one does not.
fn os_reason(error: &io::Error) -> String {
    if error.raw_os_error().is_none()
        && let Some(inner) = error.get_ref().and_then(|wrapped| wrapped.source())
    {
        return inner.to_string();
    }
    error.to_string()
}

fn error_path(error: &ignore::Error) -> Option<&Path> {
    match error {
        ignore::Error::WithPath { path, .. } => Some(path),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child),
        _ => None,
    }
}

/// The walk of `root` for grep and find.
pub(crate) struct Walk<'a, T> {
    pub(crate) builder: WalkBuilder,
    pub(crate) results: Arc<TopN<T>>,
    pub(crate) skipped: Skipped,
    pub(crate) cancel: &'a CancellationToken,
    /// How long the walk runs in order on the calling thread before it goes parallel.
    pub(crate) sequential_time: Duration,
    /// How many entries it visits in order at most (tests hand over at a chosen entry).
    pub(crate) sequential_entries: usize,
}

enum InOrder {
    Done,
    /// Go on in parallel after this path (`None`: from the start).
    HandOver(Option<PathBuf>),
}

/// Long enough for a search that fills its limit in the first files (the usual grep) to
/// finish in order without starting threads, short enough to cost a full scan little.
const SEQUENTIAL_TIME: Duration = Duration::from_millis(4);

/// Whether the in-order phase, which visited everything up to and including `last`, has
/// dealt with `path` already: true for everything sorting before `last` except its
/// ancestors, whose later children are still to come.
fn walked_in_order(path: &Path, last: &Path) -> bool {
    path <= last && !last.starts_with(path)
}

impl<'a, T: Ranked + 'static> Walk<'a, T> {
    /// Inside a repository git's rules apply as git sees them (a nested repository does not
    /// inherit its parent's ignores); outside one, `.gitignore` files are honoured anyway,
    /// as `fd --no-require-git` does for the reference agent.
    pub(crate) fn new(root: &Path, limit: usize, cancel: &'a CancellationToken) -> Self {
        let results = Arc::new(TopN::new(limit));
        let mut builder = WalkBuilder::new(root);
        let prune = Arc::clone(&results);
        builder
            .hidden(false)
            .follow_links(false)
            .require_git(inside_git_repo(root))
            .filter_entry(move |entry| entry.file_name() != ".git" && !prune.beyond(entry.path()))
            // For the in-order phase; the parallel walker ignores it.
            .sort_by_file_name(|a, b| a.cmp(b));
        Self {
            builder,
            results,
            skipped: Skipped::default(),
            cancel,
            sequential_time: SEQUENTIAL_TIME,
            sequential_entries: usize::MAX,
        }
    }

    /// Runs the walk: the visitors from `make_visitor` are called with every entry, walk
    /// errors are recorded as skipped paths, and the cancel token stops every thread at its
    /// next entry (searchers also check it between reads).
    ///
    /// The walk starts in path order on this thread: a search whose limit fills in the
    /// first files (grep's first 100 matches) ends there, as fast as a plain sorted walk.
    /// After [`Self::sequential_time`] it hands the rest to the parallel walker, which
    /// skips what the first phase covered.
    pub(crate) fn run<F>(&self, mut make_visitor: impl FnMut() -> F) -> Result<(), ToolsError>
    where
        F: FnMut(&DirEntry) -> WalkState + Send,
    {
        let last = match self.run_in_order(&mut make_visitor()) {
            InOrder::Done => return self.ended(),
            InOrder::HandOver(last) => last,
        };
        let cancel = self.cancel;
        let skipped = &self.skipped;
        let results = &self.results;
        // Nothing visited yet: an empty path sorts before everything and is no one's
        // ancestor.
        let last = last.as_deref().unwrap_or(Path::new(""));
        self.builder.build_parallel().run(|| {
            let mut visit = make_visitor();
            Box::new(move |entry| {
                if cancel.is_cancelled() {
                    return WalkState::Quit;
                }
                match entry {
                    // Queued before the limit was reached; not worth reading any more.
                    Ok(entry) if results.beyond(entry.path()) => WalkState::Skip,
                    Ok(entry) if walked_in_order(entry.path(), last) => WalkState::Skip,
                    // An ancestor of the hand-over point: visited already, but its later
                    // children are not.
                    Ok(entry) if last.starts_with(entry.path()) => WalkState::Continue,
                    Ok(entry) => visit(&entry),
                    Err(error) => {
                        if !error_path(&error).is_some_and(|path| walked_in_order(path, last)) {
                            skipped.record_walk_error(&error);
                        }
                        WalkState::Continue
                    }
                }
            })
        });
        self.ended()
    }

    /// The in-order phase.
    fn run_in_order<F>(&self, visit: &mut F) -> InOrder
    where
        F: FnMut(&DirEntry) -> WalkState,
    {
        let started = Instant::now();
        let mut last = None;
        for (count, entry) in self.builder.build().enumerate() {
            if self.cancel.is_cancelled() {
                return InOrder::Done;
            }
            if count >= self.sequential_entries || started.elapsed() >= self.sequential_time {
                return InOrder::HandOver(last);
            }
            match entry {
                // In order, everything after this sorts after it too.
                Ok(entry) if self.results.beyond(entry.path()) => return InOrder::Done,
                Ok(entry) => {
                    // Our visitors skip no directories, so Skip needs no handling here.
                    if visit(&entry) == WalkState::Quit {
                        return InOrder::Done;
                    }
                    last = Some(entry.into_path());
                }
                Err(error) => self.skipped.record_walk_error(&error),
            }
        }
        InOrder::Done
    }

    fn ended(&self) -> Result<(), ToolsError> {
        if self.cancel.is_cancelled() {
            return Err(ToolsError::Aborted);
        }
        Ok(())
    }

    /// The results in path order, whether the limit was reached, and the note on skipped
    /// paths.
    pub(crate) fn finish(self, root: &Path) -> (Vec<T>, bool, Option<String>) {
        let (items, full) = self.results.take_sorted();
        let last = items.last().map(|item| item.path().to_path_buf());
        let note = self.skipped.note(root, |path| {
            !full || last.as_deref().is_none_or(|last| path <= last)
        });
        (items, full, note)
    }
}

/// A reader that fails once the token is cancelled, so a search stops inside a large file
/// too (the searcher reads in 64 KiB blocks).
pub(crate) struct CancellableRead<'a, R> {
    pub(crate) inner: R,
    pub(crate) cancel: &'a CancellationToken,
}

impl<R: io::Read> io::Read for CancellableRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            return Err(io::Error::other("search aborted"));
        }
        self.inner.read(buf)
    }
}

/// A path `find` reports.
#[derive(PartialEq, Eq)]
struct Found {
    path: PathBuf,
    is_dir: bool,
}

impl Ord for Found {
    fn cmp(&self, other: &Self) -> CmpOrdering {
        self.path.cmp(&other.path)
    }
}

impl PartialOrd for Found {
    fn partial_cmp(&self, other: &Self) -> Option<CmpOrdering> {
        Some(self.cmp(other))
    }
}

impl Ranked for Found {
    fn path(&self) -> &Path {
        &self.path
    }
}

/// fd-compatible glob search: a pattern without `/` matches file names; one with `/`
/// matches the absolute path (with an implied leading `**/`). Lowercase patterns match
/// case-insensitively (fd's smart case).
fn glob_blocking(request: &GlobRequest) -> Result<GlobOutput, ToolsError> {
    let full_path = request.pattern.contains('/');
    let mut pattern = request.pattern.clone();
    if full_path && !(pattern.starts_with('/') || pattern.starts_with("**/") || pattern == "**") {
        pattern = format!("**/{pattern}");
    }
    let case_insensitive = !request.pattern.chars().any(char::is_uppercase);
    let matcher = GlobBuilder::new(&pattern)
        .literal_separator(true)
        .case_insensitive(case_insensitive)
        .build()
        .map_err(|error| ToolsError::message(format!("Invalid glob pattern: {error}")))?
        .compile_matcher();

    let mut walk = Walk::<Found>::new(&request.dir, request.limit, &request.cancel);
    walk.builder.add_custom_ignore_filename(".fdignore");
    walk.run(|| {
        let matcher = &matcher;
        let results = &walk.results;
        move |entry: &DirEntry| {
            if entry.depth() == 0 {
                return WalkState::Continue;
            }
            let matched = if full_path {
                matcher.is_match(entry.path())
            } else {
                matcher.is_match(entry.file_name())
            };
            if matched && !results.beyond(entry.path()) {
                results.offer(Found {
                    path: entry.path().to_path_buf(),
                    is_dir: entry.file_type().is_some_and(|kind| kind.is_dir()),
                });
            }
            WalkState::Continue
        }
    })?;
    let (found, _, note) = walk.finish(&request.dir);
    let paths = found
        .into_iter()
        .map(|found| {
            let mut text = found.path.to_string_lossy().into_owned();
            if found.is_dir {
                text.push('/');
            }
            text
        })
        .collect();
    Ok(GlobOutput {
        paths,
        notes: note.into_iter().collect(),
    })
}

/// [`crate::ops::LocalFileOps::glob`]: the walk runs on a blocking thread (which starts the
/// walker's threads).
pub(crate) async fn local_glob(request: GlobRequest) -> Result<GlobOutput, ToolsError> {
    match tokio::task::spawn_blocking(move || glob_blocking(&request)).await {
        Ok(result) => result,
        Err(error) => Err(ToolsError::message(format!("File search failed: {error}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `dirs` directories of `files` files each, `d000/f000.txt` …
    fn tree(dirs: usize, files: usize) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for d in 0..dirs {
            let sub = dir.path().join(format!("d{d:03}"));
            std::fs::create_dir(&sub).unwrap();
            for f in 0..files {
                std::fs::write(sub.join(format!("f{f:03}.txt")), "x\n").unwrap();
            }
        }
        dir
    }

    fn is_file(entry: &DirEntry) -> bool {
        entry.file_type().is_some_and(|kind| kind.is_file())
    }

    #[test]
    fn results_come_back_in_path_order_and_the_limit_prunes_the_rest() {
        let dir = tree(40, 25);
        let cancel = CancellationToken::new();
        let visited = AtomicUsize::new(0);
        let mut walk = Walk::<Found>::new(dir.path(), 10, &cancel);
        walk.sequential_entries = 0;
        walk.run(|| {
            let results = &walk.results;
            let visited = &visited;
            move |entry: &DirEntry| {
                if is_file(entry) {
                    visited.fetch_add(1, Ordering::Relaxed);
                    results.offer(Found {
                        path: entry.path().to_path_buf(),
                        is_dir: false,
                    });
                }
                WalkState::Continue
            }
        })
        .unwrap();
        let (found, full, note) = walk.finish(dir.path());
        assert!(full);
        assert_eq!(note, None);
        let names: Vec<PathBuf> = found
            .iter()
            .map(|found| found.path.strip_prefix(dir.path()).unwrap().to_path_buf())
            .collect();
        let expected: Vec<PathBuf> = (0..10)
            .map(|f| PathBuf::from(format!("d000/f{f:03}.txt")))
            .collect();
        assert_eq!(names, expected);
        // Once ten results are kept, directories sorting after the tenth are never read:
        // at most the directories the threads had already entered are searched.
        let visited = visited.into_inner();
        assert!(visited < 40 * 25 / 2, "visited {visited} of 1000 files");
    }

    /// Every path the walk offers, with the hand-over after `entries` in-order entries.
    fn walk_all(root: &Path, limit: usize, entries: usize) -> Vec<PathBuf> {
        let cancel = CancellationToken::new();
        let mut walk = Walk::<Found>::new(root, limit, &cancel);
        walk.sequential_entries = entries;
        walk.sequential_time = Duration::MAX;
        walk.run(|| {
            let results = &walk.results;
            move |entry: &DirEntry| {
                if entry.depth() > 0 {
                    results.offer(Found {
                        path: entry.path().to_path_buf(),
                        is_dir: !is_file(entry),
                    });
                }
                WalkState::Continue
            }
        })
        .unwrap();
        let (found, _, _) = walk.finish(root);
        found.into_iter().map(|found| found.path).collect()
    }

    #[test]
    fn the_parallel_phase_takes_over_where_the_in_order_phase_stopped() {
        let dir = tree(6, 7);
        let everything = walk_all(dir.path(), 1000, usize::MAX);
        assert_eq!(everything.len(), 6 + 6 * 7);
        // Handing over anywhere (before the root, at a directory, mid-directory, at the
        // last file) neither loses nor repeats an entry.
        for entries in [0, 1, 2, 3, 5, 9, 17, 30, 48, 49, 50] {
            assert_eq!(
                walk_all(dir.path(), 1000, entries),
                everything,
                "after {entries}"
            );
            assert_eq!(
                walk_all(dir.path(), 10, entries),
                everything[..10],
                "limit 10 after {entries}"
            );
        }
    }

    #[test]
    fn cancelling_inside_the_walk_stops_every_thread() {
        let dir = tree(40, 25);
        let cancel = CancellationToken::new();
        let visited = AtomicUsize::new(0);
        let mut walk = Walk::<Found>::new(dir.path(), 10_000, &cancel);
        walk.sequential_entries = 0;
        let result = walk.run(|| {
            let visited = &visited;
            let cancel = &cancel;
            move |entry: &DirEntry| {
                if is_file(entry) && visited.fetch_add(1, Ordering::Relaxed) + 1 == 20 {
                    cancel.cancel();
                }
                WalkState::Continue
            }
        });
        assert!(matches!(result, Err(ToolsError::Aborted)));
        // Each thread sees the token at its next entry: at most one more visit per thread.
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(12));
        let visited = visited.into_inner();
        assert!(visited <= 20 + threads, "visited {visited} files");
    }

    #[test]
    fn a_reader_stops_once_cancelled() {
        let cancel = CancellationToken::new();
        let mut reader = CancellableRead {
            inner: &b"abc"[..],
            cancel: &cancel,
        };
        let mut buf = [0_u8; 2];
        assert_eq!(io::Read::read(&mut reader, &mut buf).unwrap(), 2);
        cancel.cancel();
        assert!(io::Read::read(&mut reader, &mut buf).is_err());
    }

    #[test]
    fn skipped_notes_name_a_few_paths_in_order_and_count_the_rest() {
        let skipped = Skipped::default();
        for name in ["e", "d", "c", "b", "a"] {
            skipped.record(PathBuf::from(format!("/r/{name}")), "denied".to_owned());
        }
        assert_eq!(
            skipped.note(Path::new("/r"), |path| path != Path::new("/r/e")),
            Some("Skipped 4 unreadable paths: a: denied; b: denied; c: denied; 1 more".to_owned())
        );
        assert_eq!(Skipped::default().note(Path::new("/r"), |_| true), None);
    }
}
