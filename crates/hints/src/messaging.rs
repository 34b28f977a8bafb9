//! Hints over internode messaging: `Verb::Hint` requests, answered once the replica has
//! applied the mutation (its handler decodes the payload with `decode_hint`).
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use net::{BoxFuture, Messaging, NetError, Verb};

use crate::deliver::{Deliver, DeliveryError};

pub struct MessagingDeliver {
    messaging: Arc<Messaging>,
    /// How long a replica has to apply a hint (Cassandra uses the write request timeout).
    timeout: Duration,
}

impl MessagingDeliver {
    pub fn new(messaging: Arc<Messaging>, timeout: Duration) -> MessagingDeliver {
        MessagingDeliver { messaging, timeout }
    }
}

impl Deliver for MessagingDeliver {
    fn deliver(
        &self,
        addr: SocketAddr,
        hint: Bytes,
    ) -> BoxFuture<'static, Result<(), DeliveryError>> {
        let (messaging, timeout) = (self.messaging.clone(), self.timeout);
        Box::pin(async move {
            match messaging.request(addr, Verb::Hint, hint, timeout).await {
                Ok(_) => Ok(()),
                Err(NetError::Timeout) => Err(DeliveryError::Timeout),
                Err(other) => Err(DeliveryError::Failed(other.to_string())),
            }
        })
    }
}
