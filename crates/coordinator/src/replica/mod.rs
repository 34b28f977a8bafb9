//! The replica side: what a node does with the requests other nodes' coordinators send it —
//! mutations (`write`), reads and range reads (`read`), counter updates it leads (`counter`)
//! and batchlog stores and removals (`batchlog`). A replica that does not know a table yet
//! waits for its metadata to reach the sender's epoch before failing, as the schema change
//! that created the table may still be on its way through the metadata log.
mod batchlog;
mod context;
mod counter;
mod paxos;
mod read;
mod write;

use net::{handler_fn, Messaging, Verb};

use crate::coordinator::Coordinator;
use crate::remote::Remote;
use context::Replica;

impl Coordinator {
    /// Lets requests reach other nodes and answers theirs (registering this side's verb
    /// handlers); a node attaches it once, when its cluster services run.
    pub fn attach_remote(&self, remote: Remote) {
        let replica = Replica {
            storage: self.storage.clone(),
            await_epoch: remote.await_epoch.clone(),
            leader: self.leader(),
            attached: self.attached.clone(),
        };
        paxos::register(&remote.messaging, replica.clone(), self.paxos.clone());
        register(&remote.messaging, replica);
        if self.attached.remote.set(remote).is_err() {
            tracing::warn!("internode messaging was attached to the coordinator twice");
        }
    }
}

/// Registers the replica side of every storage verb this node answers.
fn register(messaging: &Messaging, replica: Replica) {
    batchlog::register(messaging, replica.storage.clone());
    let (reader, scanner, leader) = (replica.clone(), replica.clone(), replica.clone());
    messaging.register(
        Verb::Mutation,
        handler_fn(move |from, payload| write::apply(replica.clone(), from, payload)),
    );
    messaging.register(
        Verb::Read,
        handler_fn(move |from, payload| read::read(reader.clone(), from, payload)),
    );
    messaging.register(
        Verb::RangeRead,
        handler_fn(move |from, payload| read::scan(scanner.clone(), from, payload)),
    );
    messaging.register(
        Verb::Counter,
        handler_fn(move |from, payload| counter::lead(leader.clone(), from, payload)),
    );
}
