//! `notify::reachable::is_public` against IANA's special-purpose address registries, row by
//! row, read from the registries' own CSV files (`tests/iana/`, see its SOURCE.txt).
//!
//! A row not marked globally reachable is refused at its first and its last address. A row
//! marked reachable is allowed unless it lies in a row that is not (the stricter reading:
//! an address inside any refused block is refused), or, in IPv6, outside global unicast;
//! the NAT64 prefix is judged by the IPv4 address it carries.

#![expect(clippy::unwrap_used, reason = "a registry that does not read fails the test")]

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use notify::reachable::is_public;

/// A block: its first and last address, as 128-bit numbers of one family.
#[derive(Debug, Clone, Copy)]
struct Block {
    v6: bool,
    first: u128,
    last: u128,
}

impl Block {
    fn parse(text: &str) -> Self {
        let (address, prefix) = text.trim().split_once('/').unwrap();
        let prefix: u32 = prefix.parse().unwrap();
        let ip: IpAddr = address.parse().unwrap();
        let (v6, first, bits) = match ip {
            IpAddr::V4(ip) => (false, u128::from(u32::from(ip)), 32),
            IpAddr::V6(ip) => (true, u128::from(ip), 128),
        };
        let host_bits = bits - prefix;
        let span = if host_bits == 128 { u128::MAX } else { (1u128 << host_bits) - 1 };
        Self { v6, first, last: first | span }
    }

    fn address(&self, n: u128) -> IpAddr {
        if self.v6 {
            IpAddr::V6(Ipv6Addr::from(n))
        } else {
            IpAddr::V4(Ipv4Addr::from(u32::try_from(n).unwrap()))
        }
    }

    fn holds(&self, other: u128) -> bool {
        (self.first..=self.last).contains(&other)
    }
}

/// One registry row: its blocks and whether it is marked globally reachable.
struct Row {
    name: String,
    blocks: Vec<Block>,
    reachable: bool,
}

fn rows(csv_text: &str) -> Vec<Row> {
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let (block, name, reachable) = (column("Address Block"), column("Name"), column("Globally Reachable"));
    reader
        .records()
        .map(|record| {
            let record = record.unwrap();
            // "192.0.0.0/24 [2]": a footnote mark; "a/32, b/32": two blocks in one cell.
            let blocks =
                record[block].split(',').map(|text| Block::parse(text.split(" [").next().unwrap())).collect();
            // "False [1]", "N/A [3]", "" (terminated): only a plain True is reachable.
            let flag = record[reachable].split(" [").next().unwrap().trim();
            Row { name: record[name].to_owned(), blocks, reachable: flag == "True" }
        })
        .collect()
}

fn registry(file: &str) -> Vec<Row> {
    let path = format!("{}/tests/iana/{file}", env!("CARGO_MANIFEST_DIR"));
    rows(&std::fs::read_to_string(path).unwrap())
}

/// What the rules say of `address`, from the registry alone.
fn expected(rows: &[Row], address: IpAddr) -> bool {
    let n = match address {
        IpAddr::V4(ip) => u128::from(u32::from(ip)),
        IpAddr::V6(ip) => u128::from(ip),
    };
    let refused = rows.iter().filter(|row| !row.reachable).flat_map(|row| &row.blocks);
    let in_refused = refused.into_iter().any(|block| block.v6 == address.is_ipv6() && block.holds(n));
    let global_unicast = !address.is_ipv6() || n >> 125 == 0b001;
    !in_refused && global_unicast
}

#[test]
fn every_ipv4_row_is_judged_by_its_mark() {
    let rows = registry("ipv4-special-registry.csv");
    assert_eq!(rows.iter().map(|row| row.blocks.len()).sum::<usize>(), 26, "26 blocks in 25 rows");
    for row in &rows {
        for block in &row.blocks {
            for address in [block.address(block.first), block.address(block.last)] {
                let want = row.reachable && expected(&rows, address);
                assert_eq!(is_public(address), want, "{address} of {:?}", row.name);
                // The same address mapped into IPv6 is judged as itself.
                let IpAddr::V4(v4) = address else { unreachable!() };
                assert_eq!(is_public(IpAddr::V6(v4.to_ipv6_mapped())), want, "::ffff:{address}");
            }
        }
    }
    // Reachable rows that are: AS112, AMT, the direct delegation AS112 service.
    assert_eq!(
        rows.iter()
            .filter(|row| row.reachable && is_public(row.blocks[0].address(row.blocks[0].first)))
            .count(),
        3
    );
}

#[test]
fn every_ipv6_row_is_judged_by_its_mark() {
    let rows = registry("ipv6-special-registry.csv");
    assert_eq!(rows.len(), 25);
    let nat64 = Block::parse("64:ff9b::/96");
    for row in &rows {
        for block in &row.blocks {
            for n in [block.first, block.last] {
                let address = block.address(n);
                if nat64.holds(n) {
                    // Judged as the IPv4 address in its last 32 bits: 0.0.0.0 and
                    // 255.255.255.255, both refused.
                    assert!(!is_public(address), "{address}");
                    continue;
                }
                let want = row.reachable && expected(&rows, address);
                assert_eq!(is_public(address), want, "{address} of {:?}", row.name);
            }
        }
    }
    // Of the rows marked reachable, only the AS112 delegation lies in global unicast
    // outside every refused block.
    let reachable: Vec<&str> = rows
        .iter()
        .filter(|row| row.reachable && !nat64.holds(row.blocks[0].first))
        .filter(|row| is_public(row.blocks[0].address(row.blocks[0].first)))
        .map(|row| row.name.as_str())
        .collect();
    assert_eq!(reachable, ["Direct Delegation AS112 Service"]);
}

#[test]
fn nat64_and_mapped_forms_are_their_ipv4_address() {
    let v4_rows = registry("ipv4-special-registry.csv");
    for row in &v4_rows {
        for block in &row.blocks {
            let IpAddr::V4(inner) = block.address(block.first) else { unreachable!() };
            let [a, b, c, d] = inner.octets();
            let nat64 = Ipv6Addr::new(
                0x64,
                0xff9b,
                0,
                0,
                0,
                0,
                u16::from_be_bytes([a, b]),
                u16::from_be_bytes([c, d]),
            );
            assert_eq!(is_public(IpAddr::V6(nat64)), is_public(IpAddr::V4(inner)), "{nat64}");
        }
    }
    assert!(is_public("64:ff9b::8.8.8.8".parse().unwrap()));
    assert!(!is_public("64:ff9b::10.0.0.1".parse().unwrap()));
}

#[test]
fn outside_global_unicast_nothing_is_reached() {
    for refused in
        ["fec0::1", "fc00::1", "fe80::1", "ff0e::1", "::", "::1", "::8.8.8.8", "4000::1", "1fff::1"]
    {
        assert!(!is_public(refused.parse().unwrap()), "{refused}");
    }
}
