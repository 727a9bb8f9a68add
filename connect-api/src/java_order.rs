//! Java's `HashMap` iteration order, which Apache's answers and records inherit wherever a
//! Java component fills a `HashMap` and then iterates it (`ConfigDef.validate`'s values, a
//! connector's partition map, a JSON Schema's properties): one model, used wherever this
//! workspace must list things in the order Java would.

/// Java's `String.hashCode` (over UTF-16 code units).
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

/// The iteration order (indexes into `keys`) of a `java.util.HashMap<String, _>` made with
/// `new HashMap<>()` (`initial_capacity` `None`) or `new HashMap<>(n)`, into which the distinct
/// `keys` were put in order: by bucket (the spread hash masked by the final table size), then in
/// insertion order, the table doubling past 3/4 full and, while smaller than 64, when a bucket
/// would hold a ninth key (Java 8 and later). A bucket of nine or more keys in a table of 64 or
/// more becomes a tree whose iteration order this does not model (nine field names with equal
/// low hash bits).
pub fn java_hash_map_order(keys: &[&str], initial_capacity: Option<usize>) -> Vec<usize> {
    let hashes: Vec<i32> = keys.iter().map(|k| java_string_hash(k)).collect();
    java_hash_order(&hashes, initial_capacity)
}

/// [`java_hash_map_order`] of keys given by their `hashCode` (0 for a null key).
pub fn java_hash_order(hash_codes: &[i32], initial_capacity: Option<usize>) -> Vec<usize> {
    let hashes: Vec<u32> = hash_codes
        .iter()
        .map(|h| {
            let h = *h as u32;
            h ^ (h >> 16)
        })
        .collect();
    let mut cap: usize = match initial_capacity {
        None => 16,
        Some(n) => n.max(1).next_power_of_two(),
    };
    let threshold = |cap: usize| (cap as f32 * 0.75) as usize;
    let mut counts = vec![0usize; cap];
    let mut size = 0usize;
    for &h in &hashes {
        let bucket = h as usize & (cap - 1);
        counts[bucket] += 1;
        if counts[bucket] > 8 && cap < 64 {
            cap *= 2;
            counts = recount(&hashes[..=size], cap);
        }
        size += 1;
        if size > threshold(cap) {
            cap *= 2;
            counts = recount(&hashes[..size], cap);
        }
    }
    let mut order: Vec<usize> = (0..hashes.len()).collect();
    order.sort_by_key(|&i| hashes[i] as usize & (cap - 1));
    order
}

fn recount(hashes: &[u32], cap: usize) -> Vec<usize> {
    let mut counts = vec![0usize; cap];
    for &h in hashes {
        counts[h as usize & (cap - 1)] += 1;
    }
    counts
}
