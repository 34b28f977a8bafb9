//! Token ownership: which endpoint owns which tokens, the ring walk the replication strategies
//! use, and the ranges each endpoint is primary for.
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;

use smol_str::SmolStr;

use crate::Token;

/// A node of the cluster as the ring sees it. Cheap to clone: every request's replica plan
/// copies the endpoints it contacts. Datacenter and rack names are [`SmolStr`]s, held inline
/// when short (as they usually are): a clone copies them, where a shared string's reference
/// count, touched by every request on every core, bounced between the cores' caches.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub datacenter: SmolStr,
    pub rack: SmolStr,
    pub host_id: [u8; 16],
}

/// The sorted token → endpoint map of the cluster (Cassandra's TokenMetadata, normal tokens only).
#[derive(Clone, Debug, Default)]
pub struct TokenMetadata {
    ring: BTreeMap<Token, IpAddr>,
    endpoints: HashMap<IpAddr, Endpoint>,
    local: Option<IpAddr>,
}

impl TokenMetadata {
    pub fn new() -> TokenMetadata {
        TokenMetadata::default()
    }

    /// Adds or updates an endpoint and sets its tokens: tokens it held before are released,
    /// and a token another endpoint held moves to this one (as Cassandra's updateNormalTokens).
    pub fn add_endpoint(&mut self, endpoint: Endpoint, tokens: Vec<Token>) {
        let addr = endpoint.addr;
        self.ring.retain(|_, owner| *owner != addr);
        for token in tokens {
            self.ring.insert(token, addr);
        }
        self.endpoints.insert(addr, endpoint);
        self.drop_tokenless_endpoints(addr);
    }

    /// Names the node this process runs as (LocalStrategy's only replica).
    pub fn set_local(&mut self, addr: IpAddr) {
        self.local = Some(addr);
    }

    /// The node this process runs as, once known and added.
    pub fn local(&self) -> Option<&Endpoint> {
        self.local.and_then(|addr| self.endpoints.get(&addr))
    }

    /// Removes an endpoint and its tokens.
    pub fn remove_endpoint(&mut self, addr: IpAddr) {
        self.ring.retain(|_, owner| *owner != addr);
        self.endpoints.remove(&addr);
    }

    /// Forgets endpoints (other than `keep`) whose every token moved away.
    fn drop_tokenless_endpoints(&mut self, keep: IpAddr) {
        let owners: BTreeSet<IpAddr> = self.ring.values().copied().collect();
        let local = self.local;
        self.endpoints
            .retain(|addr, _| *addr == keep || Some(*addr) == local || owners.contains(addr));
    }

    pub fn endpoint(&self, addr: IpAddr) -> Option<&Endpoint> {
        self.endpoints.get(&addr)
    }

    /// All known endpoints, in address order.
    pub fn endpoints(&self) -> Vec<&Endpoint> {
        let mut all: Vec<&Endpoint> = self.endpoints.values().collect();
        all.sort_by_key(|e| e.addr);
        all
    }

    /// The datacenters of the known endpoints.
    pub fn datacenters(&self) -> BTreeSet<String> {
        self.endpoints
            .values()
            .map(|e| e.datacenter.to_string())
            .collect()
    }

    /// The sorted tokens of one endpoint.
    pub fn tokens_of(&self, addr: IpAddr) -> Vec<Token> {
        self.ring
            .iter()
            .filter(|(_, owner)| **owner == addr)
            .map(|(token, _)| *token)
            .collect()
    }

    /// The endpoint whose primary range holds `token`: the owner of the first ring token >= it,
    /// wrapping around to the first token.
    pub fn primary_range_owner(&self, token: Token) -> Option<&Endpoint> {
        self.walk(token).next()
    }

    /// The primary ranges of an endpoint as (left-exclusive, right-inclusive) pairs. A range
    /// whose left is greater than its right wraps around the ring; with a single ring token
    /// the range (t, t] is the whole ring.
    pub fn ranges_of(&self, addr: IpAddr) -> Vec<(Token, Token)> {
        self.tokens_of(addr)
            .into_iter()
            .map(|right| (self.predecessor(right), right))
            .collect()
    }

    /// Every primary range of the ring, (left-exclusive, right-inclusive), in token order.
    pub fn ranges(&self) -> Vec<(Token, Token)> {
        self.ring
            .keys()
            .map(|&right| (self.predecessor(right), right))
            .collect()
    }

    /// Every token on the ring, in order.
    pub fn tokens(&self) -> Vec<Token> {
        self.ring.keys().copied().collect()
    }

    /// The ring token just before `token`, wrapping around to the last one.
    fn predecessor(&self, token: Token) -> Token {
        self.ring
            .range(..token)
            .next_back()
            .or_else(|| self.ring.iter().next_back())
            .map_or(token, |(t, _)| *t)
    }

    /// The endpoints of every ring token clockwise from the first token >= `start`, each token
    /// once (an endpoint repeats once per token it owns).
    pub fn walk(&self, start: Token) -> impl Iterator<Item = &Endpoint> + '_ {
        self.ring
            .range(start..)
            .chain(self.ring.range(..start))
            .filter_map(|(_, addr)| self.endpoints.get(addr))
    }

    /// The owners' addresses from `start` round the ring (an address once per token it owns).
    pub fn walk_addrs(&self, start: Token) -> impl Iterator<Item = IpAddr> + '_ {
        self.ring
            .range(start..)
            .chain(self.ring.range(..start))
            .map(|(_, addr)| *addr)
    }

    /// How many endpoints are known (with or without tokens).
    pub fn endpoint_count(&self) -> usize {
        self.endpoints.len()
    }

    pub fn is_empty(&self) -> bool {
        self.ring.is_empty()
    }
}

/// `n` distinct pseudo-random tokens (never the minimum token) from `seed`, for an endpoint's
/// `num_tokens` (16 by default in Cassandra 5.0). Deterministic per seed.
pub fn random_tokens(n: usize, seed: u64) -> Vec<Token> {
    let mut state = seed;
    let mut seen = BTreeSet::new();
    let mut tokens = Vec::with_capacity(n);
    while tokens.len() < n {
        let token = Token(splitmix64(&mut state) as i64);
        if token != Token::MIN && seen.insert(token) {
            tokens.push(token);
        }
    }
    tokens
}

/// One step of the SplitMix64 generator.
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    pub(crate) fn node(last: u8, dc: &str, rack: &str) -> Endpoint {
        Endpoint {
            addr: IpAddr::V4(Ipv4Addr::new(127, 0, 0, last)),
            datacenter: dc.into(),
            rack: rack.into(),
            host_id: [last; 16],
        }
    }

    fn three_nodes() -> TokenMetadata {
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(node(1, "dc1", "r1"), vec![Token(-100), Token(200)]);
        ring.add_endpoint(node(2, "dc1", "r1"), vec![Token(0)]);
        ring.add_endpoint(node(3, "dc1", "r1"), vec![Token(100)]);
        ring
    }

    #[test]
    fn primary_owner_is_first_token_at_or_after() {
        let ring = three_nodes();
        let owner = |t| ring.primary_range_owner(Token(t)).map(|e| e.host_id[0]);
        assert_eq!(owner(-100), Some(1));
        assert_eq!(owner(-99), Some(2));
        assert_eq!(owner(0), Some(2));
        assert_eq!(owner(150), Some(1));
        assert_eq!(owner(201), Some(1));
        assert_eq!(owner(i64::MIN), Some(1));
    }

    #[test]
    fn ranges_are_left_exclusive_and_wrap() {
        let ring = three_nodes();
        let addr = node(1, "dc1", "r1").addr;
        assert_eq!(ring.tokens_of(addr), vec![Token(-100), Token(200)]);
        assert_eq!(
            ring.ranges_of(addr),
            vec![(Token(200), Token(-100)), (Token(100), Token(200))]
        );
        assert_eq!(
            ring.ranges_of(node(2, "dc1", "r1").addr),
            vec![(Token(-100), Token(0))]
        );
    }

    #[test]
    fn single_token_owns_whole_ring() {
        let mut ring = TokenMetadata::new();
        ring.add_endpoint(node(1, "dc1", "r1"), vec![Token(5)]);
        assert_eq!(
            ring.ranges_of(node(1, "dc1", "r1").addr),
            vec![(Token(5), Token(5))]
        );
        assert_eq!(
            ring.primary_range_owner(Token(6)).map(|e| e.host_id[0]),
            Some(1)
        );
    }

    #[test]
    fn re_adding_moves_tokens() {
        let mut ring = three_nodes();
        ring.add_endpoint(node(2, "dc1", "r1"), vec![Token(100)]);
        assert!(ring.endpoint(node(3, "dc1", "r1").addr).is_none());
        assert_eq!(ring.tokens_of(node(2, "dc1", "r1").addr), vec![Token(100)]);
        ring.remove_endpoint(node(2, "dc1", "r1").addr);
        assert_eq!(ring.endpoints().len(), 1);
    }

    #[test]
    fn random_tokens_are_distinct_and_deterministic() {
        let tokens = random_tokens(16, 7);
        assert_eq!(tokens.len(), 16);
        assert_eq!(tokens.iter().collect::<BTreeSet<_>>().len(), 16);
        assert_eq!(tokens, random_tokens(16, 7));
        assert_ne!(tokens, random_tokens(16, 8));
        assert!(!tokens.contains(&Token::MIN));
    }
}
