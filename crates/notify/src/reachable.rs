//! Which addresses a webhook may reach: those the IANA special-purpose address registries
//! (RFC 6890) leave globally reachable, and nothing else.
//!
//! - IPv4: outside every block of the IPv4 registry not marked globally reachable, and
//!   outside multicast (`224.0.0.0/4`, which that registry does not list). A block inside
//!   such a block is refused with it, whatever its own mark (`192.0.0.9/32` sits in
//!   `192.0.0.0/24`).
//! - IPv6: only global unicast (`2000::/3`), outside every block of the IPv6 registry not
//!   marked globally reachable. 6to4 (`2002::/16`) and Teredo (`2001::/32`) carry an IPv4
//!   address a relay would reach on the sender's behalf, and are refused outright, as is
//!   the deprecated site-local `fec0::/10`.
//! - An IPv4 address mapped into IPv6 (`::ffff:a.b.c.d`) or translated by the well-known
//!   NAT64 prefix (`64:ff9b::a.b.c.d`) is judged as that IPv4 address.
//!
//! The tables are the registries' rows; `tests/special_addresses.rs` checks them against
//! the registries' own CSV files, row by row.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// An IPv4 block: its first address and prefix length.
type V4Block = (Ipv4Addr, u8);
/// An IPv6 block: its first address and prefix length.
type V6Block = (Ipv6Addr, u8);

const fn v4(a: u8, b: u8, c: u8, d: u8, prefix: u8) -> V4Block {
    (Ipv4Addr::new(a, b, c, d), prefix)
}

/// An IPv6 block whose first address has only its three leading groups set.
const fn v6(first: u16, second: u16, third: u16, prefix: u8) -> V6Block {
    (Ipv6Addr::new(first, second, third, 0, 0, 0, 0, 0), prefix)
}

/// The IPv4 registry's blocks that are not globally reachable (its "Globally Reachable"
/// column anything but `True`, a terminated entry's empty one too), and multicast.
const V4_REFUSED: &[V4Block] = &[
    v4(0, 0, 0, 0, 8),
    v4(0, 0, 0, 0, 32),
    v4(10, 0, 0, 0, 8),
    v4(100, 64, 0, 0, 10),
    v4(127, 0, 0, 0, 8),
    v4(169, 254, 0, 0, 16),
    v4(172, 16, 0, 0, 12),
    v4(192, 0, 0, 0, 24),
    v4(192, 0, 0, 0, 29),
    v4(192, 0, 0, 8, 32),
    v4(192, 0, 0, 170, 32),
    v4(192, 0, 0, 171, 32),
    v4(192, 0, 2, 0, 24),
    v4(192, 88, 99, 0, 24),
    v4(192, 88, 99, 2, 32),
    v4(192, 168, 0, 0, 16),
    v4(198, 18, 0, 0, 15),
    v4(198, 51, 100, 0, 24),
    v4(203, 0, 113, 0, 24),
    v4(240, 0, 0, 0, 4),
    v4(255, 255, 255, 255, 32),
    // Multicast (RFC 5771): a group, not a receiver.
    v4(224, 0, 0, 0, 4),
];

/// Global unicast: the only IPv6 space a webhook may reach.
const V6_GLOBAL_UNICAST: V6Block = v6(0x2000, 0, 0, 3);

/// The IPv6 registry's blocks inside global unicast that are not globally reachable
/// (6to4's and Teredo's `N/A` counts as not), beside which `2001::/23` refuses Teredo.
const V6_REFUSED: &[V6Block] = &[
    v6(0x2001, 0, 0, 23),
    v6(0x2001, 0, 0, 32),
    v6(0x2001, 0x2, 0, 48),
    v6(0x2001, 0x10, 0, 28),
    v6(0x2001, 0xdb8, 0, 32),
    v6(0x2002, 0, 0, 16),
    v6(0x3fff, 0, 0, 20),
    v6(0x5f00, 0, 0, 16),
];

/// The well-known NAT64 prefix (RFC 6052): its last 32 bits are an IPv4 address.
const NAT64: V6Block = v6(0x64, 0xff9b, 0, 96);

fn in_v4(ip: Ipv4Addr, (network, prefix): V4Block) -> bool {
    let mask = u32::MAX.checked_shl(32 - u32::from(prefix)).unwrap_or(0);
    u32::from(ip) & mask == u32::from(network) & mask
}

fn in_v6(ip: Ipv6Addr, (network, prefix): V6Block) -> bool {
    let mask = u128::MAX.checked_shl(128 - u32::from(prefix)).unwrap_or(0);
    u128::from(ip) & mask == u128::from(network) & mask
}

/// Whether deliveries may go to `ip`: see the module's rules.
pub fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(ip) => !V4_REFUSED.iter().any(|block| in_v4(ip, *block)),
        IpAddr::V6(ip) => {
            if let Some(mapped) = ip.to_ipv4_mapped() {
                return is_public(IpAddr::V4(mapped));
            }
            if in_v6(ip, NAT64) {
                let [.., a, b, c, d] = ip.octets();
                return is_public(IpAddr::V4(Ipv4Addr::new(a, b, c, d)));
            }
            in_v6(ip, V6_GLOBAL_UNICAST) && !V6_REFUSED.iter().any(|block| in_v6(ip, *block))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::is_public;

    fn public(text: &str) -> bool {
        is_public(text.parse().unwrap())
    }

    #[test]
    fn what_the_review_found_open_is_closed() {
        for refused in [
            "2002:7f00:1::1",     // 6to4 of 127.0.1.0
            "2002:0808:0808::1",  // 6to4 even of a public IPv4: a relay would reach it
            "::ffff:0:7f00:1",    // IPv4-translated (::ffff:0:0:0/96) 127.0.0.1
            "::ffff:0:808:808",   // … of a public one: not global unicast
            "2001:0:4136:e378::", // Teredo
            "fec0::1",            // site-local
            "100::1",             // discard-only
            "192.88.99.1",        // 6to4 relay anycast
            "64:ff9b::7f00:1",    // NAT64 of 127.0.0.1
            "64:ff9b:1::808:808", // local-use NAT64
            "::1.1.1.1",          // IPv4-compatible, deprecated
            "::ffff:10.0.0.1",
            "224.0.0.251",
            "ff02::1",
        ] {
            assert!(!public(refused), "{refused}");
        }
        for allowed in
            ["1.1.1.1", "2606:4700:4700::1111", "::ffff:1.1.1.1", "64:ff9b::1.1.1.1", "192.31.196.1"]
        {
            assert!(public(allowed), "{allowed}");
        }
    }
}
