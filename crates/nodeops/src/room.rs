//! Whether this node has the disk space for the ranges a join or a rebuild would take: the
//! sources tell how many bytes they hold in those ranges (`StreamEstimate`), and the free
//! bytes are those of the file systems of the data directories. Cassandra makes no such check
//! before a bootstrap or a rebuild (it checks the disk only for the streams of incremental
//! repair); Helenus refuses before the operation changes anything.

use std::collections::BTreeSet;
use std::future::Future;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;

use streaming::{StreamRequest, Streaming};

/// Refuses a `doing` (bootstrap, replace, rebuild) when the bytes `needed` resolves to are
/// more than the free bytes of `dirs`. Goes ahead, with a warning, when either is unknown.
pub async fn ensure_room(
    doing: &str,
    dirs: &[PathBuf],
    needed: impl Future<Output = Result<u64, String>>,
) -> Result<(), String> {
    let Some(free) = free_bytes(dirs) else {
        return Ok(());
    };
    let needed = match needed.await {
        Ok(needed) => needed,
        Err(why) => {
            tracing::warn!("{doing} without checking the disk space it needs: {why}");
            return Ok(());
        }
    };
    tracing::info!("{doing}: about {needed} bytes to fetch, {free} bytes free");
    check_room(doing, needed, free)
}

/// The bytes the sources of `requests` hold in their tables and ranges, summed.
pub async fn estimate(streaming: &Streaming, requests: Vec<StreamRequest>) -> Result<u64, String> {
    let mut bytes = 0u64;
    for request in requests {
        let source = request.peer.ip();
        let answer = streaming.estimate(request).await;
        bytes += answer.map_err(|e| format!("cannot size the ranges on {source}: {e}"))?;
    }
    Ok(bytes)
}

/// The free bytes of the file systems holding `dirs` (each file system counted once); `None`
/// when none can be read.
pub fn free_bytes(dirs: &[PathBuf]) -> Option<u64> {
    let mut seen = BTreeSet::new();
    let mut free = None;
    for dir in dirs {
        let Ok(meta) = std::fs::metadata(dir) else {
            continue;
        };
        if !seen.insert(meta.dev()) {
            continue;
        }
        if let Some(space) = storage::disk_space(dir) {
            free = Some(free.unwrap_or(0) + space.available);
        }
    }
    free
}

/// Refuses a `doing` that would bring more bytes than are free.
pub fn check_room(doing: &str, needed: u64, free: u64) -> Result<(), String> {
    if needed <= free {
        return Ok(());
    }
    Err(format!(
        "Not enough disk space to {doing}: the ranges this node would take hold about \
         {needed} bytes on their sources and its data directories have {free} bytes free"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn an_operation_is_refused_without_room_and_goes_ahead_when_a_size_is_unknown() {
        let dir = tempfile::tempdir().unwrap();
        let dirs = [dir.path().to_path_buf()];
        let refused = ensure_room("rebuild", &dirs, async { Ok(u64::MAX) }).await;
        let refused = refused.unwrap_err();
        assert!(
            refused.starts_with("Not enough disk space to rebuild: "),
            "{refused}"
        );
        assert!(
            refused.contains(&format!("about {} bytes", u64::MAX)),
            "{refused}"
        );
        assert!(ensure_room("rebuild", &dirs, async { Ok(1) }).await.is_ok());
        let unknown = async { Err("a source is down".to_string()) };
        assert!(ensure_room("rebuild", &dirs, unknown).await.is_ok());
        let nowhere = [dir.path().join("missing")];
        assert!(ensure_room("rebuild", &nowhere, async { Ok(u64::MAX) })
            .await
            .is_ok());
    }

    #[test]
    fn a_join_is_refused_when_the_estimate_exceeds_the_free_bytes() {
        assert!(check_room("bootstrap", 10, 10).is_ok());
        let refused = check_room("bootstrap", 11, 10).unwrap_err();
        assert!(refused.contains("about 11 bytes"), "{refused}");
        assert!(refused.contains("10 bytes free"), "{refused}");
        let dir = tempfile::tempdir().unwrap();
        let one = free_bytes(&[dir.path().to_path_buf()]).expect("a readable directory");
        assert!(one > 0);
        // the same file system twice counts once (give or take what others write meanwhile)
        let twice = free_bytes(&[dir.path().to_path_buf(), dir.path().join(".")]).unwrap();
        assert!(twice < one + one / 2, "{one} {twice}");
        assert!(free_bytes(&[dir.path().join("missing")]).is_none());
    }
}
