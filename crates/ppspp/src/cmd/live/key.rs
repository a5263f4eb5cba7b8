//! The source's key file: generated once, loaded after, so that a source
//! restarted with the same `--key` keeps its swarm id (RFC 7574 §12.1:
//! the swarm id is the public key).
//!
//! The file is three lines of text, readable and hard to mistake for
//! something else:
//! ```text
//! ppspp live key
//! algorithm 13
//! secret <64 hex digits>
//! ```
//! It is written readable by its owner only: anyone with the secret can
//! sign munros of the stream.

use std::io::Write;
use std::path::Path;

use anyhow::{anyhow, bail, Context, Result};
use ppspp_core::live::LiveKeyPair;
use ppspp_core::wire::LiveSignatureAlgorithm;

const HEADER: &str = "ppspp live key";

/// The key in `path` if the file exists, else a new key of `algorithm`
/// written there. A file holding a key of another algorithm is an error:
/// the swarm id would change under the user's feet.
pub fn load_or_create(path: &Path, algorithm: LiveSignatureAlgorithm) -> Result<LiveKeyPair> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let key =
                parse(&text).with_context(|| format!("cannot read the key {}", path.display()))?;
            if key.algorithm() != algorithm {
                bail!(
                    "{} holds a key of algorithm {}, not {} (--algorithm)",
                    path.display(),
                    key.algorithm().0,
                    algorithm.0
                );
            }
            Ok(key)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let key = generate(algorithm)?;
            write(path, &key)
                .with_context(|| format!("cannot write the key {}", path.display()))?;
            eprintln!("ppspp: new key written to {}", path.display());
            Ok(key)
        }
        Err(e) => Err(e).with_context(|| format!("cannot read the key {}", path.display())),
    }
}

/// A new key from the OS's random source.
pub fn generate(algorithm: LiveSignatureAlgorithm) -> Result<LiveKeyPair> {
    // A P-256 secret must be below the group order; a random 32 bytes is
    // above it with probability about 2^-32: draw again.
    for _ in 0..8 {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| anyhow!("no random source: {e}"))?;
        if let Ok(k) = LiveKeyPair::from_secret(algorithm, &secret) {
            return Ok(k);
        }
    }
    bail!("cannot make a key of algorithm {}", algorithm.0)
}

fn parse(text: &str) -> Result<LiveKeyPair> {
    let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
    if lines.next() != Some(HEADER) {
        bail!("not a ppspp live key (its first line is not '{HEADER}')");
    }
    let mut algorithm = None;
    let mut secret = None;
    for line in lines {
        match line.split_once(' ') {
            Some(("algorithm", v)) => {
                algorithm = Some(
                    v.trim()
                        .parse::<u8>()
                        .map_err(|_| anyhow!("bad algorithm '{v}'"))?,
                )
            }
            Some(("secret", v)) => {
                let bytes = hex::decode(v.trim()).map_err(|_| anyhow!("the secret is not hex"))?;
                let arr: [u8; 32] = bytes
                    .try_into()
                    .map_err(|_| anyhow!("the secret is not 32 bytes"))?;
                secret = Some(arr);
            }
            _ => bail!("unexpected line '{line}'"),
        }
    }
    let algorithm = LiveSignatureAlgorithm(algorithm.ok_or_else(|| anyhow!("no algorithm line"))?);
    let secret = secret.ok_or_else(|| anyhow!("no secret line"))?;
    LiveKeyPair::from_secret(algorithm, &secret).map_err(|e| anyhow!("{e}"))
}

fn write(path: &Path, key: &LiveKeyPair) -> std::io::Result<()> {
    let text = format!(
        "{HEADER}\nalgorithm {}\nsecret {}\n",
        key.algorithm().0,
        hex::encode(key.secret())
    );
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(text.as_bytes())?;
    f.sync_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_made_once_and_loaded_after() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("src.key");
        let alg = LiveSignatureAlgorithm::ECDSAP256SHA256;
        let first = load_or_create(&path, alg).unwrap();
        let again = load_or_create(&path, alg).unwrap();
        assert_eq!(first.public_key().swarm_id(), again.public_key().swarm_id());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        let e = load_or_create(&path, LiveSignatureAlgorithm::ED25519).unwrap_err();
        assert!(e.to_string().contains("algorithm 13"), "{e}");
    }

    #[test]
    fn a_file_that_is_no_key_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x");
        for text in [
            "hello\n",
            "ppspp live key\nalgorithm 13\n",
            "ppspp live key\nalgorithm 13\nsecret 00\n",
        ] {
            std::fs::write(&path, text).unwrap();
            assert!(
                load_or_create(&path, LiveSignatureAlgorithm::ECDSAP256SHA256).is_err(),
                "{text}"
            );
        }
    }
}
