//! `ppspp hash FILE`: the swarm id of a file.

use std::fs::File;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use ppspp_core::merkle::{self, MerkleError};
use ppspp_core::{ChunkSize, HashFunction};

use super::args;

/// Arguments of `ppspp hash`.
#[derive(Debug, Args)]
pub struct HashArgs {
    /// The file to hash.
    pub file: PathBuf,
    /// Chunk size in bytes (1 to 32768; RFC 7574 recommends 1024).
    #[arg(long, default_value = "1024", value_parser = args::chunk_size)]
    pub chunk_size: ChunkSize,
    /// Merkle hash function: sha1 (the RFC's default) or sha256 (also sha224, sha384, sha512).
    #[arg(long = "hash", default_value = "sha1", value_parser = args::hash_function)]
    pub hash: HashFunction,
}

/// Print the root of the file's Merkle hash tree, and nothing else, on stdout.
///
/// An empty file has no chunks and therefore no root (RFC 7574 §5.1 builds
/// the tree over at least one chunk; libswift refuses to seed one too): it is
/// an error.
pub fn run(args: &HashArgs) -> Result<()> {
    let path = args.file.display();
    let file = File::open(&args.file).with_context(|| format!("cannot open {path}"))?;
    if file
        .metadata()
        .with_context(|| format!("cannot read {path}"))?
        .is_dir()
    {
        bail!("{path} is a directory, not a file");
    }
    // Hashing a whole file is all this command does: every core.
    let options = merkle::BuildOptions::parallel();
    let info = match merkle::root_from_reader_with(file, args.chunk_size, args.hash, &options) {
        Ok(info) => info,
        Err(MerkleError::EmptyContent) => {
            bail!("{path} is empty: a swarm needs at least one chunk, so an empty file has no root")
        }
        Err(e) => return Err(e).with_context(|| format!("cannot hash {path}")),
    };
    println!("{}", info.root.to_hex());
    Ok(())
}
