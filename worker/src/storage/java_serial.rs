//! The one Java-serialized object Connect keeps on disk: the standalone worker's offsets file, a
//! `java.util.HashMap<byte[], byte[]>` written with `ObjectOutputStream` (Apache's
//! `FileOffsetBackingStore.save`) and read back with `ObjectInputStream`.
//!
//! ```text
//!  AC ED 00 05                         magic, stream version 5
//!  73 72 "java.util.HashMap" uid 03    TC_OBJECT, TC_CLASSDESC (flags SERIALIZABLE|WRITE_METHOD)
//!     00 02 F "loadFactor" I "threshold" 78 70     two primitive fields, no annotation, no superclass
//!  3F400000 <threshold>                defaultWriteObject: the fields' values
//!  77 08 <buckets> <size>              block data: HashMap.writeObject's two ints
//!  75 72 "[B" uid 02 0000 78 70 <len> <bytes>      first key: TC_ARRAY with byte[]'s class
//!  75 71 007E0002 <len> <bytes>        later arrays: TC_REFERENCE to that class descriptor
//!  70                                  a null value (TC_NULL)
//!  78                                  TC_ENDBLOCKDATA
//! ```
//!
//! Each key is the offsets-topic key (`["<connector>",{partition}]`) and each value the offset
//! (`{...}`) as Connect's internal `JsonConverter` serializes them: the same bytes as the records
//! of a distributed worker's offsets topic ([`super::offsets`]).
//!
//! # Guarantees
//!
//! - [`encode_byte_map`] writes what Java's `ObjectOutputStream` writes for a `HashMap` filled by
//!   `put`s (handles, class descriptors, `threshold` and capacity as `HashMap` sizes itself),
//!   so Java reads it; checked against bytes Java wrote (unit tests) and against Apache's
//!   standalone worker (`tests/tests/standalone.rs`).
//! - [`decode_byte_map`] reads any stream of that shape, in any entry order, with back
//!   references, split block data and null keys or values.
//!
//! # Errors
//!
//! Anything else (another class, a truncated stream, trailing bytes) is an error naming the
//! byte offset: a corrupt offsets file is never taken for an empty one.

const MAGIC: [u8; 2] = [0xAC, 0xED];
const VERSION: [u8; 2] = [0x00, 0x05];
const TC_NULL: u8 = 0x70;
const TC_REFERENCE: u8 = 0x71;
const TC_CLASSDESC: u8 = 0x72;
const TC_OBJECT: u8 = 0x73;
const TC_STRING: u8 = 0x74;
const TC_ARRAY: u8 = 0x75;
const TC_BLOCKDATA: u8 = 0x77;
const TC_ENDBLOCKDATA: u8 = 0x78;
const TC_BLOCKDATALONG: u8 = 0x7A;
const BASE_HANDLE: u32 = 0x7E_0000;
const SC_WRITE_METHOD: u8 = 0x01;
const SC_SERIALIZABLE: u8 = 0x02;

const HASH_MAP: &str = "java.util.HashMap";
const HASH_MAP_UID: u64 = 0x0507_DAC1_C316_60D1;
const BYTE_ARRAY: &str = "[B";
const BYTE_ARRAY_UID: u64 = 0xACF3_17F8_0608_54E0;
/// `HashMap`'s default load factor, the float bits of 0.75.
const LOAD_FACTOR_BITS: u32 = 0x3F40_0000;

/// One entry of the map: key and value bytes, either possibly null.
pub type ByteMapEntry = (Option<Vec<u8>>, Option<Vec<u8>>);

/// The serialized form of a `HashMap<byte[], byte[]>` holding `entries` (in the given order).
pub fn encode_byte_map(entries: &[ByteMapEntry]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&VERSION);
    // Handle 0: HashMap's class descriptor; 1: the map; 2: byte[]'s class descriptor (at the
    // first array); then one per array.
    out.push(TC_OBJECT);
    out.push(TC_CLASSDESC);
    put_utf(&mut out, HASH_MAP);
    out.extend_from_slice(&HASH_MAP_UID.to_be_bytes());
    out.push(SC_SERIALIZABLE | SC_WRITE_METHOD);
    out.extend_from_slice(&2u16.to_be_bytes());
    out.push(b'F');
    put_utf(&mut out, "loadFactor");
    out.push(b'I');
    put_utf(&mut out, "threshold");
    out.push(TC_ENDBLOCKDATA);
    out.push(TC_NULL);
    // As `new HashMap<>()` after the puts: no table before the first put (threshold 0,
    // capacity reported as 16), else the table doubled from 16 while size > 0.75 * capacity.
    let mut capacity: u32 = 16;
    while entries.len() as u64 * 4 > u64::from(capacity) * 3 {
        capacity *= 2;
    }
    let threshold = if entries.is_empty() {
        0
    } else {
        capacity / 4 * 3
    };
    out.extend_from_slice(&LOAD_FACTOR_BITS.to_be_bytes());
    out.extend_from_slice(&threshold.to_be_bytes());
    out.push(TC_BLOCKDATA);
    out.push(8);
    out.extend_from_slice(&capacity.to_be_bytes());
    out.extend_from_slice(&(entries.len() as u32).to_be_bytes());
    let mut byte_array_class_written = false;
    let mut put_array = |out: &mut Vec<u8>, bytes: Option<&[u8]>| {
        let Some(bytes) = bytes else {
            out.push(TC_NULL);
            return;
        };
        out.push(TC_ARRAY);
        if byte_array_class_written {
            out.push(TC_REFERENCE);
            out.extend_from_slice(&(BASE_HANDLE + 2).to_be_bytes());
        } else {
            out.push(TC_CLASSDESC);
            put_utf(out, BYTE_ARRAY);
            out.extend_from_slice(&BYTE_ARRAY_UID.to_be_bytes());
            out.push(SC_SERIALIZABLE);
            out.extend_from_slice(&0u16.to_be_bytes());
            out.push(TC_ENDBLOCKDATA);
            out.push(TC_NULL);
            byte_array_class_written = true;
        }
        out.extend_from_slice(&(bytes.len() as u32).to_be_bytes());
        out.extend_from_slice(bytes);
    };
    for (key, value) in entries {
        put_array(&mut out, key.as_deref());
        put_array(&mut out, value.as_deref());
    }
    out.push(TC_ENDBLOCKDATA);
    out
}

fn put_utf(out: &mut Vec<u8>, s: &str) {
    // Class and field names here are ASCII, where modified UTF-8 is UTF-8.
    out.extend_from_slice(&(s.len() as u16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Why a stream is not a serialized `HashMap<byte[], byte[]>`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message} (at byte {position})")]
pub struct DecodeError {
    pub message: String,
    pub position: usize,
}

/// What a handle of the stream refers to.
#[derive(Debug, Clone)]
enum Handle {
    Class(ClassDesc),
    Bytes(Vec<u8>),
    Other,
}

#[derive(Debug, Clone)]
struct ClassDesc {
    name: String,
    flags: u8,
    /// Field type codes, in stream order.
    fields: Vec<u8>,
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    handles: Vec<Handle>,
}

/// The entries of a serialized `HashMap<byte[], byte[]>`, in stream order.
pub fn decode_byte_map(bytes: &[u8]) -> Result<Vec<ByteMapEntry>, DecodeError> {
    let mut r = Reader {
        bytes,
        pos: 0,
        handles: Vec::new(),
    };
    if r.take(2)? != MAGIC || r.take(2)? != VERSION {
        return Err(r.error_at(0, "not a Java serialization stream (magic AC ED 00 05)"));
    }
    let at = r.pos;
    if r.u8()? != TC_OBJECT {
        return Err(r.error_at(at, "expected a HashMap object"));
    }
    let class = r.class_desc()?;
    let Some(class) = class else {
        return Err(r.error_at(at, "expected a HashMap object"));
    };
    if class.name != HASH_MAP {
        // Apache's FileOffsetBackingStore: "Expected HashMap but found <class>".
        return Err(r.error_at(at, &format!("Expected HashMap but found {}", class.name)));
    }
    r.handles.push(Handle::Other);
    // defaultWriteObject: the serializable fields (loadFactor, threshold), then the block
    // data and objects of HashMap.writeObject up to TC_ENDBLOCKDATA.
    for code in &class.fields {
        let size = match code {
            b'B' | b'Z' => 1,
            b'C' | b'S' => 2,
            b'I' | b'F' => 4,
            b'J' | b'D' => 8,
            _ => return Err(r.error("HashMap with an object field")),
        };
        r.take(size)?;
    }
    if class.flags & SC_WRITE_METHOD == 0 {
        return Err(r.error("HashMap written without its writeObject data"));
    }
    let mut block = Vec::new();
    let mut objects: Vec<Option<Vec<u8>>> = Vec::new();
    loop {
        let at = r.pos;
        match r.peek()? {
            TC_ENDBLOCKDATA => {
                r.pos += 1;
                break;
            }
            TC_BLOCKDATA => {
                r.pos += 1;
                let len = usize::from(r.u8()?);
                block.extend_from_slice(r.take(len)?);
            }
            TC_BLOCKDATALONG => {
                r.pos += 1;
                let len = r.u32()? as usize;
                block.extend_from_slice(r.take(len)?);
            }
            _ => {
                let object = r.byte_array_or_null()?;
                if block.len() < 8 {
                    return Err(r.error_at(at, "map entries before the map's size"));
                }
                objects.push(object);
            }
        }
    }
    if block.len() != 8 {
        return Err(r.error("unexpected HashMap block data length"));
    }
    let size = u32::from_be_bytes([block[4], block[5], block[6], block[7]]) as usize;
    if objects.len() != size * 2 {
        return Err(r.error(&format!(
            "the HashMap says {size} entries but holds {} objects",
            objects.len()
        )));
    }
    if r.pos != r.bytes.len() {
        return Err(r.error("trailing bytes after the HashMap"));
    }
    let mut entries = Vec::with_capacity(size);
    let mut it = objects.into_iter();
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        entries.push((k, v));
    }
    Ok(entries)
}

impl Reader<'_> {
    fn error(&self, message: &str) -> DecodeError {
        self.error_at(self.pos, message)
    }

    fn error_at(&self, position: usize, message: &str) -> DecodeError {
        DecodeError {
            message: message.to_owned(),
            position,
        }
    }

    fn take(&mut self, n: usize) -> Result<&[u8], DecodeError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| self.error("unexpected end of file"))?;
        let s = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(s)
    }

    fn peek(&self) -> Result<u8, DecodeError> {
        self.bytes
            .get(self.pos)
            .copied()
            .ok_or_else(|| self.error("unexpected end of file"))
    }

    fn u8(&mut self) -> Result<u8, DecodeError> {
        Ok(self.take(1)?[0])
    }

    fn u16(&mut self) -> Result<u16, DecodeError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    fn u32(&mut self) -> Result<u32, DecodeError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn utf(&mut self) -> Result<String, DecodeError> {
        let len = usize::from(self.u16()?);
        let at = self.pos;
        let b = self.take(len)?;
        // Modified UTF-8 differs from UTF-8 only for NUL and supplementary characters, which
        // no class or field name read here contains.
        String::from_utf8(b.to_vec()).map_err(|_| self.error_at(at, "invalid string"))
    }

    fn handle(&mut self) -> Result<Handle, DecodeError> {
        let at = self.pos;
        let h = self.u32()?;
        h.checked_sub(BASE_HANDLE)
            .and_then(|i| self.handles.get(i as usize))
            .cloned()
            .ok_or_else(|| self.error_at(at, "unknown back reference"))
    }

    /// `classDesc`: a new descriptor, a reference to one, or null.
    fn class_desc(&mut self) -> Result<Option<ClassDesc>, DecodeError> {
        let at = self.pos;
        match self.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.handle()? {
                Handle::Class(c) => Ok(Some(c)),
                _ => Err(self.error_at(at, "reference to something not a class")),
            },
            TC_CLASSDESC => {
                let name = self.utf()?;
                self.take(8)?; // serialVersionUID
                let index = self.handles.len();
                self.handles.push(Handle::Other);
                let flags = self.u8()?;
                let count = self.u16()?;
                let mut fields = Vec::with_capacity(usize::from(count));
                for _ in 0..count {
                    let code = self.u8()?;
                    self.utf()?;
                    if code == b'L' || code == b'[' {
                        // The field's type name: a string or a reference to one.
                        let at = self.pos;
                        match self.u8()? {
                            TC_STRING => {
                                self.utf()?;
                                self.handles.push(Handle::Other);
                            }
                            TC_REFERENCE => {
                                self.handle()?;
                            }
                            _ => return Err(self.error_at(at, "invalid field type name")),
                        }
                    }
                    fields.push(code);
                }
                // No class annotations (ObjectOutputStream writes none).
                let at = self.pos;
                if self.u8()? != TC_ENDBLOCKDATA {
                    return Err(self.error_at(at, "unexpected class annotation"));
                }
                let at = self.pos;
                if self.class_desc()?.is_some() {
                    return Err(self.error_at(at, &format!("unexpected superclass of {name}")));
                }
                let desc = ClassDesc {
                    name,
                    flags,
                    fields,
                };
                self.handles[index] = Handle::Class(desc.clone());
                Ok(Some(desc))
            }
            _ => Err(self.error_at(at, "expected a class descriptor")),
        }
    }

    /// A `byte[]`, a reference to one, or null.
    fn byte_array_or_null(&mut self) -> Result<Option<Vec<u8>>, DecodeError> {
        let at = self.pos;
        match self.u8()? {
            TC_NULL => Ok(None),
            TC_REFERENCE => match self.handle()? {
                Handle::Bytes(b) => Ok(Some(b)),
                _ => Err(self.error_at(at, "reference to something not a byte[]")),
            },
            TC_ARRAY => {
                let Some(class) = self.class_desc()? else {
                    return Err(self.error_at(at, "array without a class"));
                };
                if class.name != BYTE_ARRAY {
                    return Err(self.error_at(
                        at,
                        &format!("expected byte[] keys and values, found {}", class.name),
                    ));
                }
                let len = self.u32()? as usize;
                let bytes = self.take(len)?.to_vec();
                self.handles.push(Handle::Bytes(bytes.clone()));
                Ok(Some(bytes))
            }
            _ => Err(self.error_at(at, "expected a byte[] or null")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ObjectOutputStream.writeObject(map)` by Java 17 for a `new HashMap<byte[], byte[]>()`
    /// with `put(["c",{"f":"a"}], {"position":7})` then `put(["c",{"f":"b"}], null)`. A
    /// `byte[]`'s hash is its identity, so Java may iterate these in either order; this run
    /// wrote them in put order, which is the order [`encode_byte_map`] keeps.
    const JAVA_TWO_ENTRIES: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f4000000000000c770800000010000000027572000\
25b42acf317f8060854e00200007870000000\
0f5b2263222c7b2266223a2261227d5d7571007e00020000000e7b22706f736974696f6e223a377d7571007e00020000000f5b2263222c7b2266223a2262227d5d7078";
    /// The same for an empty map.
    const JAVA_EMPTY: &str = "aced0005737200116a6176612e7574696c2e486173684d61700507dac1c31660d103000246000a6c6f6164466163746f724900097468726573686f6c6478703f400000000000007708000000100000000078";

    fn hex(s: &str) -> Vec<u8> {
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    fn two_entries() -> Vec<ByteMapEntry> {
        vec![
            (
                Some(br#"["c",{"f":"a"}]"#.to_vec()),
                Some(br#"{"position":7}"#.to_vec()),
            ),
            (Some(br#"["c",{"f":"b"}]"#.to_vec()), None),
        ]
    }

    #[test]
    fn encodes_what_java_writes() {
        assert_eq!(encode_byte_map(&two_entries()), hex(JAVA_TWO_ENTRIES));
        assert_eq!(encode_byte_map(&[]), hex(JAVA_EMPTY));
    }

    #[test]
    fn decodes_what_java_writes() {
        assert_eq!(
            decode_byte_map(&hex(JAVA_TWO_ENTRIES)).unwrap(),
            two_entries()
        );
        assert_eq!(decode_byte_map(&hex(JAVA_EMPTY)).unwrap(), vec![]);
    }

    #[test]
    fn sizes_the_table_as_hash_map_does() {
        // 13 entries pass 16's threshold of 12: the table doubles to 32 (threshold 24).
        let entries: Vec<ByteMapEntry> =
            (0..13u8).map(|i| (Some(vec![i]), Some(vec![i]))).collect();
        let bytes = encode_byte_map(&entries);
        // magic, TC_OBJECT TC_CLASSDESC, the name, uid, flags, field count, two fields, 78 70.
        let fields = 4 + 2 + (2 + 17) + 8 + 1 + 2 + (1 + 12) + (1 + 11) + 2;
        assert_eq!(&bytes[fields..fields + 8], &[0x3F, 0x40, 0, 0, 0, 0, 0, 24]);
        assert_eq!(
            &bytes[fields + 10..fields + 18],
            &[0, 0, 0, 32, 0, 0, 0, 13]
        );
        assert_eq!(decode_byte_map(&bytes).unwrap(), entries);
    }

    #[test]
    fn reads_back_references_to_arrays_and_split_block_data() {
        let mut bytes = hex(JAVA_EMPTY);
        // size 1; then the block split in two, a key array and a value that refers back to it.
        let end = bytes.len() - 1;
        bytes.truncate(end - 10);
        bytes.extend_from_slice(&[TC_BLOCKDATA, 4, 0, 0, 0, 16, TC_BLOCKDATA, 4, 0, 0, 0, 1]);
        bytes.extend_from_slice(&[TC_ARRAY, TC_CLASSDESC]);
        put_utf(&mut bytes, BYTE_ARRAY);
        bytes.extend_from_slice(&BYTE_ARRAY_UID.to_be_bytes());
        bytes.extend_from_slice(&[
            SC_SERIALIZABLE,
            0,
            0,
            TC_ENDBLOCKDATA,
            TC_NULL,
            0,
            0,
            0,
            1,
            42,
        ]);
        bytes.extend_from_slice(&[TC_REFERENCE, 0, 0x7E, 0, 3, TC_ENDBLOCKDATA]);
        assert_eq!(
            decode_byte_map(&bytes).unwrap(),
            vec![(Some(vec![42]), Some(vec![42]))]
        );
    }

    #[test]
    fn refuses_truncated_and_foreign_streams() {
        let full = hex(JAVA_TWO_ENTRIES);
        for cut in [0, 1, 3, 10, 40, 80, full.len() - 1] {
            let err = decode_byte_map(&full[..cut]).unwrap_err();
            assert!(
                err.message.contains("end of file") || err.message.contains("magic"),
                "{cut}: {err}"
            );
        }
        let mut trailing = full.clone();
        trailing.push(0);
        assert!(
            decode_byte_map(&trailing)
                .unwrap_err()
                .message
                .contains("trailing")
        );
        let mut other = full.clone();
        other[18] = b'X'; // java.util.XashMap
        assert_eq!(
            decode_byte_map(&other).unwrap_err().message,
            "Expected HashMap but found java.util.XashMap"
        );
        assert!(decode_byte_map(b"{\"a\":1}").is_err());
    }

    proptest::proptest! {
        #[test]
        fn round_trips(entries in proptest::collection::vec(
            (proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..40)),
             proptest::option::of(proptest::collection::vec(proptest::num::u8::ANY, 0..300))),
            0..40,
        )) {
            let bytes = encode_byte_map(&entries);
            proptest::prop_assert_eq!(decode_byte_map(&bytes).unwrap(), entries);
        }
    }
}
