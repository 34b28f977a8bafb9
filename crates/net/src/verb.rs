//! Internode verbs and the connection class each message travels on.

/// Payloads above this size travel on the large-message connection (Cassandra's threshold).
pub const LARGE_MESSAGE_BYTES: usize = 64 * 1024;

/// Every internode verb. Payload encodings belong to the crate that owns the verb.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    /// Empty request, empty response (ping).
    Echo = 0,
    /// One-way chitchat message (urgent).
    Gossip = 1,
    RaftVote = 10,
    RaftAppend = 11,
    RaftSnapshot = 12,
    /// Commit a Transformation on the leader.
    MetadataForward = 13,
    /// Group discovery among seeds.
    MetadataDiscover = 14,
    Mutation = 20,
    Read = 21,
    RangeRead = 22,
    Counter = 23,
    Hint = 24,
    BatchStore = 25,
    BatchRemove = 26,
    Truncate = 27,
    /// Streaming (crate `streaming`): the receiver asks for the SSTables of some ranges and
    /// gets their list; then asks for their bytes a chunk at a time; then ends the session.
    StreamPrepare = 28,
    StreamChunk = 29,
    StreamComplete = 30,
    /// Asks a node to pull some ranges from a given source and answers once it has them (a
    /// decommissioning node sends its ranges this way).
    StreamPull = 31,
    /// Asks a node how many bytes it holds in some ranges of some tables (a joining node
    /// checks that it has the room for them before it starts).
    StreamEstimate = 32,
    /// Repair (crate `repair`): build and send the Merkle tree of a table's range; fetch
    /// the differing ranges of a table from another replica.
    RepairValidation = 40,
    RepairSync = 41,
    /// Incremental repair: mark a session's data pending, or end the session.
    RepairPending = 42,
    /// Paxos (lightweight transactions, crate `coordinator`): a prepare with its read, a
    /// proposal, a commit.
    PaxosPrepare = 50,
    PaxosPropose = 51,
    PaxosCommit = 52,
    /// After a repair: raise the low bound and say what could be purged, or purge it.
    PaxosCleanup = 53,
}

impl Verb {
    /// Every verb, in code order.
    pub const ALL: [Verb; 27] = [
        Verb::Echo,
        Verb::Gossip,
        Verb::RaftVote,
        Verb::RaftAppend,
        Verb::RaftSnapshot,
        Verb::MetadataForward,
        Verb::MetadataDiscover,
        Verb::Mutation,
        Verb::Read,
        Verb::RangeRead,
        Verb::Counter,
        Verb::Hint,
        Verb::BatchStore,
        Verb::BatchRemove,
        Verb::Truncate,
        Verb::StreamPrepare,
        Verb::StreamChunk,
        Verb::StreamComplete,
        Verb::StreamPull,
        Verb::StreamEstimate,
        Verb::RepairValidation,
        Verb::RepairSync,
        Verb::RepairPending,
        Verb::PaxosPrepare,
        Verb::PaxosPropose,
        Verb::PaxosCommit,
        Verb::PaxosCleanup,
    ];

    /// The name `nodetool tpstats` shows (Cassandra's verb names where one exists).
    pub fn name(self) -> &'static str {
        match self {
            Verb::Echo => "ECHO_REQ",
            Verb::Gossip => "GOSSIP",
            Verb::RaftVote => "RAFT_VOTE_REQ",
            Verb::RaftAppend => "RAFT_APPEND_REQ",
            Verb::RaftSnapshot => "RAFT_SNAPSHOT_REQ",
            Verb::MetadataForward => "TCM_COMMIT_REQ",
            Verb::MetadataDiscover => "TCM_DISCOVER_REQ",
            Verb::Mutation => "MUTATION_REQ",
            Verb::Read => "READ_REQ",
            Verb::RangeRead => "RANGE_REQ",
            Verb::Counter => "COUNTER_MUTATION_REQ",
            Verb::Hint => "HINT_REQ",
            Verb::BatchStore => "BATCH_STORE_REQ",
            Verb::BatchRemove => "BATCH_REMOVE_REQ",
            Verb::Truncate => "TRUNCATE_REQ",
            Verb::StreamPrepare => "STREAM_PREPARE_REQ",
            Verb::StreamChunk => "STREAM_CHUNK_REQ",
            Verb::StreamComplete => "STREAM_COMPLETE_REQ",
            Verb::StreamPull => "STREAM_PULL_REQ",
            Verb::StreamEstimate => "STREAM_ESTIMATE_REQ",
            Verb::RepairValidation => "VALIDATION_REQ",
            Verb::RepairSync => "SYNC_REQ",
            Verb::RepairPending => "PREPARE_CONSISTENT_REQ",
            Verb::PaxosPrepare => "PAXOS2_PREPARE_REQ",
            Verb::PaxosPropose => "PAXOS2_PROPOSE_REQ",
            Verb::PaxosCommit => "PAXOS_COMMIT_REQ",
            Verb::PaxosCleanup => "PAXOS2_CLEANUP_REQ",
        }
    }

    pub fn from_u8(code: u8) -> Option<Verb> {
        Verb::ALL.into_iter().find(|verb| *verb as u8 == code)
    }

    /// Verbs whose loss or delay breaks failure detection or leader election.
    pub fn is_urgent(self) -> bool {
        matches!(self, Verb::Gossip | Verb::RaftVote | Verb::Echo)
    }
}

/// The connection a message travels on: each peer gets one TCP connection per class, so a
/// large message never delays a heartbeat.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    Urgent = 0,
    Small = 1,
    Large = 2,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::Urgent, Class::Small, Class::Large];

    /// Large payloads go on the large connection whatever their verb (as Cassandra does);
    /// otherwise urgent verbs go on the urgent one.
    pub fn of(verb: Verb, payload_len: usize) -> Class {
        if payload_len > LARGE_MESSAGE_BYTES {
            Class::Large
        } else if verb.is_urgent() {
            Class::Urgent
        } else {
            Class::Small
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Class::Urgent => "urgent",
            Class::Small => "small",
            Class::Large => "large",
        }
    }

    pub fn from_u8(code: u8) -> Option<Class> {
        Class::ALL.into_iter().find(|class| *class as u8 == code)
    }
}

impl std::fmt::Display for Class {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verb_codes_round_trip_and_unknown_codes_are_none() {
        for verb in Verb::ALL {
            assert_eq!(Verb::from_u8(verb as u8), Some(verb));
        }
        let known = Verb::ALL
            .iter()
            .filter(|v| Verb::from_u8(**v as u8).is_some())
            .count();
        let all_codes = (0..=u8::MAX).filter_map(Verb::from_u8).count();
        assert_eq!(known, all_codes);
        assert_eq!(Verb::from_u8(2), None);
        assert_eq!(Verb::from_u8(255), None);
    }

    #[test]
    fn verb_names_are_distinct() {
        let mut names: Vec<_> = Verb::ALL.iter().map(|v| v.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Verb::ALL.len());
    }

    #[test]
    fn class_follows_size_then_urgency() {
        assert_eq!(Class::of(Verb::Echo, 0), Class::Urgent);
        assert_eq!(Class::of(Verb::RaftVote, 100), Class::Urgent);
        assert_eq!(Class::of(Verb::Gossip, LARGE_MESSAGE_BYTES), Class::Urgent);
        assert_eq!(
            Class::of(Verb::Gossip, LARGE_MESSAGE_BYTES + 1),
            Class::Large
        );
        assert_eq!(Class::of(Verb::Mutation, LARGE_MESSAGE_BYTES), Class::Small);
        assert_eq!(
            Class::of(Verb::Mutation, LARGE_MESSAGE_BYTES + 1),
            Class::Large
        );
        for class in Class::ALL {
            assert_eq!(Class::from_u8(class as u8), Some(class));
        }
        assert_eq!(Class::from_u8(3), None);
    }
}
