//! The sending side: a session prepared on a receiver's `StreamPrepare` holds the staged
//! SSTables until the receiver completes or aborts it, or goes silent for `idle_timeout`.

use std::collections::HashMap;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::time::Instant;
use uuid::Uuid;

use crate::messages::{Chunk, ChunkRequest, Complete, FileEntry, Manifest, Prepare};
use crate::progress::{Direction, Progress, State};
use crate::{Inner, StreamError};
use storage::stream::{Outgoing, OutgoingComponent, TokenRanges};

/// One session this node sends.
pub(crate) struct Sending {
    /// The staged SSTables of every table (their files live as long as these).
    _staged: Vec<Outgoing>,
    /// Every SSTable in manifest order: whole, and its components.
    files: Vec<(bool, Vec<OutgoingComponent>)>,
    manifest: Manifest,
    progress: Arc<Progress>,
    touched: Mutex<Instant>,
}

/// The sessions this node sends, by id.
#[derive(Default)]
pub(crate) struct Sources {
    sessions: Mutex<HashMap<Uuid, Arc<Sending>>>,
    /// Serialises preparations, so a prepare sent again (its answer lost) finds the first.
    preparing: tokio::sync::Mutex<()>,
}

impl Sources {
    fn get(&self, id: Uuid) -> Result<Arc<Sending>, StreamError> {
        let session = self.sessions.lock().get(&id).cloned();
        let session = session.ok_or(StreamError::UnknownSession(id))?;
        *session.touched.lock() = Instant::now();
        Ok(session)
    }

    /// Ends a session: its staged files are removed once the last chunk being read is done.
    fn end(&self, id: Uuid, state: State) {
        if let Some(session) = self.sessions.lock().remove(&id) {
            match &state {
                State::Failed(why) => {
                    tracing::warn!("stream {id} to {} failed: {why}", session.progress.peer)
                }
                _ => tracing::info!(
                    "stream {id} to {} complete: {} files, {} bytes",
                    session.progress.peer,
                    session.manifest.files.len(),
                    session.progress.info().bytes_done
                ),
            }
            session.progress.set_state(state);
        }
    }

    /// Ends the sessions whose receiver has asked nothing for `idle` (it died or gave up).
    pub(crate) fn expire(&self, idle: std::time::Duration) {
        let now = Instant::now();
        let stale: Vec<Uuid> = self
            .sessions
            .lock()
            .iter()
            .filter(|(_, s)| now.duration_since(*s.touched.lock()) >= idle)
            .map(|(id, _)| *id)
            .collect();
        for id in stale {
            let why = format!("the receiver asked nothing for {idle:?}");
            self.end(id, State::Failed(why));
        }
    }
}

/// Stages what `prepare` asks for and answers its manifest.
pub(crate) async fn prepare(
    inner: &Inner,
    peer: std::net::SocketAddr,
    prepare: Prepare,
) -> Result<Bytes, StreamError> {
    let _one_at_a_time = inner.sources.preparing.lock().await;
    if let Ok(existing) = inner.sources.get(prepare.session) {
        return Ok(existing.manifest.encode());
    }
    let progress = inner.registry.start(
        prepare.session,
        &prepare.description,
        peer,
        Direction::Sending,
    );
    tracing::info!(
        "stream {} ({}) to {peer}: preparing {} tables",
        prepare.session,
        prepare.description,
        prepare.tables.len()
    );
    let staged = stage(inner, &prepare).await;
    let (outgoing, files, manifest) = match staged {
        Ok(staged) => staged,
        Err(e) => {
            progress.set_state(State::Failed(e.to_string()));
            return Err(e);
        }
    };
    let bytes = manifest.files.iter().map(FileEntry::bytes).sum();
    progress.set_totals(manifest.files.len() as u64, bytes);
    let answer = manifest.encode();
    let session = Sending {
        _staged: outgoing,
        files,
        manifest,
        progress,
        touched: Mutex::new(Instant::now()),
    };
    let sessions = &inner.sources.sessions;
    sessions.lock().insert(prepare.session, Arc::new(session));
    Ok(answer)
}

type Staged = (Vec<Outgoing>, Vec<(bool, Vec<OutgoingComponent>)>, Manifest);

async fn stage(inner: &Inner, prepare: &Prepare) -> Result<Staged, StreamError> {
    let (mut outgoing, mut files, mut manifest) = (Vec::new(), Vec::new(), Manifest::default());
    let name = prepare.session.simple().to_string();
    for (table, ranges) in &prepare.tables {
        let ranges = TokenRanges::new(ranges);
        let staged = inner.storage.outgoing(*table, ranges, name.clone()).await?;
        for sstable in &staged.sstables {
            manifest.files.push(FileEntry {
                table: *table,
                whole: sstable.whole,
                partitions: sstable.partitions,
                components: sstable.manifest(),
            });
            files.push((sstable.whole, sstable.components.clone()));
        }
        outgoing.push(staged);
    }
    Ok((outgoing, files, manifest))
}

/// Reads the chunk asked for, throttled, under the CRC32 of the bytes read.
pub(crate) async fn chunk(inner: &Inner, request: ChunkRequest) -> Result<Bytes, StreamError> {
    let session = inner.sources.get(request.session)?;
    let (whole, component) = session
        .files
        .get(request.file as usize)
        .and_then(|(whole, components)| {
            Some((*whole, components.get(request.component as usize)?.clone()))
        })
        .ok_or_else(|| {
            StreamError::Protocol(format!("no file {}/{}", request.file, request.component))
        })?;
    let len = u64::from(request.len).min(component.len.saturating_sub(request.offset));
    let throttle = if whole {
        &inner.entire_sstable_throttle
    } else {
        &inner.throttle
    };
    throttle.acquire(len).await;
    let (offset, component_len) = (request.offset, component.len);
    let bytes = tokio::task::spawn_blocking(move || read_at(&component, offset, len))
        .await
        .map_err(|e| StreamError::Protocol(format!("read task failed: {e}")))??;
    session.progress.add_bytes(len);
    if offset + len == component_len && component_is_last(&session, request) {
        session.progress.file_done();
    }
    let crc = crc32fast::hash(&bytes);
    Ok(Chunk {
        crc,
        bytes: Bytes::from(bytes),
    }
    .encode())
}

fn component_is_last(session: &Sending, request: ChunkRequest) -> bool {
    session
        .files
        .get(request.file as usize)
        .is_some_and(|(_, c)| request.component as usize + 1 == c.len())
}

fn read_at(component: &OutgoingComponent, offset: u64, len: u64) -> Result<Vec<u8>, StreamError> {
    let io = |e| storage::StorageError::io(&component.path, e);
    let file = File::open(&component.path).map_err(io)?;
    let mut bytes = vec![0; len as usize];
    file.read_exact_at(&mut bytes, offset).map_err(io)?;
    Ok(bytes)
}

/// The receiver's end of a session.
pub(crate) fn complete(inner: &Inner, complete: Complete) -> Bytes {
    let state = match complete.failure {
        None => State::Complete,
        Some(why) => State::Failed(format!("the receiver gave up: {why}")),
    };
    inner.sources.end(complete.session, state);
    Bytes::new()
}
