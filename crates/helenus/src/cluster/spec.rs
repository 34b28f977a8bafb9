//! What a local cluster is made of (recorded in `cluster.json`): its name, its settings and
//! its nodes with their addresses, data centers and racks; and finding a node by number or
//! address.

use std::net::{IpAddr, Ipv4Addr, SocketAddr};

use config::{Location, Snitch};
use serde::{Deserialize, Serialize};

use super::args::Shape;

const DEFAULT_NODES: u32 = 3;
const MAX_NODES: u32 = 1000;
const DEFAULT_SEEDS: u32 = 3;
const DEFAULT_NUM_TOKENS: u32 = 16;
const DEFAULT_NAME: &str = "Test Cluster";
const DEFAULT_ADDRESS: Ipv4Addr = Ipv4Addr::LOCALHOST;

/// A cluster as `cluster.json` records it.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct ClusterSpec {
    pub name: String,
    pub num_tokens: u32,
    /// Racks per data center.
    pub racks: u32,
    pub datacenters: u32,
    /// The seeds' listen addresses.
    pub seeds: Vec<IpAddr>,
    /// Extra cassandra.yaml lines given with `--yaml`, reused for added nodes.
    pub yaml: String,
    pub nodes: Vec<NodeSpec>,
}

/// One node: its number (directory `node<number>`), listen address and place in the cluster,
/// and where its CQL and admin API listen once its cassandra.yaml is read.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
pub struct NodeSpec {
    pub number: u32,
    pub address: IpAddr,
    pub dc: String,
    pub rack: String,
    pub native: SocketAddr,
    pub admin: SocketAddr,
}

impl NodeSpec {
    pub fn name(&self) -> String {
        format!("node{}", self.number)
    }
}

/// A node's number, address and place, before its configuration is written.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    pub number: u32,
    pub address: IpAddr,
    pub dc: String,
    pub rack: String,
}

/// A new cluster: its settings (no nodes yet) and where its nodes go.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub cluster: ClusterSpec,
    pub placements: Vec<Placement>,
}

impl Plan {
    /// Checks the options and places the nodes: consecutive addresses from `--address`, data
    /// centers as blocks of consecutive nodes, racks round-robin within each data center.
    pub fn new(shape: &Shape) -> Result<Plan, String> {
        let nodes = shape.nodes.unwrap_or(DEFAULT_NODES);
        let racks = shape.racks.unwrap_or(1);
        let datacenters = shape.datacenters.unwrap_or(1);
        let seeds = shape.seeds.unwrap_or(DEFAULT_SEEDS.min(nodes));
        check_range("--nodes", nodes, 1, MAX_NODES)?;
        check_range("--racks", racks, 1, MAX_NODES)?;
        check_range("--datacenters", datacenters, 1, nodes)?;
        check_range("--seeds", seeds, 1, nodes)?;
        let first = shape.address.unwrap_or(IpAddr::V4(DEFAULT_ADDRESS));
        let snitch = snitch_for(racks, datacenters);
        let placements = (0..nodes)
            .map(|i| {
                let (dc, rack) = place(i, nodes, datacenters, racks);
                Ok(Placement {
                    number: i + 1,
                    address: nth_address(first, i)?,
                    dc: dc_name(snitch, dc),
                    rack: rack_name(snitch, rack),
                })
            })
            .collect::<Result<Vec<_>, String>>()?;
        let cluster = ClusterSpec {
            name: shape.name.clone().unwrap_or_else(|| DEFAULT_NAME.into()),
            num_tokens: shape.num_tokens.unwrap_or(DEFAULT_NUM_TOKENS),
            racks,
            datacenters,
            seeds: placements[..seeds as usize]
                .iter()
                .map(|p| p.address)
                .collect(),
            yaml: shape.yaml.clone().unwrap_or_default(),
            nodes: Vec::new(),
        };
        Ok(Plan {
            cluster,
            placements,
        })
    }
}

fn check_range(option: &str, value: u32, min: u32, max: u32) -> Result<(), String> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(format!(
            "{option} must be between {min} and {max}, not {value}"
        ))
    }
}

/// SimpleSnitch for one data center of one rack, GossipingPropertyFileSnitch otherwise.
pub fn snitch_for(racks: u32, datacenters: u32) -> Snitch {
    if racks == 1 && datacenters == 1 {
        Snitch::Simple
    } else {
        Snitch::GossipingPropertyFile
    }
}

/// Zero-based data center and rack of node `i` of `nodes`: the first `nodes % datacenters`
/// data centers hold one node more than the others.
fn place(i: u32, nodes: u32, datacenters: u32, racks: u32) -> (u32, u32) {
    let size = nodes / datacenters;
    let larger = nodes % datacenters;
    let in_larger = larger * (size + 1);
    let (dc, position) = if i < in_larger {
        (i / (size + 1), i % (size + 1))
    } else {
        (larger + (i - in_larger) / size, (i - in_larger) % size)
    };
    (dc, position % racks)
}

fn dc_name(snitch: Snitch, dc: u32) -> String {
    match snitch {
        Snitch::Simple => Location::simple().data_center,
        Snitch::GossipingPropertyFile => format!("dc{}", dc + 1),
    }
}

fn rack_name(snitch: Snitch, rack: u32) -> String {
    match snitch {
        Snitch::Simple => Location::simple().rack,
        Snitch::GossipingPropertyFile => format!("rack{}", rack + 1),
    }
}

/// `first` plus `n` (IPv4 only: loopback has a single IPv6 address).
pub fn nth_address(first: IpAddr, n: u32) -> Result<IpAddr, String> {
    let IpAddr::V4(v4) = first else {
        return Err(format!(
            "--address must be an IPv4 address (nodes take consecutive addresses), not {first}"
        ));
    };
    u32::from(v4)
        .checked_add(n)
        .map(|a| IpAddr::V4(Ipv4Addr::from(a)))
        .ok_or_else(|| format!("no address {n} after {first}"))
}

impl ClusterSpec {
    pub fn snitch(&self) -> Snitch {
        snitch_for(self.racks, self.datacenters)
    }

    /// The node NODE names: its number (`2` or `node2`) or its address.
    pub fn find(&self, which: &str) -> Result<&NodeSpec, String> {
        let which = which.trim();
        let number = which.strip_prefix("node").unwrap_or(which).parse::<u32>();
        let address = which.parse::<IpAddr>();
        self.nodes
            .iter()
            .find(|n| Ok(n.number) == number || Ok(n.address) == address)
            .ok_or_else(|| format!("no node '{which}' in this cluster ({})", self.listing()))
    }

    fn listing(&self) -> String {
        let nodes: Vec<String> = self
            .nodes
            .iter()
            .map(|n| format!("{} {}", n.number, n.address))
            .collect();
        format!("nodes: {}", nodes.join(", "))
    }

    /// Where a node added now goes: the next number and address, the data center with the
    /// fewest nodes (or `dc`) and its rack with the fewest nodes (or `rack`).
    pub fn next_placement(
        &self,
        dc: Option<&str>,
        rack: Option<&str>,
    ) -> Result<Placement, String> {
        let snitch = self.snitch();
        if snitch == Snitch::Simple && (dc.is_some() || rack.is_some()) {
            return Err(
                "this cluster uses SimpleSnitch (one data center, one rack): --dc and --rack \
                 need a cluster started with --racks or --datacenters above 1"
                    .into(),
            );
        }
        let last = self.nodes.iter().max_by_key(|n| n.number);
        let highest = self.nodes.iter().map(|n| n.address).max();
        let (number, address) = match (last, highest) {
            (Some(last), Some(highest)) => (last.number + 1, nth_address(highest, 1)?),
            _ => (1, IpAddr::V4(DEFAULT_ADDRESS)),
        };
        let dc = dc.map_or_else(|| self.emptiest_dc(snitch), str::to_string);
        let rack = rack.map_or_else(|| self.emptiest_rack(snitch, &dc), str::to_string);
        Ok(Placement {
            number,
            address,
            dc,
            rack,
        })
    }

    fn emptiest_dc(&self, snitch: Snitch) -> String {
        let names = (0..self.datacenters).map(|i| dc_name(snitch, i));
        self.least_used(names, |n| &n.dc, |_| true)
    }

    fn emptiest_rack(&self, snitch: Snitch, dc: &str) -> String {
        let names = (0..self.racks).map(|i| rack_name(snitch, i));
        self.least_used(names, |n| &n.rack, |n| n.dc == dc)
    }

    /// The first of `names` held by the fewest nodes that pass `filter`.
    fn least_used(
        &self,
        names: impl Iterator<Item = String>,
        field: impl Fn(&NodeSpec) -> &String,
        filter: impl Fn(&NodeSpec) -> bool,
    ) -> String {
        let count = |name: &String| {
            let matching = self.nodes.iter().filter(|n| filter(n) && field(n) == name);
            matching.count()
        };
        names
            .map(|name| (count(&name), name))
            .min_by_key(|(used, _)| *used)
            .map(|(_, name)| name)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(shape: Shape) -> Plan {
        Plan::new(&shape).unwrap_or_else(|e| panic!("{e}"))
    }

    fn places(plan: &Plan) -> Vec<String> {
        plan.placements
            .iter()
            .map(|p| format!("{} {} {}/{}", p.number, p.address, p.dc, p.rack))
            .collect()
    }

    #[test]
    fn three_nodes_by_default_on_one_rack() {
        let plan = plan(Shape::default());
        assert_eq!(
            places(&plan),
            [
                "1 127.0.0.1 datacenter1/rack1",
                "2 127.0.0.2 datacenter1/rack1",
                "3 127.0.0.3 datacenter1/rack1"
            ]
        );
        assert_eq!(plan.cluster.seeds.len(), 3);
        assert_eq!(
            (plan.cluster.name.as_str(), plan.cluster.num_tokens),
            ("Test Cluster", 16)
        );
    }

    #[test]
    fn racks_round_robin_within_data_center_blocks() {
        let plan = plan(Shape {
            nodes: Some(5),
            racks: Some(2),
            datacenters: Some(2),
            address: Some("127.0.12.1".parse().unwrap()),
            seeds: Some(1),
            ..Shape::default()
        });
        assert_eq!(
            places(&plan),
            [
                "1 127.0.12.1 dc1/rack1",
                "2 127.0.12.2 dc1/rack2",
                "3 127.0.12.3 dc1/rack1",
                "4 127.0.12.4 dc2/rack1",
                "5 127.0.12.5 dc2/rack2"
            ]
        );
        assert_eq!(
            plan.cluster.seeds,
            vec!["127.0.12.1".parse::<IpAddr>().unwrap()]
        );
    }

    #[test]
    fn addresses_carry_into_the_next_octet() {
        let plan = plan(Shape {
            nodes: Some(2),
            address: Some("127.0.10.255".parse().unwrap()),
            ..Shape::default()
        });
        assert_eq!(plan.placements[1].address.to_string(), "127.0.11.0");
        assert_eq!(plan.cluster.seeds.len(), 2, "min(3, nodes) seeds");
    }

    #[test]
    fn bad_shapes_are_refused() {
        let err = |shape: Shape| Plan::new(&shape).unwrap_err();
        assert_eq!(
            err(Shape {
                nodes: Some(0),
                ..Shape::default()
            }),
            "--nodes must be between 1 and 1000, not 0"
        );
        assert_eq!(
            err(Shape {
                nodes: Some(2),
                datacenters: Some(3),
                ..Shape::default()
            }),
            "--datacenters must be between 1 and 2, not 3"
        );
        assert!(err(Shape {
            seeds: Some(4),
            ..Shape::default()
        })
        .starts_with("--seeds"));
        assert!(err(Shape {
            address: Some("::1".parse().unwrap()),
            ..Shape::default()
        })
        .contains("IPv4"));
        assert!(err(Shape {
            address: Some("255.255.255.255".parse().unwrap()),
            ..Shape::default()
        })
        .starts_with("no address 1 after"));
    }

    fn spec(shape: Shape) -> ClusterSpec {
        let plan = plan(shape);
        let nodes = plan
            .placements
            .iter()
            .map(|p| NodeSpec {
                number: p.number,
                address: p.address,
                dc: p.dc.clone(),
                rack: p.rack.clone(),
                native: SocketAddr::new(p.address, 9042),
                admin: SocketAddr::new(p.address, 7199),
            })
            .collect();
        ClusterSpec {
            nodes,
            ..plan.cluster
        }
    }

    #[test]
    fn nodes_are_found_by_number_name_or_address() {
        let spec = spec(Shape::default());
        for which in ["2", "node2", "127.0.0.2", " 2 "] {
            assert_eq!(spec.find(which).map(|n| n.number), Ok(2), "{which}");
        }
        assert_eq!(
            spec.find("4").unwrap_err(),
            "no node '4' in this cluster (nodes: 1 127.0.0.1, 2 127.0.0.2, 3 127.0.0.3)"
        );
        assert!(spec.find("127.0.0.9").is_err());
        assert!(spec.find("node").is_err());
    }

    #[test]
    fn added_nodes_fill_the_emptiest_data_center_and_rack() {
        let spec = spec(Shape {
            nodes: Some(3),
            racks: Some(2),
            datacenters: Some(2),
            ..Shape::default()
        });
        let next = spec.next_placement(None, None).unwrap();
        assert_eq!(
            (
                next.number,
                next.address.to_string(),
                next.dc.as_str(),
                next.rack.as_ref()
            ),
            (4, "127.0.0.4".to_string(), "dc2", "rack2")
        );
        let chosen = spec.next_placement(Some("dc3"), None).unwrap();
        assert_eq!((chosen.dc.as_str(), chosen.rack.as_ref()), ("dc3", "rack1"));
        let simple = self::spec(Shape::default());
        assert!(simple.next_placement(Some("dc2"), None).is_err());
        assert_eq!(simple.next_placement(None, None).unwrap().rack, "rack1");
    }
}
