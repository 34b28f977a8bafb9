//! Quantities printed as Cassandra prints them.

/// Cassandra's `FBUtilities.prettyPrintMemory`: bytes below 1 KiB, else three decimals of the
/// largest binary unit (rounded half up, as Java's `%.3f`).
pub fn pretty_memory(bytes: u64) -> String {
    const UNITS: [char; 6] = ['K', 'M', 'G', 'T', 'P', 'E'];
    let prefix = (63 - bytes.max(1).leading_zeros()) / 10;
    if prefix == 0 {
        return format!("{bytes}B");
    }
    let scale = 1u128 << (10 * prefix);
    let thousandths = (u128::from(bytes) * 1000 + scale / 2) / scale;
    let unit = UNITS[prefix as usize - 1];
    format!("{}.{:03}{unit}iB", thousandths / 1000, thousandths % 1000)
}
