//! Apache 4.4's `OffsetSyncStore`: the offset syncs of each source partition kept in 64 slots
//! spaced roughly exponentially back from the latest, and the translation of a consumer
//! group's upstream offset to a downstream one.
//!
//! Invariants per partition (Apache's, `syncs[i]` for slot `i`; equality is identity, as
//! Java's `==` on the sync objects):
//!
//! - A: `syncs[0]` is the latest sync read;
//! - B: `syncs[i].upstream <= syncs[j].upstream + 2^j - 2^i` for `i < j`, distinct syncs;
//! - C: `syncs[i].upstream >= syncs[j].upstream + 2^(i-2)` for `i < j`, distinct syncs;
//! - D: `syncs[63]` is the earliest sync usable for translation.
//!
//! # Guarantees (the bound a moved consumer group gets)
//!
//! Translation uses the sync at or before the group's upstream offset and never goes past it
//! by more than one downstream record, so a group that moves to the target skips nothing;
//! it re-reads at most the records between that sync and its position (fewer the more recent
//! the sync; `offset.lag.max` bounds the gap for an active partition). Nothing is translated
//! until the syncs topic has been read to its end once.

use std::collections::HashMap;
use std::sync::Arc;

use super::formats::OffsetSync;

pub const SYNCS_PER_PARTITION: usize = 64;

type Syncs = Vec<Arc<OffsetSync>>;

#[derive(Debug, Default)]
pub struct OffsetSyncStore {
    syncs: HashMap<(String, i32), Syncs>,
    /// Apache's `initializationMustReadToEnd`: while first reading the topic, keep only the
    /// last sync per partition (when the previous checkpoints could not be read, so older
    /// syncs may have served translations already).
    initialization_must_read_to_end: bool,
    read_to_end: bool,
}

fn invariant_b(i_sync: &Arc<OffsetSync>, j_sync: &Arc<OffsetSync>, i: usize, j: usize) -> bool {
    let bound = j_sync
        .upstream_offset
        .wrapping_add(1i64 << j)
        .wrapping_sub(1i64 << i);
    Arc::ptr_eq(i_sync, j_sync) || bound < 0 || i_sync.upstream_offset <= bound
}

fn invariant_c(i_sync: &Arc<OffsetSync>, j_sync: &Arc<OffsetSync>, i: usize) -> bool {
    let bound = j_sync
        .upstream_offset
        .wrapping_add(1i64 << i.saturating_sub(2));
    Arc::ptr_eq(i_sync, j_sync) || (bound >= 0 && i_sync.upstream_offset >= bound)
}

impl OffsetSyncStore {
    pub fn new(initialization_must_read_to_end: bool) -> Self {
        Self {
            initialization_must_read_to_end,
            ..Self::default()
        }
    }

    /// The first read to the end of the syncs topic is complete: translation may start.
    pub fn set_read_to_end(&mut self) {
        self.read_to_end = true;
    }

    pub fn is_read_to_end(&self) -> bool {
        self.read_to_end
    }

    pub fn handle(&mut self, sync: OffsetSync) {
        let tp = (sync.topic.clone(), sync.partition);
        let sync = Arc::new(sync);
        match self.syncs.get_mut(&tp) {
            None => {
                self.syncs.insert(tp, vec![sync; SYNCS_PER_PARTITION]);
            }
            Some(syncs) => {
                let original = syncs.clone();
                let only_last = !self.read_to_end && self.initialization_must_read_to_end;
                update_sync_array(syncs, &original, sync, only_last);
            }
        }
    }

    /// Apache's `translateDownstream`: `None` when there is nothing to translate with,
    /// `Some(-1)` when the offset is older than every sync kept.
    pub fn translate_downstream(&self, topic: &str, partition: i32, upstream: i64) -> Option<i64> {
        if !self.read_to_end {
            return None;
        }
        let syncs = self.syncs.get(&(topic.to_owned(), partition))?;
        let sync = syncs
            .iter()
            .find(|s| s.upstream_offset <= upstream)
            .unwrap_or(&syncs[SYNCS_PER_PARTITION - 1]);
        if sync.upstream_offset > upstream {
            return Some(-1);
        }
        let step = i64::from(upstream != sync.upstream_offset);
        Some(sync.downstream_offset + step)
    }

    /// The sync in `slot` (tests).
    pub fn sync_at(&self, topic: &str, partition: i32, slot: usize) -> Option<&OffsetSync> {
        self.syncs
            .get(&(topic.to_owned(), partition))
            .map(|s| &*s[slot])
    }
}

fn update_sync_array(syncs: &mut Syncs, original: &Syncs, sync: Arc<OffsetSync>, only_last: bool) {
    let upstream_rewind = sync.upstream_offset < syncs[0].upstream_offset;
    if only_last || upstream_rewind {
        for s in syncs.iter_mut() {
            *s = sync.clone();
        }
        return;
    }
    let mut replacement = sync.clone();
    let mut replacement_index = 0usize;
    syncs[0] = replacement.clone();
    for current in 1..SYNCS_PER_PARTITION {
        let previous = current - 1;
        loop {
            let old = &original[replacement_index];
            let is_recent = invariant_b(&syncs[previous], old, previous, current);
            let separated_from_previous = invariant_c(&syncs[previous], old, previous);
            let next = current + 1;
            let separated_from_next =
                next >= SYNCS_PER_PARTITION || invariant_c(old, &syncs[next], current);
            let next_replacement = replacement_index + 1;
            let duplicate = next_replacement < SYNCS_PER_PARTITION
                && Arc::ptr_eq(old, &original[next_replacement]);
            let promote = is_recent && separated_from_previous && separated_from_next;
            if promote {
                replacement = old.clone();
            }
            let skip = duplicate || !separated_from_previous;
            if promote || skip {
                replacement_index += 1;
            }
            if !(replacement_index < current && skip) {
                break;
            }
        }
        if invariant_b(&syncs[previous], &syncs[current], previous, current) {
            break;
        }
        syncs[current] = replacement.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sync(up: i64, down: i64) -> OffsetSync {
        OffsetSync {
            topic: "t".into(),
            partition: 0,
            upstream_offset: up,
            downstream_offset: down,
        }
    }

    /// Apache's `OffsetSyncStoreTest.testOffsetTranslation`.
    #[test]
    fn translates_as_apache() {
        let mut store = OffsetSyncStore::new(true);
        store.set_read_to_end();
        store.handle(sync(100, 200));
        assert_eq!(store.translate_downstream("t", 0, 150), Some(201));
        store.handle(sync(200, 300));
        assert_eq!(store.translate_downstream("t", 0, 150), Some(201));
        assert_eq!(store.translate_downstream("t", 0, 200), Some(300));
        assert_eq!(store.translate_downstream("t", 0, 201), Some(301));
        store.handle(sync(150, 251)); // rewind: everything before is invalid
        assert_eq!(store.translate_downstream("t", 0, 149), Some(-1));
        assert_eq!(store.translate_downstream("t", 0, 150), Some(251));
        assert_eq!(store.translate_downstream("t", 0, 151), Some(252));
        assert_eq!(store.translate_downstream("u", 0, 151), None);
    }

    /// Nothing is translated before the first read to the end; with
    /// `initialization_must_read_to_end` only the last sync read then is kept.
    #[test]
    fn no_translation_before_read_to_end() {
        let mut store = OffsetSyncStore::new(true);
        store.handle(sync(1, 1));
        store.handle(sync(2, 2));
        assert_eq!(store.translate_downstream("t", 0, 2), None);
        store.set_read_to_end();
        assert_eq!(store.translate_downstream("t", 0, 1), Some(-1));
        assert_eq!(store.translate_downstream("t", 0, 2), Some(2));
    }

    /// Invariants B and C hold for every pair after each of many syncs (Apache's
    /// `assertSyncSpacingHasBoundedExpirations` idea, checked exhaustively here), and
    /// translation never moves a group past its upstream position.
    #[test]
    fn invariants_hold_and_translation_never_skips() {
        let mut store = OffsetSyncStore::new(false);
        store.set_read_to_end();
        let mut down = 0i64;
        for up in (0..20_000i64).step_by(3) {
            down += 2;
            store.handle(sync(up, down));
            let s = &store.syncs[&("t".to_owned(), 0)];
            for i in 0..SYNCS_PER_PARTITION {
                for j in i + 1..SYNCS_PER_PARTITION {
                    assert!(invariant_b(&s[i], &s[j], i, j), "B at {up}: {i} {j}");
                    assert!(invariant_c(&s[i], &s[j], i), "C at {up}: {i} {j}");
                }
            }
        }
        // upstream u was written downstream at (u / 3 + 1) * 2 for u a multiple of 3.
        for up in (0..20_000i64).step_by(3) {
            let t = store.translate_downstream("t", 0, up).unwrap();
            assert!(
                t == -1 || t <= (up / 3 + 1) * 2,
                "{up} -> {t} skips records"
            );
        }
        assert_eq!(store.translate_downstream("t", 0, 19_998), Some(13_334));
    }
}
