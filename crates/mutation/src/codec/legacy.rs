//! The first row encoding (fixed-width lengths, timestamps and expiry on every cell), which
//! commit logs, SSTables, hints and batchlogs written before the compact form still hold.
//! Only decoded: [`super::row`] writes every new row compactly. A legacy row opens with its
//! clustering's `u32` length, whose first byte is below 0x80 (clusterings are far shorter
//! than 2 GiB), which is how [`Reader::row`] tells the two apart.

use super::{CellView, DecodeError, Reader, HAS_PATH, HAS_VALUE, IS_COUNTER};
use crate::model::{ColumnData, ColumnValue, ComplexColumn, LivenessInfo, Row};

impl<'a> Reader<'a> {
    pub(super) fn legacy_row(&mut self) -> Result<Row, DecodeError> {
        let clustering = self.bytes()?;
        let liveness = if self.flag()? {
            Some(LivenessInfo {
                timestamp: self.i64()?,
                ttl: self.i32()?,
                local_expiration_time: self.i32()?,
            })
        } else {
            None
        };
        let deletion = self.deletion()?;
        let mut columns = Vec::new();
        for _ in 0..self.len()? {
            columns.push(self.legacy_column()?);
        }
        Ok(Row {
            clustering,
            liveness,
            deletion,
            columns,
        })
    }

    fn legacy_column(&mut self) -> Result<ColumnData, DecodeError> {
        let name = self.bytes()?;
        let value = if self.flag()? {
            let deletion = self.deletion()?;
            let mut cells = Vec::new();
            for _ in 0..self.len()? {
                cells.push(self.legacy_cell()?.to_cell());
            }
            ColumnValue::Complex(ComplexColumn { deletion, cells })
        } else {
            ColumnValue::Simple(self.legacy_cell()?.to_cell())
        };
        Ok(ColumnData { name, value })
    }

    pub(super) fn legacy_cell(&mut self) -> Result<CellView<'a>, DecodeError> {
        let flags = self.u8()?;
        if flags & !(HAS_VALUE | HAS_PATH | IS_COUNTER) != 0 {
            return Err(DecodeError("invalid cell flags"));
        }
        let timestamp = self.i64()?;
        let ttl = self.i32()?;
        let local_deletion_time = self.i32()?;
        let value = (flags & HAS_VALUE != 0)
            .then(|| self.len_slice())
            .transpose()?;
        let path = (flags & HAS_PATH != 0)
            .then(|| self.len_slice())
            .transpose()?;
        CellView::checked(flags, timestamp, (ttl, local_deletion_time), (value, path))
    }
}
