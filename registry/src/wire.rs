//! The registry wire format: magic byte 0, the schema id as a 4-byte big-endian int, the
//! payload (Confluent's and Apicurio's Confluent-compatible framing).

use connect_api::{ConnectError, Result};

pub const MAGIC_BYTE: u8 = 0;

pub fn write_header(out: &mut Vec<u8>, id: i32) {
    out.push(MAGIC_BYTE);
    out.extend_from_slice(&id.to_be_bytes());
}

/// The schema id and the payload after it.
pub fn read_header(bytes: &[u8]) -> Result<(i32, &[u8])> {
    match bytes {
        [MAGIC_BYTE, a, b, c, d, rest @ ..] => Ok((i32::from_be_bytes([*a, *b, *c, *d]), rest)),
        [MAGIC_BYTE, ..] => Err(ConnectError::data(
            "Data is shorter than the 5 bytes of the schema registry header",
        )),
        _ => Err(ConnectError::data("Unknown magic byte!")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header() {
        let mut out = Vec::new();
        write_header(&mut out, 258);
        out.push(7);
        assert_eq!(out, [0, 0, 0, 1, 2, 7]);
        assert_eq!(read_header(&out).unwrap(), (258, &[7u8][..]));
        assert_eq!(
            read_header(&[1, 0, 0, 0, 1]).unwrap_err().to_string(),
            "Unknown magic byte!"
        );
        assert!(read_header(&[0, 0]).is_err());
    }
}
