//! A connection's resource list and resource templates, kept after their first listing when
//! the server says it announces changes (`resources.listChanged`):
//! `notifications/resources/list_changed` empties them, so the next listing asks again. A
//! server that does not announce changes is asked every time.

use std::sync::Mutex;
use std::sync::PoisonError;
use std::sync::atomic::AtomicU64;
use std::sync::atomic::Ordering;

use serde_json::Value;

/// Which of the two lists.
#[derive(Debug, Clone, Copy)]
pub(crate) enum ResourceList {
    Resources,
    Templates,
}

#[derive(Default)]
pub(crate) struct ResourceCache {
    lists: Mutex<Lists>,
    /// Bumped by every change notice, so a listing that was under way when the notice came
    /// is not kept (it may predate the change).
    generation: AtomicU64,
}

#[derive(Default)]
struct Lists {
    resources: Option<Vec<Value>>,
    templates: Option<Vec<Value>>,
}

impl Lists {
    fn slot(&mut self, list: ResourceList) -> &mut Option<Vec<Value>> {
        match list {
            ResourceList::Resources => &mut self.resources,
            ResourceList::Templates => &mut self.templates,
        }
    }
}

impl ResourceCache {
    /// The kept list, and the generation a fresh listing is stored under.
    pub fn get(&self, list: ResourceList) -> (Option<Vec<Value>>, u64) {
        let generation = self.generation.load(Ordering::SeqCst);
        let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
        (lists.slot(list).clone(), generation)
    }

    /// Keeps a listing made at `generation`, unless a change notice came since.
    pub fn put(&self, list: ResourceList, generation: u64, items: Vec<Value>) {
        let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
        if self.generation.load(Ordering::SeqCst) == generation {
            *lists.slot(list) = Some(items);
        }
    }

    /// The server said its resources changed.
    pub fn invalidate(&self) {
        let mut lists = self.lists.lock().unwrap_or_else(PoisonError::into_inner);
        self.generation.fetch_add(1, Ordering::SeqCst);
        *lists = Lists::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_listing_that_predates_a_change_notice_is_not_kept() {
        let cache = ResourceCache::default();
        let (kept, generation) = cache.get(ResourceList::Resources);
        assert!(kept.is_none());
        cache.invalidate();
        cache.put(ResourceList::Resources, generation, vec![json!("old")]);
        assert!(cache.get(ResourceList::Resources).0.is_none());
        let (_, generation) = cache.get(ResourceList::Resources);
        cache.put(ResourceList::Resources, generation, vec![json!("new")]);
        assert_eq!(
            cache.get(ResourceList::Resources).0,
            Some(vec![json!("new")])
        );
        assert!(cache.get(ResourceList::Templates).0.is_none());
        cache.invalidate();
        assert!(cache.get(ResourceList::Resources).0.is_none());
    }
}
