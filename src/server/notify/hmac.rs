//! The webhook's signature: HMAC-SHA256 (RustCrypto's `hmac`, already built for the
//! PostgreSQL client's SCRAM) over the exact body sent, as `sha256=<lowercase hex>`.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

pub fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    // HMAC takes a key of any length: this never fails.
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!());
    mac.update(message);
    mac.finalize().into_bytes().into()
}

/// The header value: `sha256=` and the lowercase hex of the MAC.
pub fn signature(key: &[u8], body: &[u8]) -> String {
    format!("sha256={}", hex::encode(hmac_sha256(key, body)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 4231's vectors: the crate is used as the receivers expect.
    #[test]
    fn rfc_4231_vectors() {
        let cases: [(&[u8], &[u8], &str); 3] = [
            (
                &[0x0b; 20],
                b"Hi There",
                "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7",
            ),
            (
                b"Jefe",
                b"what do ya want for nothing?",
                "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
            ),
            (
                &[0xaa; 131],
                b"Test Using Larger Than Block-Size Key - Hash Key First",
                "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54",
            ),
        ];
        for (key, msg, mac) in cases {
            assert_eq!(hex::encode(hmac_sha256(key, msg)), mac);
        }
        assert!(signature(b"Jefe", b"x").starts_with("sha256="));
    }
}
