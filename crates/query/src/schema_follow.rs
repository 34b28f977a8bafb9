//! Following the cluster metadata log: every schema the log reaches is applied on this node
//! ([`QueryProcessor::sync_schema`]). Applying is idempotent, so a failed attempt (a broken
//! disk, a table storage could not open) is simply made again: it is logged as an ERROR each
//! time and retried after a pause doubling from [`FIRST_RETRY`] to [`MAX_RETRY`], or at once
//! when the log moves on. Meanwhile the node is behind the log and says so: it refuses schema
//! statements at once with the reason ([`QueryProcessor::schema_lag`]) instead of committing
//! changes it cannot apply and answering them with timeouts. Storage failures met on the way
//! have also gone through the disk failure policy, which stops the node serving clients when
//! the disk is gone.

use std::sync::{Arc, Weak};
use std::time::Duration;

use metadata::ClusterMetadata;
use tokio::sync::watch;
use types::{CqlError, CqlResult};

use crate::processor::QueryProcessor;

/// The pause after the first failed attempt to apply the log's schema.
const FIRST_RETRY: Duration = Duration::from_millis(100);

/// The longest pause between attempts while they keep failing.
const MAX_RETRY: Duration = Duration::from_secs(5);

/// How long a statement waits for its own change to be applied on this node.
const APPLY_TIMEOUT: Duration = Duration::from_secs(10);

/// This node could not apply the schema of the metadata log at `epoch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchemaLag {
    pub epoch: u64,
    pub error: String,
}

impl SchemaLag {
    /// The error a schema statement gets while the node is behind.
    fn refusal(&self) -> CqlError {
        CqlError::Server(format!(
            "this node cannot apply the schema at metadata epoch {}: {}; it keeps retrying and \
             refuses schema changes until it has caught up",
            self.epoch, self.error
        ))
    }
}

impl QueryProcessor {
    /// Applies every schema `states` reaches, while the processor lives (a task).
    pub(crate) fn follow_metadata(self: &Arc<Self>, states: watch::Receiver<Arc<ClusterMetadata>>) {
        tokio::spawn(follow(Arc::downgrade(self), states));
    }

    /// Why this node is behind the metadata log, while it is.
    pub fn schema_lag(&self) -> Option<SchemaLag> {
        self.lag.borrow().clone()
    }

    /// Fails while this node is behind the metadata log.
    pub(crate) fn check_caught_up(&self) -> CqlResult<()> {
        self.schema_lag().map_or(Ok(()), |lag| Err(lag.refusal()))
    }

    /// Waits until this node's schema has caught up with `epoch`; fails at once when it could
    /// not apply that epoch or a later one, and after [`APPLY_TIMEOUT`] otherwise.
    pub(crate) async fn await_synced(&self, epoch: u64) -> CqlResult<()> {
        let (mut synced, mut lag) = (self.synced.subscribe(), self.lag.subscribe());
        let failed = |l: &Option<SchemaLag>| l.as_ref().is_some_and(|l| l.epoch >= epoch);
        let outcome = async {
            tokio::select! {
                biased;
                applied = synced.wait_for(|&applied| applied >= epoch) => match applied {
                    Ok(_) => Ok(()),
                    Err(_) => Err(None),
                },
                lagging = lag.wait_for(failed) => Err(lagging.ok().and_then(|l| l.clone())),
            }
        };
        match tokio::time::timeout(APPLY_TIMEOUT, outcome).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(Some(lag))) => Err(lag.refusal()),
            Ok(Err(None)) | Err(_) => Err(CqlError::Server(format!(
                "the schema change was committed (epoch {epoch}) but not yet applied on this node"
            ))),
        }
    }

    /// Records the outcome of an attempt to apply the log at `epoch`.
    fn applied(&self, epoch: u64, outcome: CqlResult<()>, retry_in: Duration) {
        match outcome {
            Ok(()) => {
                if let Some(lag) = self.lag.send_replace(None) {
                    tracing::info!(
                        "caught up with the metadata log at epoch {epoch} (behind since epoch {})",
                        lag.epoch
                    );
                }
            }
            Err(e) => {
                let error = e.to_string();
                tracing::error!(
                    "cannot apply the schema at metadata epoch {epoch}: {error}; this node is \
                     behind the metadata log and refuses schema changes; next attempt in \
                     {retry_in:?}"
                );
                self.lag.send_replace(Some(SchemaLag { epoch, error }));
            }
        }
    }
}

/// The pause after a failed attempt that followed `previous`.
fn next_pause(previous: Duration) -> Duration {
    previous.saturating_mul(2).min(MAX_RETRY)
}

/// Applies the log's schema whenever it changes; retries a failed attempt after a pause (at
/// once when the log moves on meanwhile). Ends with the processor or the log.
async fn follow(qp: Weak<QueryProcessor>, mut states: watch::Receiver<Arc<ClusterMetadata>>) {
    let mut pause = FIRST_RETRY;
    loop {
        let meta = states.borrow_and_update().clone();
        let Some(processor) = qp.upgrade() else {
            return;
        };
        let outcome = processor.sync_schema(&meta).await;
        let failed = outcome.is_err();
        processor.applied(meta.epoch, outcome, pause);
        drop(processor);
        if !failed {
            pause = FIRST_RETRY;
            if states.changed().await.is_err() {
                return;
            }
            continue;
        }
        tokio::select! {
            biased;
            changed = states.changed() => {
                if changed.is_err() {
                    return;
                }
            }
            () = tokio::time::sleep(pause) => {}
        }
        pause = next_pause(pause);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn pauses_double_up_to_the_limit() {
        let mut pause = FIRST_RETRY;
        let mut seen = vec![pause];
        for _ in 0..8 {
            pause = next_pause(pause);
            seen.push(pause);
        }
        assert_eq!(seen[1], Duration::from_millis(200));
        assert_eq!(seen[5], Duration::from_millis(3200));
        assert!(seen[6..].iter().all(|p| *p == MAX_RETRY));
    }

    #[test]
    fn the_refusal_names_the_epoch_and_the_cause() {
        let lag = SchemaLag {
            epoch: 1010,
            error: "storage error: I/O error on /d/ks/t: Input/output error".into(),
        };
        let message = lag.refusal().to_string();
        assert!(message.contains("epoch 1010"), "{message}");
        assert!(message.contains("Input/output error"), "{message}");
    }
}
