//! The endpoint's swarms, by handle and by swarm id. Swarms are only ever
//! added (a closed swarm stays readable), so a handle stays valid for the
//! endpoint's life and indexes the list directly.

use std::collections::BTreeMap;

use crate::proto::swarm::Swarm;
use crate::proto::SwarmHandle;

/// Every swarm of one endpoint.
#[derive(Default)]
pub(crate) struct Swarms {
    list: Vec<Swarm>,
    by_id: BTreeMap<Vec<u8>, SwarmHandle>,
}

impl Swarms {
    /// Adds `swarm` under its swarm id (the root hash, or a live swarm's
    /// public key); `None` if a swarm
    /// with that id is there already.
    pub fn insert(&mut self, swarm: Swarm) -> Option<SwarmHandle> {
        let id = swarm.id().to_vec();
        if self.by_id.contains_key(&id) {
            return None;
        }
        let handle = SwarmHandle(u32::try_from(self.list.len()).ok()?);
        self.list.push(swarm);
        self.by_id.insert(id, handle);
        Some(handle)
    }

    /// The swarm whose id (root hash) is `id`, as a peer names it in its
    /// HANDSHAKE (RFC 7574 §7.3).
    pub fn by_swarm_id(&self, id: &[u8]) -> Option<SwarmHandle> {
        self.by_id.get(id).copied()
    }

    pub fn get(&self, h: SwarmHandle) -> Option<&Swarm> {
        self.list.get(h.0 as usize)
    }

    pub fn get_mut(&mut self, h: SwarmHandle) -> Option<&mut Swarm> {
        self.list.get_mut(h.0 as usize)
    }

    /// The swarms in the order they were added.
    pub fn iter(&self) -> impl Iterator<Item = (SwarmHandle, &Swarm)> {
        self.list
            .iter()
            .enumerate()
            .map(|(i, s)| (SwarmHandle(i as u32), s))
    }

    /// As [`Swarms::iter`], mutable.
    pub fn iter_mut(&mut self) -> impl Iterator<Item = (SwarmHandle, &mut Swarm)> {
        self.list
            .iter_mut()
            .enumerate()
            .map(|(i, s)| (SwarmHandle(i as u32), s))
    }

    /// The handles, in the order the swarms were added.
    pub fn handles(&self) -> impl Iterator<Item = SwarmHandle> + use<> {
        (0..self.list.len() as u32).map(SwarmHandle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::ChunkSize;
    use crate::hash::{Hash, HashFunction};
    use crate::pick::Sequential;
    use crate::proto::swarm::SwarmSetup;
    use crate::storage::MemoryStorage;
    use crate::time::Instant;

    fn swarm(root_byte: u8) -> Swarm {
        let root = Hash::from_slice(&[root_byte; 20]);
        let size = ChunkSize::new(1024).unwrap();
        let setup = SwarmSetup::download(
            root,
            HashFunction::Sha1,
            size,
            Some(4),
            Box::new(MemoryStorage::empty(size)),
            Box::new(Sequential),
        )
        .unwrap();
        Swarm::new(setup, Instant::ZERO)
    }

    #[test]
    fn handles_follow_insertion_and_ids_are_unique() {
        let mut s = Swarms::default();
        let a = s.insert(swarm(1)).unwrap();
        let b = s.insert(swarm(2)).unwrap();
        assert!(s.insert(swarm(1)).is_none(), "same swarm id twice");
        assert_eq!(s.handles().collect::<Vec<_>>(), vec![a, b]);
        assert_eq!(s.by_swarm_id(&[2; 20]), Some(b));
        assert_eq!(s.by_swarm_id(&[3; 20]), None);
        assert!(s.get(SwarmHandle(2)).is_none());
        assert_eq!(s.iter().map(|(h, _)| h).collect::<Vec<_>>(), vec![a, b]);
    }
}
