//! Compaction: strategies that choose what to merge (size-tiered, leveled, time-window, unified) and the task that merges.
