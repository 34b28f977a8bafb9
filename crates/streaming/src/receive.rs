//! The receiving side: one session pulls the SSTables of some tables and ranges from one
//! peer, a window of chunk requests in flight, each chunk written to the table's staging
//! directory after its checksum is checked, each SSTable added once it is whole and verified.

use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::Arc;

use mutation::TableId;
use net::{NetError, Verb};
use storage::stream::{Incoming, IncomingSstable};
use storage::RepairMark;
use tokio::task::JoinHandle;
use uuid::Uuid;

use crate::messages::{Chunk, ChunkRequest, Complete, FileEntry, Manifest, Prepare};
use crate::progress::{Progress, State};
use crate::{Inner, StreamError};

/// Runs one session to its end; the peer is told how it ended either way.
pub(crate) async fn run(
    inner: Arc<Inner>,
    peer: SocketAddr,
    prepare: Prepare,
    progress: Arc<Progress>,
    mark: RepairMark,
) -> Result<(), StreamError> {
    let session = prepare.session;
    let result = pull(&inner, peer, prepare, &progress, mark).await;
    let failure = result.as_ref().err().map(|e| e.to_string());
    let end = Complete { session, failure };
    let told = inner
        .messaging
        .request(
            peer,
            Verb::StreamComplete,
            end.encode(),
            inner.config.request_timeout,
        )
        .await;
    match (&result, told) {
        (Ok(()), Err(e)) => {
            // Everything is in; the source will drop its staging when it times out.
            tracing::debug!("stream {session}: could not tell {peer} it is complete: {e}");
        }
        (Err(e), _) => {
            tracing::warn!("stream {session} from {peer} failed: {e}");
        }
        (Ok(()), Ok(_)) => {}
    }
    match &result {
        Ok(()) => {
            let info = progress.info();
            tracing::info!(
                "stream {session} ({}) from {peer} complete: {} files, {} bytes in {:?}",
                info.description,
                info.files_done,
                info.bytes_done,
                info.elapsed
            );
            progress.set_state(State::Complete);
        }
        Err(e) => progress.set_state(State::Failed(e.to_string())),
    }
    result
}

async fn pull(
    inner: &Arc<Inner>,
    peer: SocketAddr,
    prepare: Prepare,
    progress: &Progress,
    mark: RepairMark,
) -> Result<(), StreamError> {
    let session = prepare.session;
    let answer = inner
        .messaging
        .request(
            peer,
            Verb::StreamPrepare,
            prepare.encode(),
            inner.config.prepare_timeout,
        )
        .await?;
    let manifest = Manifest::decode(&answer)?;
    let bytes = manifest.files.iter().map(FileEntry::bytes).sum();
    progress.set_totals(manifest.files.len() as u64, bytes);
    tracing::info!(
        "stream {session} ({}) from {peer}: {} files, {bytes} bytes",
        prepare.description,
        manifest.files.len()
    );
    let mut incoming: HashMap<TableId, Arc<Incoming>> = HashMap::new();
    let name = session.simple().to_string();
    for (index, file) in manifest.files.iter().enumerate() {
        let table = incoming_for(inner, &mut incoming, file.table, &name, mark)?;
        let sstable = table.sstable(&file.components)?;
        let sstable =
            receive_file(inner, peer, session, index as u32, file, sstable, progress).await?;
        let table = table.clone();
        blocking(move || table.add(sstable)).await?;
        progress.file_done();
    }
    Ok(())
}

fn incoming_for(
    inner: &Inner,
    incoming: &mut HashMap<TableId, Arc<Incoming>>,
    table: TableId,
    session: &str,
    mark: RepairMark,
) -> Result<Arc<Incoming>, StreamError> {
    if let Some(existing) = incoming.get(&table) {
        return Ok(existing.clone());
    }
    let created = Arc::new(inner.storage.incoming(table, session)?.marked(mark));
    incoming.insert(table, created.clone());
    Ok(created)
}

/// Pulls every component of one SSTable, `window` chunk requests in flight.
async fn receive_file(
    inner: &Arc<Inner>,
    peer: SocketAddr,
    session: Uuid,
    file: u32,
    entry: &FileEntry,
    mut sstable: IncomingSstable,
    progress: &Progress,
) -> Result<IncomingSstable, StreamError> {
    let chunk_len = inner.config.chunk_bytes as u64;
    let mut requests = entry
        .components
        .iter()
        .enumerate()
        .flat_map(|(component, (_, len))| {
            (0..len.div_ceil(chunk_len)).map(move |n| ChunkRequest {
                session,
                file,
                component: component as u32,
                offset: n * chunk_len,
                len: (len - n * chunk_len).min(chunk_len) as u32,
            })
        });
    let mut in_flight: VecDeque<(ChunkRequest, JoinHandle<Result<Chunk, StreamError>>)> =
        VecDeque::new();
    loop {
        while in_flight.len() < inner.config.window {
            let Some(request) = requests.next() else {
                break;
            };
            let fetch = fetch_chunk(inner.clone(), peer, request);
            in_flight.push_back((request, tokio::spawn(fetch)));
        }
        let Some((request, fetch)) = in_flight.pop_front() else {
            return Ok(sstable);
        };
        let chunk = match fetch.await {
            Ok(chunk) => chunk,
            Err(e) => Err(StreamError::Protocol(format!("chunk task failed: {e}"))),
        };
        let chunk = match chunk {
            Ok(chunk) => chunk,
            Err(e) => {
                in_flight.iter().for_each(|(_, task)| task.abort());
                return Err(e);
            }
        };
        if chunk.bytes.len() as u64 != u64::from(request.len) {
            let why = format!("{} bytes sent for {}", chunk.bytes.len(), request.len);
            return Err(StreamError::Protocol(why));
        }
        let len = chunk.bytes.len() as u64;
        sstable = blocking(move || {
            let index = request.component as usize;
            sstable.write(index, request.offset, &chunk.bytes, chunk.crc)?;
            Ok(sstable)
        })
        .await?;
        progress.add_bytes(len);
    }
}

/// One chunk, asked again after a lost message or a timeout (`retries` times at most).
async fn fetch_chunk(
    inner: Arc<Inner>,
    peer: SocketAddr,
    request: ChunkRequest,
) -> Result<Chunk, StreamError> {
    let mut attempt = 0;
    loop {
        let answer = inner
            .messaging
            .request(
                peer,
                Verb::StreamChunk,
                request.encode(),
                inner.config.request_timeout,
            )
            .await;
        match answer {
            Ok(bytes) => return Ok(Chunk::decode(bytes)?),
            Err(NetError::Timeout | NetError::Unreachable(_) | NetError::Overloaded)
                if attempt < inner.config.retries =>
            {
                attempt += 1;
                tokio::time::sleep(inner.config.retry_delay * attempt).await;
            }
            Err(e) => return Err(e.into()),
        }
    }
}

/// Runs blocking storage work off the runtime's threads.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> storage::Result<T> + Send + 'static,
) -> Result<T, StreamError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| StreamError::Protocol(format!("storage task failed: {e}")))?
        .map_err(StreamError::from)
}
