//! The one form a webfetch URL is judged in and fetched from.
//!
//! Every spelling of an address is first parsed as the WHATWG URL standard
//! says (the `url` crate, which reqwest also uses): scheme and host
//! lower-cased, percent-encoding and IDNA mapping in the host undone, the
//! IPv4 number forms (`127.1`, `2130706433`, `0x7f.1`, `017700000001`, a
//! trailing dot) written as a dotted quad, the default port dropped, IPv6
//! zone ids refused. Then the address is written as the network stack will
//! reach it:
//!
//! - an IPv4-mapped IPv6 address (`[::ffff:127.0.0.1]`, `[::ffff:7f00:1]`)
//!   is the IPv4 address a dual-stack socket connects to;
//! - an IPv4-compatible one (`[::127.0.0.1]`, deprecated by RFC 4291) is
//!   that IPv4 address too (`[::]` and `[::1]` are not of this form);
//! - the unspecified address (`0.0.0.0`, `0`, `[::]`) is the loopback
//!   address Linux connects it to (`127.0.0.1`, `[::1]`);
//! - a name loses its trailing dot;
//! - user info and the fragment are not part of where the request goes.
//!
//! The fetch then uses this very URL (with the user info put back for the
//! `Authorization` header): nothing parses the text a second time, so the
//! address judged is the address connected to.
//!
//! A name is judged as a name: what a DNS name resolves to is not known when
//! the rules are asked, so a rule for an address does not cover a name that
//! resolves to it. The one exception is `localhost` and `*.localhost`,
//! which RFC 6761 reserves for loopback: their patterns also carry
//! `127.0.0.1` and `[::1]`, as do those of every loopback address
//! (`127.0.0.2`, `[::1]`; see [`loopback_aliases`]).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use reqwest::Url;

/// A URL as it will be fetched, and its canonical form (the one the rules
/// are asked about).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Judged {
    /// The canonical form with the user info of the URL given, if any: the
    /// URL handed to the HTTP client.
    pub(crate) fetch: Url,
    /// The canonical form: no user info, no fragment, the host as the
    /// network stack reaches it.
    pub(crate) canonical: Url,
}

/// Why a URL cannot be judged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Unjudged {
    /// Not a URL under the WHATWG rules (includes IPv6 zone ids).
    Invalid(String),
    /// Not http or https.
    Scheme,
}

/// Parses `text` and writes it in its canonical form.
pub(crate) fn judge(text: &str) -> Result<Judged, Unjudged> {
    let url = Url::parse(text).map_err(|error| Unjudged::Invalid(error.to_string()))?;
    judge_url(url)
}

/// Writes an already parsed URL (a redirect target) in its canonical form.
pub(crate) fn judge_url(url: Url) -> Result<Judged, Unjudged> {
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Unjudged::Scheme);
    }
    let mut canonical = url.clone();
    // Each rewrite can only make the host shorter or turn it into an
    // address; a handful of rounds reach the fixed point ("127.0.0.1.." is
    // a name, "127.0.0.1." after one round, then an address).
    for _ in 0..8 {
        let next = canonical_host(&canonical);
        if next == canonical {
            break;
        }
        canonical = next;
    }
    if canonical.host().is_none() {
        return Err(Unjudged::Invalid("the URL has no host".to_string()));
    }
    let _ = canonical.set_username("");
    let _ = canonical.set_password(None);
    canonical.set_fragment(None);
    let mut fetch = canonical.clone();
    if !url.username().is_empty() {
        let _ = fetch.set_username(url.username());
    }
    if url.password().is_some() {
        let _ = fetch.set_password(url.password());
    }
    Ok(Judged { fetch, canonical })
}

/// A parsed URL's host.
enum Host<'a> {
    Ipv4(Ipv4Addr),
    Ipv6(Ipv6Addr),
    Name(&'a str),
}

/// The host of a parsed URL. The WHATWG serialisation writes an IPv4 host
/// as a dotted quad and an IPv6 host in brackets, and a name is never
/// either (a name that reads as an IPv4 number is parsed as one), so the
/// text tells them apart.
fn host(url: &Url) -> Option<Host<'_>> {
    let text = url.host_str()?;
    if let Some(inner) = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        return inner.parse().ok().map(Host::Ipv6);
    }
    Some(match text.parse() {
        Ok(address) => Host::Ipv4(address),
        Err(_) => Host::Name(text),
    })
}

/// One round of host rewriting (see the module doc).
fn canonical_host(url: &Url) -> Url {
    let mut next = url.clone();
    match host(url) {
        Some(Host::Ipv4(address)) => {
            let _ = next.set_ip_host(IpAddr::V4(reached_v4(address)));
        }
        Some(Host::Ipv6(address)) => {
            let _ = next.set_ip_host(reached_v6(address));
        }
        Some(Host::Name(name)) => {
            if let Some(bare) = name.strip_suffix('.')
                && !bare.is_empty()
            {
                // set_host parses again: "127.0.0.1." became a name only
                // because of the dot, and is an address without it.
                let _ = next.set_host(Some(bare));
            }
        }
        None => {}
    }
    next
}

/// The IPv4 address a connection to `address` reaches.
fn reached_v4(address: Ipv4Addr) -> Ipv4Addr {
    if address.is_unspecified() {
        Ipv4Addr::LOCALHOST
    } else {
        address
    }
}

/// The address a connection to the IPv6 `address` reaches.
fn reached_v6(address: Ipv6Addr) -> IpAddr {
    if let Some(v4) = address.to_ipv4_mapped() {
        return IpAddr::V4(reached_v4(v4));
    }
    let [high @ .., low_a, low_b] = address.segments();
    let embedded = (u32::from(low_a) << 16) | u32::from(low_b);
    if high == [0; 6] && embedded > 1 {
        // IPv4-compatible; `::` and `::1` are the IPv6 unspecified and
        // loopback addresses, not of this form.
        return IpAddr::V4(reached_v4(Ipv4Addr::from(embedded)));
    }
    if address.is_unspecified() {
        return IpAddr::V6(Ipv6Addr::LOCALHOST);
    }
    IpAddr::V6(address)
}

/// The loopback URLs a loopback host stands for: for a `localhost` or
/// `*.localhost` name (RFC 6761), any `127.0.0.0/8` address and `[::1]`,
/// the canonical URL with `127.0.0.1` and with `[::1]` as its host (a
/// service listening on every address answers on all of them, so a rule
/// for `http://127.0.0.1*` must cover them). Empty for any other host.
pub(crate) fn loopback_aliases(canonical: &Url) -> Vec<Url> {
    let loopback = match host(canonical) {
        Some(Host::Name(name)) => name == "localhost" || name.ends_with(".localhost"),
        Some(Host::Ipv4(address)) => address.is_loopback(),
        Some(Host::Ipv6(address)) => address.is_loopback(),
        None => false,
    };
    if !loopback {
        return Vec::new();
    }
    [
        IpAddr::V4(Ipv4Addr::LOCALHOST),
        IpAddr::V6(Ipv6Addr::LOCALHOST),
    ]
    .into_iter()
    .filter_map(|address| {
        let mut alias = canonical.clone();
        alias.set_ip_host(address).ok().map(|()| alias)
    })
    .collect()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use proptest::prelude::*;

    fn canonical(text: &str) -> String {
        judge(text)
            .map(|judged| judged.canonical.to_string())
            .unwrap_or_else(|error| format!("{error:?}"))
    }

    /// The URL std::net's address would be written as, for a connection to
    /// `address` on the default port: what every spelling must become.
    fn reached(address: IpAddr) -> String {
        let address = match address {
            IpAddr::V4(v4) if v4.is_unspecified() => IpAddr::V4(Ipv4Addr::LOCALHOST),
            IpAddr::V6(v6) if v6.is_unspecified() => IpAddr::V6(Ipv6Addr::LOCALHOST),
            other => other,
        };
        // SocketAddr's Display is std's own rendering of the destination.
        let socket = std::net::SocketAddr::new(address, 80).to_string();
        format!("http://{}/", socket.strip_suffix(":80").unwrap())
    }

    /// A number in a radix the WHATWG IPv4 parser accepts.
    fn number(value: u32, radix: u8) -> String {
        match radix % 4 {
            0 => value.to_string(),
            1 => format!("0x{value:x}"),
            2 => format!("0X{value:X}"),
            _ => format!("0{value:o}"),
        }
    }

    /// Every IPv4 spelling of `address` (host part only), `radixes`
    /// choosing the radix of each part.
    fn ipv4_spellings(address: Ipv4Addr, radixes: [u8; 4]) -> Vec<String> {
        let [a, b, c, d] = address.octets().map(u32::from);
        let whole = u32::from(address);
        let dotted = address.to_string();
        let mut hosts = vec![
            dotted.clone(),
            format!("{dotted}."),
            whole.to_string(),
            format!("0x{whole:x}"),
            format!("0X{whole:X}."),
            format!("0{whole:o}"),
            [a, b, c, d]
                .iter()
                .zip(radixes)
                .map(|(part, radix)| number(*part, radix))
                .collect::<Vec<_>>()
                .join("."),
            format!(
                "{}.{}.{}",
                number(a, radixes[0]),
                number(b, radixes[1]),
                number((c << 8) | d, radixes[2])
            ),
            format!(
                "{}.{}",
                number(a, radixes[3]),
                number((b << 16) | (c << 8) | d, radixes[0])
            ),
            dotted.bytes().map(|byte| format!("%{byte:02X}")).collect(),
            dotted
                .chars()
                .map(|ch| match ch {
                    '0'..='9' => char::from_u32(0xFF10 + (ch as u32 - '0' as u32)).unwrap(),
                    _ => '\u{3002}',
                })
                .collect(),
            format!("[::ffff:{dotted}]"),
            format!("[::FFFF:{:x}:{:x}]", whole >> 16, whole & 0xffff),
            format!(
                "[0000:0:0:0:0:ffff:{:04X}:{:04x}]",
                whole >> 16,
                whole & 0xffff
            ),
        ];
        if whole > 1 {
            hosts.push(format!("[::{dotted}]"));
            hosts.push(format!(
                "[0:0:0:0:0:0:{:x}:{:x}]",
                whole >> 16,
                whole & 0xffff
            ));
        }
        hosts
    }

    /// Every IPv6 spelling of `address` (host part only).
    fn ipv6_spellings(address: Ipv6Addr) -> Vec<String> {
        let segments = address.segments();
        let join =
            |render: fn(&u16) -> String| segments.iter().map(render).collect::<Vec<_>>().join(":");
        vec![
            format!("[{address}]"),
            format!("[{}]", join(|s| format!("{s:x}"))),
            format!("[{}]", join(|s| format!("{s:04X}"))),
            format!("[{}]", address.to_string().to_uppercase()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn every_ipv4_spelling_is_the_address_std_connects_to(
            raw in prop_oneof![any::<u32>(), 0u32..4, Just(0x7f00_0001)],
            radixes in any::<[u8; 4]>(),
            user in "[a-z0-9.]{0,8}",
            default_port in any::<bool>(),
        ) {
            let address = Ipv4Addr::from(raw);
            let expected = reached(IpAddr::V4(address));
            for host in ipv4_spellings(address, radixes) {
                let port = if default_port { ":80" } else { "" };
                let user = if user.is_empty() { String::new() } else { format!("{user}@") };
                let url = format!("hTTp://{user}{host}{port}/");
                let judged = canonical(&url);
                prop_assert_eq!(&judged, &expected, "{}", url);
                prop_assert_eq!(canonical(&judged), judged.clone(), "idempotent");
            }
        }

        #[test]
        fn every_ipv6_spelling_is_the_address_std_connects_to(raw in any::<u128>()) {
            let address = Ipv6Addr::from(raw);
            let expected = match address.to_ipv4_mapped() {
                Some(v4) => reached(IpAddr::V4(v4)),
                None => reached(IpAddr::V6(address)),
            };
            for host in ipv6_spellings(address) {
                let url = format!("http://{host}/");
                let judged = canonical(&url);
                prop_assert_eq!(&judged, &expected, "{}", url);
                prop_assert_eq!(canonical(&judged), judged.clone(), "idempotent");
            }
        }

        #[test]
        fn a_name_keeps_its_spelling_without_the_trailing_dot(
            name in "[a-z][a-z0-9-]{0,10}(\\.[a-z][a-z0-9-]{0,10}){0,3}",
            dots in 0usize..2,
        ) {
            // `xn--` starts a punycode label, which must decode (a name,
            // not a spelling, question).
            prop_assume!(!name.split('.').any(|label| label.starts_with("xn--")));
            let url = format!("https://{}{}/p", name.to_uppercase(), ".".repeat(dots));
            prop_assert_eq!(canonical(&url), format!("https://{name}/p"));
        }
    }

    #[test]
    fn the_ipv4_compatible_form_leaves_the_ipv6_loopback_alone() {
        assert_eq!(canonical("http://[::1]/"), "http://[::1]/");
        assert_eq!(canonical("http://[::]/"), "http://[::1]/");
        assert_eq!(canonical("http://[::127.0.0.1]:8/"), "http://127.0.0.1:8/");
        assert_eq!(canonical("http://0/"), "http://127.0.0.1/");
        assert_eq!(canonical("http://0.0.0.0:9/"), "http://127.0.0.1:9/");
        assert_eq!(canonical("http://127.0.0.1../"), "http://127.0.0.1/");
    }

    #[test]
    fn user_info_is_not_the_host() {
        let judged = judge("http://127.0.0.1@evil.example/x").unwrap();
        assert_eq!(judged.canonical.as_str(), "http://evil.example/x");
        let judged = judge("http://evil:pw@127.0.0.1/x#frag").unwrap();
        assert_eq!(judged.canonical.as_str(), "http://127.0.0.1/x");
        assert_eq!(judged.fetch.as_str(), "http://evil:pw@127.0.0.1/x");
    }

    #[test]
    fn zone_ids_other_schemes_and_no_host_are_refused() {
        assert!(matches!(
            judge("http://[fe80::1%25eth0]/"),
            Err(Unjudged::Invalid(_))
        ));
        assert!(matches!(
            judge("http://[fe80::1%eth0]/"),
            Err(Unjudged::Invalid(_))
        ));
        assert_eq!(judge("file:///etc/passwd"), Err(Unjudged::Scheme));
        assert_eq!(judge("ftp://127.0.0.1/"), Err(Unjudged::Scheme));
        assert!(judge("http://%5B::1%5D/").is_err());
        assert!(judge("http://256.0.0.1/").is_err());
    }

    #[test]
    fn loopback_hosts_carry_both_loopback_addresses() {
        for url in [
            "http://localhost:8/a",
            "http://LocalHost.:8/a",
            "http://x.localhost:8/a",
        ] {
            let judged = judge(url).unwrap();
            let aliases: Vec<String> = loopback_aliases(&judged.canonical)
                .iter()
                .map(Url::to_string)
                .collect();
            assert_eq!(
                aliases,
                ["http://127.0.0.1:8/a", "http://[::1]:8/a"],
                "{url}"
            );
        }
        for url in ["http://127.3.2.1:8/a", "http://[::1]:8/a", "http://0:8/a"] {
            let judged = judge(url).unwrap();
            let aliases: Vec<String> = loopback_aliases(&judged.canonical)
                .iter()
                .map(Url::to_string)
                .collect();
            assert_eq!(
                aliases,
                ["http://127.0.0.1:8/a", "http://[::1]:8/a"],
                "{url}"
            );
        }
        for url in [
            "http://localhost.example/",
            "http://10.0.0.1/",
            "http://[::2]/",
        ] {
            let judged = judge(url).unwrap();
            assert!(loopback_aliases(&judged.canonical).is_empty(), "{url}");
        }
    }
}
