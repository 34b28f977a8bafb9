use super::*;
use crate::literal::parse_timestamp;

/// Values Cassandra 5.0.4 gives on Java 17 (tzdb 2025a), whose zone names resolve as
/// java.time resolves them: `PST` and `PDT` are both `America/Los_Angeles`, `BST` is
/// Bougainville, `IST` Dublin, `ACST` Acre.
#[test]
fn named_zones_read_as_cassandra_reads_them() {
    for (s, expected) in [
        ("2024-01-02 03:04 PST", 1704193440000),
        ("2024-07-02 03:04:05 PST", 1719914645000),
        ("2024-07-02 03:04 PDT", 1719914640000),
        ("2024-01-02 03:04 PDT", 1704193440000),
        ("2024-01-02 03:04:05 Europe/Paris", 1704161045000),
        ("2024-01-02 03:04 Pacific Standard Time", 1704193440000),
        ("2024-01-02 03:04 CET", 1704161040000),
        ("1900-01-02 03:04 CET", -2208891921000),
        ("2024-01-02 IST", 1704153600000),
        ("2024-01-02 03:04 BST", 1704125040000),
        ("2024-01-02 03:04 ACST", 1704182640000),
        ("2024-01-02T03:04:05.123456789 Asia/Calcutta", 1704144845123),
        ("2024-01-02 03:04 Réunion Time", 1704150240000),
        ("2024-01-02 03:04 Zulu", 1704164640000),
        ("2024-01-02 03:04 Z", 1704164640000),
        ("+10000-01-02 PST", 253402416000000),
        ("12345-07-02 03:04 Europe/Paris", 327419111040000),
        ("2024-07-02 03:04 SystemV/PST8PDT", 1719914640000),
        ("2024-10-28 12:00 SystemV/PST8PDT", 1730145600000),
        ("2024-07-02 03:04 SystemV/HST10", 1719925440000),
    ] {
        assert_eq!(parse_timestamp(s), Ok(expected), "{s}");
    }
}

/// In a gap the local time moves later by the gap; in an overlap the earlier offset counts.
#[test]
fn gaps_and_overlaps_take_the_offset_before() {
    for (s, expected) in [
        ("2024-03-10 02:30 America/New_York", 1710055800000),
        ("2024-11-03 01:30 EST", 1730611800000),
        ("2024-03-31 02:30 Europe/Paris", 1711848600000),
        ("2024-10-27 02:30 Europe/Paris", 1729989000000),
    ] {
        assert_eq!(parse_timestamp(s), Ok(expected), "{s}");
    }
}

#[test]
fn zone_grammar() {
    let time = |s| parse(s, After::Time);
    assert_eq!(time(""), Some(Zone::Fixed(0)));
    assert_eq!(time("+0130"), Some(Zone::Fixed(5400)));
    assert_eq!(time("-01:30"), Some(Zone::Fixed(-5400)));
    assert_eq!(time(" +01:00:30"), Some(Zone::Fixed(3630)));
    assert_eq!(time(" GMT"), Some(Zone::Fixed(0)));
    assert_eq!(time(" PST"), Some(Zone::Named("America/Los_Angeles")));
    assert_eq!(time(" Europe/Paris"), Some(Zone::Named("Europe/Paris")));
    for refused in [
        "+01:00:30",
        " +1",
        " GMT+01",
        " UTZ",
        "PST",
        " PST8",
        "+19",
        "+1é2",
        " +é1",
        " GMT+é:00",
        " SystemV/é8",
    ] {
        assert_eq!(time(refused), None, "{refused:?}");
    }
    let iso = |s| parse(s, After::IsoDate);
    assert_eq!(iso(""), Some(Zone::Fixed(0)));
    assert_eq!(iso("+01:00:30"), Some(Zone::Fixed(3630)));
    assert_eq!(iso("+01"), None);
    assert_eq!(iso(" PST"), None);
}

/// Every zone the name table names has rules.
#[test]
fn every_named_zone_has_rules() {
    for (name, id) in ZONE_NAMES {
        let zone = Zone::Named(id);
        assert!(zone.offset_seconds(19_724, 0).is_some(), "{name} -> {id}");
    }
    let sorted = ZONE_NAMES
        .windows(2)
        .all(|w| w[0].0.as_bytes() < w[1].0.as_bytes());
    assert!(
        sorted,
        "the name table must stay sorted for its binary search"
    );
}
