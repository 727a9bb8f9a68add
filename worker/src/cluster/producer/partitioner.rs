//! Java's partitioner: Apache's `murmur2` of the key, modulo the partition count.

/// Apache's `Utils.murmur2` (wrapping 32-bit arithmetic, seed 0x9747b28c).
pub fn murmur2(data: &[u8]) -> i32 {
    const SEED: u32 = 0x9747_b28c;
    const M: u32 = 0x5bd1_e995;
    const R: u32 = 24;
    let len = data.len();
    let mut h: u32 = SEED ^ (len as u32);
    let chunks = data.chunks_exact(4);
    let tail = chunks.remainder();
    for c in chunks {
        let mut k = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
        k = k.wrapping_mul(M);
        k ^= k >> R;
        k = k.wrapping_mul(M);
        h = h.wrapping_mul(M);
        h ^= k;
    }
    match tail.len() {
        3 => {
            h ^= u32::from(tail[2]) << 16;
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        2 => {
            h ^= u32::from(tail[1]) << 8;
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        1 => {
            h ^= u32::from(tail[0]);
            h = h.wrapping_mul(M);
        }
        _ => {}
    }
    h ^= h >> 13;
    h = h.wrapping_mul(M);
    h ^= h >> 15;
    h as i32
}

/// Java's `BuiltInPartitioner.partitionForKey`: `toPositive(murmur2(key)) % partitions`.
pub fn partition_for_key(key: &[u8], partitions: i32) -> i32 {
    (murmur2(key) & 0x7fff_ffff) % partitions
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Apache's `UtilsTest.testMurmur2` vectors.
    #[test]
    fn murmur2_matches_apache() {
        let cases: &[(&[u8], i32)] = &[
            (b"21", -973932308),
            (b"foobar", -790332482),
            (b"a-little-bit-long-string", -985981536),
            (b"a-little-bit-longer-string", -1486304829),
            (
                b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8",
                -58897971,
            ),
            (b"abc", 479470107),
        ];
        for (input, expected) in cases {
            assert_eq!(
                murmur2(input),
                *expected,
                "{:?}",
                std::str::from_utf8(input)
            );
        }
    }

    #[test]
    fn keys_land_where_java_puts_them() {
        // toPositive(-973932308) % 10 = (1173551340) % 10
        assert_eq!(partition_for_key(b"21", 10), 1173551340 % 10);
        for p in 1..50 {
            let got = partition_for_key(b"some key", p);
            assert!((0..p).contains(&got));
        }
    }
}
