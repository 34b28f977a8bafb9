//! [`Sstable::verify`], for `nodetool verify`: every Data chunk and Index block is read from
//! disk and its CRC32 checked, and the components loaded whole at open are read and checked
//! again; the extended check also decodes every partition and matches it with its Index entry.

use crate::error::{Result, StorageError};
use crate::sstable::format::corrupt;
use crate::sstable::reader::Sstable;
use crate::sstable::scan::PartitionIter;

impl Sstable {
    /// The problems found in the SSTable's files (none: intact), each a
    /// [`StorageError::Corrupt`] naming its file and offset; an I/O failure is an error.
    /// `progress` is told the uncompressed bytes checked so far; an error it answers (the
    /// table was dropped) ends the check.
    pub fn verify(
        &self,
        extended: bool,
        progress: &dyn Fn(u64) -> Result<()>,
    ) -> Result<Vec<StorageError>> {
        let mut problems = Vec::new();
        keep_corruption(&mut problems, Sstable::open(self.descriptor()).map(drop))?;
        let mut checked = 0;
        for i in 0..self.data.chunk_count() {
            keep_corruption(&mut problems, self.data.chunk(i).map(drop))?;
            checked += self.data.chunk_size(i) as u64;
            progress(checked)?;
        }
        for block in &self.summary.blocks {
            keep_corruption(&mut problems, self.index.block(block).map(drop))?;
        }
        if extended && problems.is_empty() {
            keep_corruption(&mut problems, self.check_partitions())?;
        }
        Ok(problems)
    }

    /// Decodes every partition in Data order and checks it against the Index: same keys, in
    /// ascending order, at the positions the Index gives, as many as the Statistics count.
    fn check_partitions(&self) -> Result<()> {
        let index = self.index.path();
        let mut data = PartitionIter::new(&self.data);
        let mut count = 0u64;
        for block in &self.summary.blocks {
            for entry in self.index.block(block)? {
                let position = data.bytes_read();
                let Some(partition) = data.next() else {
                    let reason = "an Index entry points past the end of the data";
                    return Err(corrupt(index, block.offset, reason));
                };
                let (key, _) = partition?;
                if key != entry.key || position != entry.location.position {
                    let reason = format!(
                        "the Index entry of token {} does not match the partition at stream position {position}",
                        entry.key.token
                    );
                    return Err(corrupt(index, block.offset, reason));
                }
                count += 1;
            }
        }
        if data.next().is_some() {
            let reason = "the data holds partitions the Index does not list";
            return Err(corrupt(self.data.path(), 0, reason));
        }
        if count != self.stats().partitions {
            let reason = format!(
                "{count} partitions, the Statistics say {}",
                self.stats().partitions
            );
            return Err(corrupt(self.data.path(), 0, reason));
        }
        Ok(())
    }
}

/// Keeps a corruption in `problems`; other errors (I/O) end the check.
fn keep_corruption(problems: &mut Vec<StorageError>, result: Result<()>) -> Result<()> {
    match result {
        Err(error @ StorageError::Corrupt { .. }) => {
            problems.push(error);
            Ok(())
        }
        other => other,
    }
}
